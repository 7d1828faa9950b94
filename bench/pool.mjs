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
} finally {
  rmSync(project, { recursive: true, force: true })
  // The pool's members go with this process (exit hooks); the bases after them.
  process.on('exit', () => bases.forEach((b) => rmSync(b, { recursive: true, force: true })))
}
