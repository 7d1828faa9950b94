// Workspaces.changes() on a session whose agent committed changes to 10 000 files (half
// modified, half added), against the git CLI's `git diff --numstat base HEAD` on the same
// clone, in the same process: medians of N runs each, taking turns at going first. The
// goal is changes() <= 1 s. The agent's work is written into the clone from the host (the
// same files it would write), so that setting up is not what is timed.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { median, table } from './common.mjs'

const require = createRequire(import.meta.url)
const { Workspaces } = require('../index.js')
const FILES = Number(process.env.BENCH_DELIVERY_FILES ?? 10_000)
const RUNS = Number(process.env.BENCH_DELIVERY_N ?? 7)
const IMAGE = process.env.BENCH_IMAGE ?? 'container-isolation-test:debian'

const root = mkdtempSync(join(tmpdir(), 'container-isolation-delivery-bench-'))
const git = (cwd, ...args) =>
  execFileSync('git', ['-c', 'user.name=Bench', '-c', 'user.email=bench@localhost', '-c', 'gc.auto=0', '-c', 'safe.directory=*', ...args], { cwd, encoding: 'utf8', maxBuffer: 1 << 28 })
const since = (t) => Number(process.hrtime.bigint() - t) / 1e6

const workspaces = new Workspaces({ baseDir: join(root, 'base'), image: IMAGE })
const sessionId = 'delivery-bench'
try {
  const project = join(root, 'project')
  const half = FILES / 2
  for (let i = 0; i < half; i++) {
    const dir = join(project, `d${i % 100}`)
    if (i < 100) mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, `f${i}.txt`), `file ${i}\n`.repeat(20))
  }
  git(project, 'init', '-q', '-b', 'main')
  git(project, 'add', '.')
  git(project, 'commit', '-q', '-m', 'generated')

  const info = await workspaces.create({ projectDir: project, sessionId })
  const clone = info.clonePath
  for (let i = 0; i < half; i++) {
    const dir = join(clone, `d${i % 100}`)
    writeFileSync(join(dir, `f${i}.txt`), `file ${i}\n`.repeat(10) + `changed ${i}\n`.repeat(5))
    writeFileSync(join(dir, `new${i}.txt`), `new ${i}\n`.repeat(10))
  }
  git(clone, 'add', '-A')
  git(clone, 'commit', '-q', '-m', 'agent work')
  execFileSync('sync')

  const ours = async () => {
    const t = process.hrtime.bigint()
    const c = await workspaces.changes(sessionId)
    const ms = since(t)
    if (c.files.length !== FILES) throw new Error(`changes() listed ${c.files.length} files, not ${FILES}`)
    return ms
  }
  const cli = async () => {
    const t = process.hrtime.bigint()
    git(clone, 'diff', '--numstat', info.baseCommit, 'HEAD')
    return since(t)
  }
  const runs = { ours: [], cli: [] }
  for (let i = -1; i < RUNS; i++) {
    const order = i % 2 ? ['cli', 'ours'] : ['ours', 'cli']
    for (const side of order) {
      const ms = side === 'ours' ? await ours() : await cli()
      if (i >= 0) runs[side].push(ms)
    }
  }
  const [mine, theirs] = [median(runs.ours), median(runs.cli)]
  table(`Workspaces.changes(), ${FILES} changed files, median of ${RUNS} (ms); seeds = git diff --numstat base HEAD`, [['changes()', theirs, mine]])
  console.log(`changes(): ${mine.toFixed(0)} ms (goal <= 1000); ratio ours/git diff --numstat: ${(mine / theirs).toFixed(2)}`)
} finally {
  await workspaces.destroy(sessionId).catch(() => {})
  rmSync(root, { recursive: true, force: true })
}
