// createSessionClone against `git clone --local` + `git checkout -b`, and Workspaces.create
// end to end (clone + container start, no lifecycle commands), on a generated repository
// of 20 000 files; medians of N runs each, in one process.
//
// Nothing is deleted while timing: on a file system without a journal, ext4 skips inodes
// freed in the last seconds when it allocates new ones, and 20 000 such skips cost more
// than the checkout itself. Every clone is kept until the end, and the two sides take
// turns at going first.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { median, table } from './common.mjs'

const require = createRequire(import.meta.url)
const { CloneManager, Workspaces } = require('../index.js')
const FILES = Number(process.env.BENCH_FILES ?? 20_000)
const RUNS = Number(process.env.BENCH_CLONE_N ?? 7)
const IMAGE = process.env.BENCH_IMAGE ?? 'container-isolation-test:debian'

const root = mkdtempSync(join(tmpdir(), 'container-isolation-clone-bench-'))
const git = (cwd, ...args) =>
  execFileSync('git', ['-c', 'user.name=Bench', '-c', 'user.email=bench@localhost', '-c', 'gc.auto=0', ...args], { cwd, stdio: 'ignore' })
const since = (t) => Number(process.hrtime.bigint() - t) / 1e6

const workspaces = new Workspaces({ baseDir: join(root, 'workspaces'), image: IMAGE })
const sessions = []
try {
  const project = join(root, 'project')
  for (let i = 0; i < FILES; i++) {
    const dir = join(project, `d${i % 200}`)
    if (i < 200) mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, `f${i}.txt`), `file ${i}\n`.repeat(20))
  }
  git(project, 'init', '-q', '-b', 'main')
  git(project, 'add', '.')
  git(project, 'commit', '-q', '-m', 'generated')
  git(project, 'repack', '-adq')
  execFileSync('sync')

  const clones = new CloneManager({ baseDir: join(root, 'base') })
  const seeds = async (i) => {
    const dir = join(root, `cli-${i}`)
    const t = process.hrtime.bigint()
    git(root, 'clone', '-q', '--local', project, dir)
    git(dir, 'checkout', '-q', '-b', `session-${i}`)
    return since(t)
  }
  const ours = async (i) => {
    const t = process.hrtime.bigint()
    await clones.createSessionClone(project, `b${i}`)
    return since(t)
  }
  const seedsRuns = []
  const oursRuns = []
  for (let i = -1; i < RUNS; i++) {
    let s, o
    if (i % 2) {
      s = await seeds(i + 1)
      o = await ours(i + 1)
    } else {
      o = await ours(i + 1)
      s = await seeds(i + 1)
    }
    if (i >= 0) {
      seedsRuns.push(s)
      oursRuns.push(o)
    }
    execFileSync('sync')
  }
  const s = median(seedsRuns)
  const o = median(oursRuns)
  table(`createSessionClone, ${FILES} files, median of ${RUNS} (ms); seeds = git clone --local + git checkout -b`, [
    ['session clone', s, o],
  ])
  console.log(`ratio ours/seeds: ${(o / s).toFixed(2)} (target <= 1.25)`)

  // A warm-up create, so that the first image lookup is not timed.
  const createRuns = []
  for (let i = -1; i < RUNS; i++) {
    const sessionId = `w${i + 1}`
    sessions.push(sessionId)
    const t = process.hrtime.bigint()
    await workspaces.create({ projectDir: project, sessionId })
    const ms = since(t)
    if (i >= 0) createRuns.push(ms)
    execFileSync('sync')
  }
  console.log()
  console.log(`Workspaces.create, ${FILES} files, ${IMAGE}, median of ${RUNS}: ${median(createRuns).toFixed(0)} ms (target < 2000)`)
  console.log(`  runs (ms): ${createRuns.map((ms) => ms.toFixed(0)).join(' ')}`)
} finally {
  for (const sessionId of sessions) await workspaces.destroy(sessionId).catch(() => {})
  rmSync(root, { recursive: true, force: true })
}
