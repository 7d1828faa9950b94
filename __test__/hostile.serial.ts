// A hostile or frozen container (issue 24): stand-in agents that misbehave on purpose (built
// by scripts/build-standin-agents.sh, each named to a child host process by
// CONTAINER_ISOLATION_AGENT), and a container paused under a running command. Whatever the
// container does, the host process survives with bounded memory, terminate() and timeouts
// settle within 2 s, every call settles, the container ends on the engine path with the
// reason said, and another container's real agent keeps its speed. It runs alone (the
// serial config), so that the speed it compares is not other suites' load.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addon, engine, engineCli, IMAGES, isPodman, rejection, suiteRuntime, tempDir } from './helpers'

const label = isPodman ? ' (podman)' : ''
const STANDINS = fileURLToPath(new URL('../target/standin-agents/', import.meta.url))
const HOST = fileURLToPath(new URL('./fixtures/hostile-host.cjs', import.meta.url))
const MISBEHAVIOURS = [
  'huge-frame',
  'endless-output',
  'endless-read',
  'unsolicited',
  'field-overrun',
  'silent',
  'dies-on-request',
  'listing-count',
] as const

const { runtime, baseDir, cleanup } = suiteRuntime('hostile')
const logs = tempDir('hostile-logs')
afterAll(async () => {
  await cleanup()
  logs.cleanup()
})

let requests = 0
const req = () => `hostile-${++requests}`

async function container(): Promise<string> {
  const id = await runtime.create({ image: IMAGES.debian, workingDirectory: '/tmp', mounts: [] })
  await runtime.start(id)
  return id
}

const shellOn = (id: string, extra = {}) =>
  new addon.DockerShell({ container: id, cwd: '/tmp', threadId: 'hostile', logDir: logs.path, engine, ...extra })

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

interface Call {
  name: string
  settled: boolean
  ok?: boolean
  code?: string
  message?: string
  ms: number
  terminateMs?: number
}
interface HostReport {
  rounds?: Call[][]
  access?: { path: string; reason?: string }
  peakRssMiB?: number
  error?: string
}

/** Runs the child host with `standin` as its agent; resolves with its report. */
function hostWith(standin: string): Promise<HostReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [HOST, engine.socketPath, IMAGES.debian, baseDir, logs.path], {
      env: { ...process.env, CONTAINER_ISOLATION_AGENT: standin },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    child.stdout.on('data', (chunk) => (out += chunk))
    child.on('error', reject)
    child.on('exit', (code, signal) => {
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1) ?? ''))
      } catch {
        reject(new Error(`the host exited ${code ?? signal} without a report: ${out.slice(0, 500)}`))
      }
    })
  })
}

describe(`stand-in agents${label}`, () => {
  let quiet = 0
  let steady = ''
  beforeAll(async () => {
    expect(existsSync(STANDINS), 'run scripts/build-standin-agents.sh').toBe(true)
    steady = await container()
    const sh = shellOn(steady)
    const times: number[] = []
    for (let i = 0; i < 30; i++) {
      const t0 = performance.now()
      await sh.execute('true', { toolRequestId: req() })
      times.push(performance.now() - t0)
    }
    quiet = median(times)
  })

  for (const name of MISBEHAVIOURS) {
    it(`${name}: calls settle, terminate() within 2 s, RSS bounded, the engine path after`, async () => {
      const sh = shellOn(steady)
      const report = hostWith(`${STANDINS}${name}`)
      let done = false
      void report.finally(() => (done = true))
      const during: number[] = []
      while (!done) {
        const t0 = performance.now()
        const r = await sh.execute('true', { toolRequestId: req() })
        during.push(performance.now() - t0)
        expect(r.exitCode).toBe(0)
      }
      const { rounds, access, peakRssMiB, error } = await report
      expect(error).toBeUndefined()
      const calls = rounds!.flat()
      console.log(
        `[hostile] ${name}: peak RSS ${peakRssMiB!.toFixed(0)} MiB; terminate() settled in at most ` +
          `${Math.max(...calls.map((c) => c.terminateMs ?? 0))} ms; slowest call ${Math.max(...calls.map((c) => c.ms))} ms; ` +
          `other container's execute p50 ${median(during).toFixed(1)} ms (quiet ${quiet.toFixed(1)} ms, ${during.length} runs); ` +
          `ends on ${access!.path}: ${access!.reason ?? ''}`,
      )
      for (const call of calls) expect(call.settled, `${call.name} did not settle`).toBe(true)
      for (const call of calls) expect(call.terminateMs ?? 0).toBeLessThanOrEqual(2000)
      for (const call of rounds!.at(-1)!) expect(call.ok, `${call.name}: ${call.code} ${call.message}`).toBe(true)
      expect(access!.path).toBe('engine')
      expect(access!.reason).toBeTruthy()
      expect(peakRssMiB!).toBeLessThan(256)
      // Not starved: a starved call waits for the flood (hundreds of ms); on two busy cores
      // a fair share measured up to 2.02x the quiet p50 (3.7 ms), so the bound is 3x.
      expect(median(during)).toBeLessThanOrEqual(3 * quiet)
    }, 240_000)
  }
})

