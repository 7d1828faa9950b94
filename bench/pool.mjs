// Time to a ready session: `create` of a 50-file project, `environment`, and
// `execute('true')` answered, with a warm pool (a member claimed) against without one (the
// container made while the caller waits), in one process, on one engine: medians of N each.
// Each warm sample waits for the pool to be full first (outside the timing), as a host
// with a pool between two sessions would; sessions are destroyed outside the timing too.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { median } from './common.mjs'

const require = createRequire(import.meta.url)
const { Workspaces } = require('../lib/index.js')
const image = process.env.IMAGE ?? 'container-isolation-test:debian'
const N = Math.min(Number(process.env.BENCH_N ?? 15), 15)

const project = mkdtempSync(join(tmpdir(), 'ci-bench-pool-project-'))
for (let i = 0; i < 50; i++) {
  mkdirSync(join(project, `dir${i % 5}`), { recursive: true })
  writeFileSync(join(project, `dir${i % 5}`, `file${i}.js`), `export const x${i} = ${i}\n`.repeat(20))
}
const git = (...args) => execFileSync('git', ['-c', 'user.name=B', '-c', 'user.email=b@e', ...args], { cwd: project })
git('init', '-q', '-b', 'main')
git('add', '.')
git('commit', '-q', '-m', 'bench')

const since = (t) => Number(process.hrtime.bigint() - t) / 1e6
let n = 0

/** Medians of N ready sessions (after 2 warm-ups) from `ws`; `between` runs untimed before each. */
async function readySessions(ws, between) {
  const samples = []
  for (let i = -2; i < N; i++) {
    await between()
    const id = `bench${process.pid}x${++n}`
    const t = process.hrtime.bigint()
    await ws.create({ projectDir: project, sessionId: id, lifetime: 'process' })
    const env = await ws.environment(id, 'bench')
    await env.shell.execute('true', { toolRequestId: 'ready' })
    if (i >= 0) samples.push(since(t))
    await ws.destroy(id)
  }
  return median(samples)
}

/**
 * `execute('true')` in a session of its own, p50 while no pool works against while pools
 * fill (each round a new `Workspaces` with a pool of REFILL members: its first session made
 * outside the samples, then samples taken until its pool is full). Interleaved rounds.
 */
async function refillImpact() {
  const REFILL = 4
  const ROUNDS = 3
  const quiet = new Workspaces({ baseDir: base('quiet'), image, egress: 'bridge' })
  const id = `bench${process.pid}q`
  await quiet.create({ projectDir: project, sessionId: id, lifetime: 'process' })
  const env = await quiet.environment(id, 'bench')
  const execute = async () => {
    const t = process.hrtime.bigint()
    await env.shell.execute('true', { toolRequestId: 'q' })
    return since(t)
  }
  for (let i = 0; i < 20; i++) await execute()
  const [idle, filling] = [[], []]
  let made = 0
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < 150; i++) idle.push(await execute())
    const pool = { size: REFILL, maxLoadPerCpu: 1e6, minAvailableMemory: 0 }
    const ws = new Workspaces({ baseDir: base('refill'), image, egress: 'bridge', pool })
    await ws.create({ projectDir: project, sessionId: `bench${process.pid}r${round}`, lifetime: 'process' })
    let full = false
    const ready = ws.poolReady().then(() => (full = true))
    while (!full) filling.push(await execute())
    await ready
    made += ws.poolStatus().made
  }
  await quiet.destroy(id)
  const [a, b] = [median(idle), median(filling)]
  console.log(`execute('true') in another session while pools fill (${made} members made; ${idle.length} / ${filling.length} samples)`)
  console.log('no pool working'.padEnd(30), `${a.toFixed(3)} ms`.padStart(10))
  console.log('pools filling'.padEnd(30), `${b.toFixed(3)} ms`.padStart(10), `${(b / a).toFixed(2)}x`.padStart(8))
  console.log('(goal: at most 1.20x)')
}

const bases = []
const base = (tag) => {
  bases.push(mkdtempSync(join(tmpdir(), `ci-bench-${tag}-`)))
  return bases.at(-1)
}
try {
  const rows = []
  // The default egress ('public': the container has no network, the relay starts with the
  // session) and 'bridge' (the engine's network, no relay).
  for (const egress of ['public', 'bridge']) {
    const cold = new Workspaces({ baseDir: base('cold'), image, egress })
    const pool = { size: 2, maxLoadPerCpu: 1e6, minAvailableMemory: 0 }
    const warm = new Workspaces({ baseDir: base('warm'), image, egress, pool })
    const coldMs = await readySessions(cold, async () => {})
    const warmMs = await readySessions(warm, () => warm.poolReady())
    rows.push([`egress '${egress}'`, coldMs, warmMs])
  }
  console.log(`Ready session: create (50-file project) + environment + execute('true') answered, median of ${N} (ms)`)
  console.log('operation'.padEnd(44), 'cold'.padStart(9), 'warm pool'.padStart(10), 'speed-up'.padStart(10))
  for (const [name, coldMs, warmMs] of rows) {
    const label = `ready session, ${name}`.padEnd(44)
    console.log(label, coldMs.toFixed(1).padStart(9), warmMs.toFixed(1).padStart(10), `${(coldMs / warmMs).toFixed(1)}x`.padStart(10))
  }
  console.log('(goal: warm <= 50 ms; cold no slower than before the pool)')
  console.log()
  await refillImpact()
} finally {
  rmSync(project, { recursive: true, force: true })
  // The pool's members go with this process (exit hooks); the bases after them.
  process.on('exit', () => bases.forEach((b) => rmSync(b, { recursive: true, force: true })))
}
