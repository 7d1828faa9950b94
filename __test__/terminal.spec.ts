import { execFileSync, spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Terminal } from '../index'
import { addon, engine, eventually, git, gitProject, IMAGES, isRemote, rejection, suiteRuntime, tempDir } from './helpers'

const { runtime, baseDir, cleanup } = suiteRuntime('terminal')
const engineRuntime = new addon.DockerRuntime({ engine, image: IMAGES.debian, baseDir, agent: false })
afterAll(cleanup)

/** Everything a terminal writes, as it comes. */
function screen(terminal: Terminal) {
  const chunks: Buffer[] = []
  terminal.onData((chunk) => chunks.push(chunk))
  const bytes = () => Buffer.concat(chunks)
  return {
    bytes,
    text: () => bytes().toString('latin1'),
    until: (needle: string, ms = 15_000) => eventually(`${JSON.stringify(needle)} on the terminal`, () => bytes().includes(needle), ms),
  }
}

async function ps(id: string) {
  return (await runtime.exec(id, { command: ['ps', '-eo', 'args'] })).stdout
}

for (const agent of [true, false]) {
  const label = agent ? ' (agent)' : ' (engine TTY exec)'
  const rt = agent ? runtime : engineRuntime

  describe(`DockerRuntime.terminal${label}`, () => {
    let id = ''
    beforeAll(async () => {
      id = await runtime.create({ image: IMAGES.debian, workingDirectory: '/', mounts: [] })
      await runtime.start(id)
    })

    it('carries every byte value both ways exactly', async () => {
      const terminal = await rt.terminal(id, { command: ['sh', '-c', 'stty raw -echo; echo ready; exec cat'], cols: 80, rows: 24 })
      const out = screen(terminal)
      await out.until('ready\n')
      const start = out.bytes().indexOf('ready\n') + 'ready\n'.length
      const sent = Buffer.from([...Array(256).keys(), ...Array(256).keys()].reverse())
      await terminal.write(sent)
      await eventually('all bytes back', () => out.bytes().length - start >= sent.length)
      expect(out.bytes().subarray(start)).toEqual(sent)
      await terminal.kill('SIGKILL')
      await terminal.wait()
    })

    it('the program sees its size, and each resize', async () => {
      const terminal = await rt.terminal(id, { command: ['sh'], cols: 91, rows: 33 })
      const out = screen(terminal)
      // Markers the shell computes, so that the echo of the typed line does not match.
      await terminal.write('stty size; echo done-$((0+1))\n')
      await out.until('done-1\r\n')
      expect(out.text()).toContain('33 91')
      await terminal.resize(120, 40)
      await terminal.write('tput cols 2>/dev/null || stty size; echo done-$((1+1))\n')
      await out.until('done-2\r\n')
      expect(out.text().split('done-1\r\n').at(-1)).toMatch(/\b120\b/)
      await terminal.write('exit 7\n')
      expect(await terminal.wait()).toEqual({ exitCode: 7 })
    })

    it('Ctrl-C stops a sleep and the shell stays', async () => {
      const terminal = await rt.terminal(id, { cols: 80, rows: 24 })
      const out = screen(terminal)
      await terminal.write('sleep 1000\n')
      await eventually('the sleep running', async () => (await ps(id)).includes('sleep 1000'))
      await terminal.write('\x03')
      await eventually('the sleep gone', async () => !(await ps(id)).includes('sleep 1000'))
      await terminal.write('echo after-$?\n')
      await out.until('after-130')
      await terminal.write('exit\n')
      expect((await terminal.wait()).exitCode).toBe(0)
    })

    it('Ctrl-Z stops a job and fg brings it back', async () => {
      const terminal = await rt.terminal(id, { command: ['bash'], cols: 80, rows: 24 })
      const out = screen(terminal)
      await terminal.write('sleep 1004\n')
      await eventually('the sleep running', async () => (await ps(id)).includes('sleep 1004'))
      await terminal.write('\x1a')
      await out.until('Stopped')
      const stopped = out.bytes().length
      await terminal.write('fg\n')
      // bash names the job it brings back: only then does Ctrl-C reach the sleep.
      await eventually('the job back', () => out.bytes().subarray(stopped).includes('sleep 1004\r\n'))
      await terminal.write('\x03')
      await terminal.write('echo back-$((40+2))\n')
      await out.until('back-42')
      await terminal.kill('SIGKILL')
      await terminal.wait()
    })

    it('two terminals at once are independent: one unread does not hold the other', async () => {
      const flooding = await rt.terminal(id, { command: ['sh', '-c', 'while :; do echo flood; done'], cols: 80, rows: 24 })
      const other = await rt.terminal(id, { command: ['sh', '-c', 'read line; echo "got $line"'], cols: 80, rows: 24 })
      const out = screen(other)
      await other.write('hello\n')
      await out.until('got hello')
      expect(await other.wait()).toEqual({ exitCode: 0 })
      // Nor the container's other calls.
      expect((await runtime.exec(id, { command: ['echo', 'free'] })).stdout).toBe('free\n')
      await flooding.kill('SIGKILL')
      expect((await flooding.wait()).exitCode).toBe(137)
    })

    it('kill leaves no process of the terminal behind', async () => {
      const terminal = await rt.terminal(id, { command: ['sh', '-c', 'sleep 1001 & sleep 1002 & sleep 1003'], cols: 80, rows: 24 })
      screen(terminal)
      await eventually('the sleeps running', async () => (await ps(id)).includes('sleep 1002'))
      await terminal.kill('SIGKILL')
      await terminal.wait()
      await eventually('no sleep left', async () => !/sleep 100[123]/.test(await ps(id)))
    })

    it('a reader that stops reading does not grow the host memory', async () => {
      const terminal = await rt.terminal(id, { command: ['sh', '-c', 'exec cat /dev/zero'], cols: 80, rows: 24 })
      let got = 0
      let paused = true
      terminal.onData((chunk) => {
        got += chunk.length
        // A listener that never returns in time: the next chunk waits for it.
        if (paused) execFileSync('sleep', ['0.2'])
      })
      const before = process.memoryUsage().rss
      await new Promise((r) => setTimeout(r, 3000))
      const grown = process.memoryUsage().rss - before
      paused = false
      expect(grown).toBeLessThan(64 << 20)
      expect(got).toBeLessThan(512 << 20)
      await terminal.kill('SIGKILL')
      await terminal.wait()
    })

    it('a size out of range is INVALID_ARGUMENT', async () => {
      expect((await rejection(rt.terminal(id, { cols: 0, rows: 24 }))).code).toBe('INVALID_ARGUMENT')
    })
  })
}