describe(`a paused container${label}`, () => {
  let id = ''
  beforeAll(async () => {
    id = await container()
    // The agent running before the pause, as in a session.
    await shellOn(id).execute('true', { toolRequestId: req() })
  })
  afterAll(() => {
    if (engineCli('inspect', '-f', '{{.State.Paused}}', id) === 'true') engineCli('unpause', id)
  })

  it('timeoutMs settles within 2 s of its deadline', async () => {
    const sh = shellOn(id, { timeoutMs: 2000 })
    const t0 = Date.now()
    const result = await sh.execute('sleep 1050', {
      toolRequestId: req(),
      onStart: () => setTimeout(() => engineCli('pause', id), 300),
    })
    const late = Date.now() - t0 - 2000
    console.log(`[hostile] paused: the timeout settled ${late} ms after its deadline`)
    expect(late).toBeLessThanOrEqual(2000)
    expect(result.exitCode).not.toBe(0)
    engineCli('unpause', id)
  }, 30_000)

  it('terminate() settles within 2 s, with the signal', async () => {
    const sh = shellOn(id)
    let terminatedAt = 0
    const result = await sh.execute('sleep 1051', {
      toolRequestId: req(),
      onStart: () =>
        setTimeout(() => {
          engineCli('pause', id)
          terminatedAt = Date.now()
          sh.terminate()
        }, 300),
    })
    const took = Date.now() - terminatedAt
    console.log(`[hostile] paused: terminate() settled in ${took} ms`)
    expect(took).toBeLessThanOrEqual(2000)
    expect(result.signal).toMatch(/^SIG(TERM|KILL)$/)
  }, 30_000)

  it('a file read, an exec with a timeout and a command settle while it stays paused; all work after', async () => {
    const files = new addon.DockerFileIO({ container: id, cwd: '/tmp', engine, hostAccess: false })
    const t0 = Date.now()
    const read = await files.readFile('/etc/hostname').then(
      () => 'read',
      (e) => e.code,
    )
    const readMs = Date.now() - t0
    const t1 = Date.now()
    const exec = await rejection(runtime.exec(id, { command: ['true'], timeout: 1000 }))
    const execMs = Date.now() - t1
    const t2 = Date.now()
    const command = await shellOn(id, { timeoutMs: 1000 })
      .execute('true', { toolRequestId: req() })
      .then(
        (r) => `exit ${r.exitCode}`,
        (e) => e.code,
      )
    const commandMs = Date.now() - t2
    console.log(
      `[hostile] paused: readFile ${read} in ${readMs} ms, exec ${exec.code} in ${execMs} ms, execute ${command} in ${commandMs} ms`,
    )
    expect(readMs).toBeLessThan(30_000)
    expect(execMs).toBeLessThanOrEqual(3000)
    expect(commandMs).toBeLessThanOrEqual(3000)
    engineCli('unpause', id)
    expect((await runtime.exec(id, { command: ['true'] })).exitCode).toBe(0)
    expect((await shellOn(id).execute('echo back', { toolRequestId: req() })).exitCode).toBe(0)
    expect(await files.readFile('/etc/hostname')).toBeTruthy()
  }, 90_000)
})
