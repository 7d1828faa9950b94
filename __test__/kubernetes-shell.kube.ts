// Magenta's Shell and Environment on a session Pod (docs/contract.md §8): KubernetesRuntime's
// `shell()` and `environment()`, every command, file and terminal through the Pod's session
// agent — output line by line with its log on the host, terminate and timeouts killing the
// whole tree, a terminal with its own controlling terminal — and UNSUPPORTED, with the
// reason, where the agent cannot serve.
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { ClusterDescription } from '../scripts/kube-cluster.mjs'
import { KubernetesRuntime } from '../lib/index.js'

const cluster: ClusterDescription = JSON.parse(readFileSync(process.env.TEST_KUBE_CLUSTER_JSON!, 'utf8'))
const kubernetes = { kubeconfig: cluster.kubeconfig.session, namespace: cluster.namespace }
const baseDir = mkdtempSync(join(tmpdir(), 'kube-shell-'))
const logDir = mkdtempSync(join(tmpdir(), 'kube-shell-logs-'))
const image = 'container-isolation-test:debian'
const runtime = new KubernetesRuntime({ kubernetes, image, baseDir, pull: 'never' })
const plain = new KubernetesRuntime({ kubernetes, image, baseDir, pull: 'never', agent: false })
const made: string[] = []

async function sandbox(extra: Record<string, unknown> = {}): Promise<string> {
  const id = await runtime.create({ id: 'shell', workingDirectory: '/tmp', mounts: [], ...extra })
  made.push(id)
  return id
}

/** How many processes of the Pod run a command line starting with `prefix`. */
async function running(id: string, prefix: string): Promise<string> {
  const script = `for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < "$f" 2>/dev/null; echo; done | grep -c "^${prefix}" || true`
  return (await runtime.exec(id, { command: ['sh', '-c', script] })).stdout.trim()
}

afterAll(async () => {
  await Promise.all(made.map((id) => runtime.remove(id).catch(() => {})))
})

describe('KubernetesRuntime.environment and shell', () => {
  it("environment(): Magenta's Environment on the Pod, files and commands as one user", async () => {
    const id = await sandbox()
    const env = await runtime.environment(id, { threadId: 't1', logDir })
    expect(env.cwd).toBe('/tmp')
    expect(env.homeDir).toBe('/root')
    expect(env.availableCapabilities.has('shell')).toBe(true)
    expect(env.environmentConfig).toEqual({ type: 'kubernetes', pod: id, cwd: '/tmp' })
    await env.fileIO.writeFile('note.txt', 'one\ntwo\n')
    const lines: string[] = []
    const result = await env.shell.execute('cat note.txt; echo err >&2; pwd; exit 3', {
      toolRequestId: 'r1',
      onOutput: (line) => lines.push(`${line.stream}:${line.text}`),
    })
    expect(result.exitCode).toBe(3)
    // In order within each stream (stdout and stderr are two pipes: no order between them).
    expect(lines.filter((l) => l.startsWith('stdout:'))).toEqual(['stdout:one', 'stdout:two', 'stdout:/tmp'])
    expect(lines.filter((l) => l.startsWith('stderr:'))).toEqual(['stderr:err'])
    expect(result.logFilePath).toBe(join(logDir, 'threads', 't1', 'tools', 'r1', 'bashCommand.log'))
    expect(readFileSync(result.logFilePath!, 'utf8')).toContain('exit code 3')

    const agent = await runtime.environment(id, { threadId: 't2', logDir, user: 'agent', cwd: '/home/agent' })
    expect(agent.homeDir).toBe('/home/agent')
    await agent.fileIO.writeFile('mine.txt', 'x')
    const who = await agent.shell.execute('echo "$(id -un) $HOME $(stat -c %U mine.txt)"', { toolRequestId: 'r2' })
    expect(who.output).toEqual([{ stream: 'stdout', text: 'agent /home/agent agent' }])
  })

  it('terminate() and the timeout kill the whole tree, processes that left the group too', async () => {
    const id = await sandbox()
    const shell = runtime.shell(id, { cwd: '/', threadId: 't3', logDir })
    let started!: () => void
    const onStart = new Promise<void>((resolve) => (started = resolve))
    const pending = shell.execute('setsid sleep 320 & echo up; sleep 321', {
      toolRequestId: 'r3',
      onStart: () => started(),
    })
    await onStart
    await expect.poll(() => running(id, 'sleep 32'), { timeout: 5000 }).toBe('2')
    shell.terminate()
    const result = await pending
    expect(result.signal).toBe('SIGTERM')
    expect(result.exitCode).toBe(143)
    await expect.poll(() => running(id, 'sleep 32'), { timeout: 5000 }).toBe('0')

    const brief = runtime.shell(id, { cwd: '/', threadId: 't4', logDir, timeoutMs: 1500 })
    const timedOut = await brief.execute('setsid sleep 330 & sleep 331', { toolRequestId: 'r4' })
    expect(timedOut.exitCode).not.toBe(0)
    expect(timedOut.output.at(-1)).toEqual({ stream: 'stderr', text: 'Command timed out after 1500 ms and was terminated' })
    await expect.poll(() => running(id, 'sleep 33'), { timeout: 5000 }).toBe('0')
  })

  it("a terminal: the program's own controlling terminal, resize, Ctrl-C, and its exit code", async () => {
    const id = await sandbox()
    const shell = runtime.shell(id, { cwd: '/tmp', threadId: 't5', logDir })
    const terminal = await shell.terminal({ cols: 80, rows: 24, command: ['bash', '--norc', '-i'] })
    let seen = ''
    terminal.onData((chunk) => {
      seen += chunk.toString('utf8')
    })
    await terminal.write('stty size; tty; pwd\n')
    await expect.poll(() => seen, { timeout: 10_000 }).toMatch(/24 80[\s\S]*\/dev\/pts\/\d+[\s\S]*\/tmp/)
    await terminal.resize(100, 30)
    await terminal.write('stty size\n')
    await expect.poll(() => seen, { timeout: 10_000 }).toContain('30 100')
    await terminal.write('sleep 340\n')
    await expect.poll(() => running(id, 'sleep 340'), { timeout: 5000 }).toBe('1')
    await terminal.write('\x03')
    await expect.poll(() => running(id, 'sleep 340'), { timeout: 5000 }).toBe('0')
    await terminal.write('exit 7\n')
    expect(await terminal.wait()).toMatchObject({ exitCode: 7 })
  })

  it('where the agent cannot serve, commands, terminals and environments say why', async () => {
    const id = await sandbox()
    const shell = plain.shell(id, { cwd: '/', threadId: 't6', logDir })
    const refusal = { code: 'UNSUPPORTED', message: expect.stringMatching(/session agent.*runs no session agent/) }
    await expect(shell.execute('true', { toolRequestId: 'r6' })).rejects.toMatchObject(refusal)
    await expect(shell.terminal({ cols: 80, rows: 24 })).rejects.toMatchObject(refusal)
    await expect(plain.environment(id, { threadId: 't6' })).rejects.toMatchObject(refusal)
    expect(() => runtime.shell(id, { cwd: 'relative', threadId: 't6' })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
    await expect(runtime.environment('no-such-pod', { threadId: 't6' })).rejects.toMatchObject({ code: 'CONTAINER_NOT_FOUND' })
  })
})