describe('Workspaces.terminal', () => {
  const home = tempDir('terminal-workspaces')
  const workspaces = new addon.Workspaces({ baseDir: home.path, engine, image: IMAGES.debian })
  const project = gitProject('terminal-project', { 'README.md': 'hi\n' })
  afterAll(async () => {
    await workspaces.destroy('term1').catch(() => {})
    project.cleanup()
    home.cleanup()
  })

  it("opens in the session's folder; destroy under an open terminal ends it", async () => {
    const info = await workspaces.create({ projectDir: project.path, sessionId: 'term1' })
    const terminal = await workspaces.terminal('term1', { cols: 80, rows: 24 })
    const out = screen(terminal)
    await terminal.write('pwd; cat README.md\n')
    await out.until(`${info.containerMountPath}\r\n`)
    await out.until('hi\r\n')
    const ended = terminal.wait().then(
      (exit) => ({ exit }),
      (err) => ({ err }),
    )
    await workspaces.destroy('term1')
    const result = await Promise.race([ended, new Promise((r) => setTimeout(() => r('still open'), 15_000))])
    expect(result).not.toBe('still open')
  })
})

describe.skipIf(isRemote)('container-isolation shell (in tmux)', () => {
  const home = tempDir('terminal-cli-home')
  const project = gitProject('terminal-cli-project', { 'README.md': 'cli\n' })
  const cliPath = join(__dirname, '..', 'bin', 'container-isolation.js')
  const cliEnv = { ...process.env, CONTAINER_ISOLATION_HOME: home.path, CONTAINER_ISOLATION_IMAGE: IMAGES.debian }
  const tmuxName = `ci-terminal-${process.pid}`
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', tmuxName, ...args], { encoding: 'utf8' })
  const pane = () => tmux('capture-pane', '-p', '-t', 'cli')
  const socketArgs = engine.socketPath ? ['--host', `unix://${engine.socketPath}`] : []
  afterAll(() => {
    spawnSync('tmux', ['-L', tmuxName, 'kill-server'])
    spawnSync(process.execPath, [cliPath, 'down', 'clish', ...socketArgs], { env: cliEnv })
    project.cleanup()
    home.cleanup()
  })

  it('answers a prompt, passes the exit code on and puts the local terminal back', async () => {
    const up = spawnSync(process.execPath, [cliPath, 'up', project.path, '--session', 'clish', ...socketArgs], { env: cliEnv, encoding: 'utf8' })
    expect(up.status, up.stderr).toBe(0)
    const script = 'read -p "name? " n; echo "hello $n"; exit 5'
    const command = [process.execPath, cliPath, 'shell', 'clish', ...socketArgs, '--', 'bash', '-c', script]
    const quoted = command.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')
    const envs = Object.entries({ CONTAINER_ISOLATION_HOME: home.path }).map(([k, v]) => `${k}='${v}'`).join(' ')
    tmux('new-session', '-d', '-s', 'cli', '-x', '100', '-y', '30', 'bash', '--norc', '--noprofile')
    tmux('send-keys', '-t', 'cli', `env ${envs} ${quoted}; echo "cli-exit=$?"; stty -a | grep -o -- '-icanon\\|icanon' | head -1`, 'Enter')
    await eventually('the prompt', () => pane().includes('name? '), 30_000)
    tmux('send-keys', '-t', 'cli', 'world', 'Enter')
    await eventually('the answer and the exit code', () => pane().includes('cli-exit=5'), 15_000)
    expect(pane()).toContain('hello world')
    // Back in cooked mode: canonical input on.
    await eventually('the terminal restored', () => /^icanon$/m.test(pane()), 5000)
  })

  it('a session destroyed under the open terminal leaves the local terminal sane', async () => {
    tmux('send-keys', '-t', 'cli', 'clear', 'Enter')
    await eventually('the pane cleared', () => !pane().includes('cli-exit=5'))
    const command = [process.execPath, cliPath, 'shell', 'clish', ...socketArgs]
    const quoted = command.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')
    tmux('send-keys', '-t', 'cli', `env CONTAINER_ISOLATION_HOME='${home.path}' ${quoted}; echo "cli-exit=$?"; stty -a | grep -o -- '-icanon\\|icanon' | head -1`, 'Enter')
    tmux('send-keys', '-t', 'cli', 'echo inside-$((20+1))', 'Enter')
    await eventually('the shell inside', () => pane().includes('inside-21'), 30_000)
    const down = spawnSync(process.execPath, [cliPath, 'down', 'clish', ...socketArgs], { env: cliEnv, encoding: 'utf8' })
    expect(down.status, down.stderr).toBe(0)
    await eventually('the CLI gone', () => /cli-exit=\d+/.test(pane()), 20_000)
    expect(pane()).not.toContain('cli-exit=0')
    await eventually('the terminal restored', () => /^icanon$/m.test(pane()), 5000)
  })

  it('without a terminal on stdin it says so and exits 2', () => {
    const r = spawnSync(process.execPath, [cliPath, 'shell', 'clish', ...socketArgs], { env: cliEnv, encoding: 'utf8', input: '' })
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/terminal/)
  })
})
