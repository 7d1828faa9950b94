import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addon, engine, engineCli, IMAGES, suiteRuntime, tempDir } from './helpers'

// What the session agent adds: exact kills, one exit story, atomic writes, tmpfs, long-lived
// bidirectional execs, bounded output, and the engine path where the agent is switched off.
const { runtime, cleanup } = suiteRuntime('agent')
const logs = tempDir('agent-logs')
const byCli: string[] = []
afterAll(async () => {
  await cleanup()
  for (const id of byCli) engineCli('rm', '-f', '-v', id)
  logs.cleanup()
})

let requests = 0
const req = () => `agent-req-${++requests}`

async function container(image: string = IMAGES.debian) {
  const id = await runtime.create({ image, workingDirectory: '/tmp', mounts: [] })
  await runtime.start(id)
  return id
}

/** Every process in the container but its init, keep-alive and our agent. */
async function strays(id: string) {
  const out = await runtime.exec(id, { command: ['ps', '-eo', 'args'], user: '0' })
  return out.stdout
    .split('\n')
    .slice(1)
    .filter((l) => l && !/docker-init|sleep 86400|while :|container-isolation-agent|^ps -eo/.test(l))
}

describe('the session agent kills what a command started', () => {
  let id = ''
  beforeAll(async () => {
    id = await container()
  })
  const shell = (extra = {}) =>
    new addon.DockerShell({ container: id, cwd: '/tmp', threadId: 'agent', logDir: logs.path, engine, ...extra })

  for (const [name, script] of [
    ['setsid with a cleared environment', 'setsid env -i sleep 1000 & sleep 1001'],
    ['a session leader that execs with a cleared environment', "setsid bash -c 'exec -c sleep 1002' & sleep 1003"],
    ['a fork loop', 'while :; do sleep 1004 & done'],
    ['a SIGTERM trap in a grandchild', "bash -c \"trap '' TERM; sleep 1005\" & trap '' TERM; sleep 1006"],
  ] as const) {
    it(`terminate(): ${name}`, async () => {
      const sh = shell()
      const r = await sh.execute(script, { toolRequestId: req(), onStart: () => setTimeout(() => sh.terminate(), 400) })
      expect(r.signal).toMatch(/^SIG(TERM|KILL)$/)
      expect(r.exitCode).toBe(r.signal === 'SIGKILL' ? 137 : 143)
      expect(await strays(id)).toEqual([])
    })
  }

  it('timeoutMs: setsid with a cleared environment leaves nothing', async () => {
    const r = await shell({ timeoutMs: 400 }).execute('setsid env -i sleep 1010 & sleep 1011', { toolRequestId: req() })
    expect(r.exitCode).not.toBe(0)
    expect(await strays(id)).toEqual([])
  })

  it('exec timeouts kill setsid descendants too', async () => {
    const err = await runtime
      .exec(id, { command: ['sh', '-c', 'setsid env -i sleep 1012 & sleep 1013'], timeout: 400 })
      .catch((e) => e)
    expect(err.code).toBe('TIMEOUT')
    expect(await strays(id)).toEqual([])
  })

  it('keeps the last lines of a long output within the limits; the log has them all', async () => {
    const r = await shell({ maxOutputLines: 1000 }).execute('seq 1 200000', { toolRequestId: req() })
    expect(r.output).toHaveLength(1000)
    expect(r.output.at(-1)?.text).toBe('200000')
    expect(r.omittedLines).toBe(199_000)
    const { readFileSync } = await import('node:fs')
    expect(readFileSync(r.logFilePath!, 'utf8')).toContain('\n1\n')
  })
})

describe('DockerFileIO through the agent', () => {
  let id = ''
  beforeAll(async () => {
    id = `ci-agent-tmpfs-${process.pid}`
    engineCli('run', '-d', '--name', id, '--tmpfs', '/scratch', IMAGES.debian, 'sleep', '3600')
    byCli.push(id)
  })

  it('sees tmpfs mounts, which the archive endpoints cannot', async () => {
    const io = new addon.DockerFileIO({ engine, container: id, hostAccess: false })
    await io.writeFile('/scratch/t.txt', 'on tmpfs')
    expect(await io.readFile('/scratch/t.txt')).toBe('on tmpfs')
    expect(engineCli('exec', id, 'cat', '/scratch/t.txt')).toBe('on tmpfs')
    expect(await io.readdir('/scratch')).toEqual(['t.txt'])
  })

  it('an interrupted write leaves the old content and no temporary file', async () => {
    const io = new addon.DockerFileIO({ engine, container: id, hostAccess: false })
    await io.writeFile('/tmp/big.bin', 'old')
    const big = Buffer.alloc(64 << 20, 0x61)
    const writing = io.writeFile('/tmp/big.bin', big).then(
      () => 'written',
      (e) => e.code,
    )
    // Kill the agent mid-write (as a container that stops would).
    await new Promise((r) => setTimeout(r, 30))
    engineCli('exec', id, 'pkill', '-KILL', '-f', 'container-isolation-agent')
    const outcome = await writing
    const now = (await io.readBinaryFile('/tmp/big.bin')).toString('latin1')
    expect(now === 'old' || (outcome === 'written' && now.length === big.length)).toBe(true)
    expect((await io.readdir('/tmp')).filter((n) => n !== 'big.bin' && n.includes('big'))).toEqual([])
  })
})

describe('DockerRuntime.execStream', () => {
  let id = ''
  beforeAll(async () => {
    id = await container()
  })

  for (const agent of [true, false]) {
    const label = agent ? 'agent' : 'engine exec'
    it(`drives a JSON-RPC echo over stdin/stdout (${label})`, async () => {
      const rt = new addon.DockerRuntime({ engine, agent })
      const echo = 's/.*"id":([0-9]+).*/{"jsonrpc":"2.0","id":\\1,"result":"ok"}/'
      const h = await rt.execStream(id, { command: ['sed', '-u', '-E', echo] })
      const replies: string[] = []
      let buffered = ''
      h.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString()
        const lines = buffered.split('\n')
        buffered = lines.pop()!
        replies.push(...lines)
      })
      for (let i = 1; i <= 20; i++) h.stdin.write(`{"jsonrpc":"2.0","id":${i},"method":"ping"}\n`)
      h.stdin.end()
      expect(await h.wait()).toMatchObject({ exitCode: 0 })
      expect(replies.map((r) => JSON.parse(r).id)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    })

    it(`kill() ends the command and every process it started (${label})`, async () => {
      const rt = new addon.DockerRuntime({ engine, agent })
      const h = await rt.execStream(id, { command: ['bash', '-c', 'sleep 1020 & exec sleep 1021'] })
      await new Promise((r) => setTimeout(r, 300))
      h.kill('SIGKILL')
      const exit = await h.wait()
      expect(exit.exitCode).toBe(137)
      await new Promise((r) => setTimeout(r, 200))
      expect(await strays(id)).toEqual([])
    })
  }

  it("environmentMode 'replace' gives only the given environment", async () => {
    const h = await runtime.execStream(id, { command: ['/usr/bin/env'], environment: { ONLY: 'this' }, environmentMode: 'replace' })
    let out = ''
    h.stdout.on('data', (c: Buffer) => (out += c))
    await h.wait()
    expect(out).toBe('ONLY=this\n')
  })
})
