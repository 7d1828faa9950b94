// Checkpoints against the engine's own commit, in one process: a session with 200 MB
// installed in its container (files under /usr) — `checkpoint` (container paused, clone
// and container taken) next to a bare `docker commit` of the same container, `restore` of
// that checkpoint, and `fork` of it next to a cold `create` of the same project. Medians
// of N each.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DOCKER, median } from './common.mjs'

const require = createRequire(import.meta.url)
const { Workspaces } = require('../lib/index.js')
const image = process.env.IMAGE ?? 'container-isolation-test:debian'
const N = Math.min(Number(process.env.BENCH_N ?? 5), 10)
const MB = 200

const project = mkdtempSync(join(tmpdir(), 'ci-bench-checkpoint-project-'))
for (let i = 0; i < 50; i++) writeFileSync(join(project, `file${i}.js`), `export const x${i} = ${i}\n`.repeat(20))
const git = (...args) => execFileSync('git', ['-c', 'user.name=B', '-c', 'user.email=b@e', ...args], { cwd: project })
git('init', '-q', '-b', 'main')
git('add', '.')
git('commit', '-q', '-m', 'bench')

const base = mkdtempSync(join(tmpdir(), 'ci-bench-checkpoint-base-'))
const workspaces = new Workspaces({ baseDir: base, image, storage: 'bind' })
const since = (t) => Number(process.hrtime.bigint() - t) / 1e6
const timed = async (fn) => {
  const t = process.hrtime.bigint()
  await fn()
  return since(t)
}

const id = `benchckpt${process.pid}`
const rows = { commit: [], checkpoint: [], restore: [], create: [], fork: [] }
const bareImages = []
try {
  const info = await workspaces.create({ projectDir: project, sessionId: id, lifetime: 'process' })
  const env = await workspaces.environment(id, 'bench')
  const install = `mkdir -p /usr/local/lib/bench && for i in $(seq ${MB / 10}); do head -c 10485760 /dev/urandom > /usr/local/lib/bench/part$i; done`
  await env.shell.execute(install, { toolRequestId: 'install' })
  // The container keeps its 200 MB diff through commits and checkpoints; a restore makes
  // it again from an image (an empty diff), so restores are timed last.
  let made
  for (let i = 0; i < N; i++) {
    const tag = `ci-bench-commit:${process.pid}-${i}`
    rows.commit.push(await timed(() => execFileSync(DOCKER, ['commit', info.containerId, tag], { stdio: 'ignore' })))
    bareImages.push(tag)
    rows.checkpoint.push(await timed(async () => (made = await workspaces.checkpoint(id, { label: `bench ${i}` }))))
  }
  for (let i = 0; i < N; i++) {
    const cold = `${id}c${i}`
    rows.create.push(await timed(() => workspaces.create({ projectDir: project, sessionId: cold, lifetime: 'process' })))
    await workspaces.destroy(cold)
    const forked = `${id}f${i}`
    rows.fork.push(await timed(() => workspaces.fork(id, { sessionId: forked, checkpoint: made.id })))
    await workspaces.destroy(forked)
  }
  for (let i = 0; i < N; i++) rows.restore.push(await timed(() => workspaces.restore(id, made.id)))
} finally {
  for (const ws of await workspaces.list()) await workspaces.destroy(ws.sessionId).catch(() => {})
  for (const tag of bareImages) execFileSync(DOCKER, ['rmi', '-f', tag], { stdio: 'ignore' })
  rmSync(project, { recursive: true, force: true })
  rmSync(base, { recursive: true, force: true })
}

const m = Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, median(v)]))
console.log(`Checkpoints of a session with ${MB} MB installed in its container, median of ${N} (ms)`)
console.log('operation'.padEnd(40), 'baseline'.padStart(10), 'ours'.padStart(10), 'ratio'.padStart(8))
const row = (name, a, b) => console.log(name.padEnd(40), a.toFixed(1).padStart(10), b.toFixed(1).padStart(10), `${(b / a).toFixed(2)}x`.padStart(8))
row('checkpoint vs docker commit', m.commit, m.checkpoint)
row('restore vs docker commit', m.commit, m.restore)
row('fork vs cold create', m.create, m.fork)
console.log('(goals, issue 38: checkpoint within 1.5x of the commit, fork within 2x of a cold create)')
