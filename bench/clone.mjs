// createSessionClone against `git clone --local` + `git checkout -b` on a generated
// repository of 20 000 files; medians of N runs each, in one process.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { median, table } from './common.mjs'

const require = createRequire(import.meta.url)
const { CloneManager } = require('../index.js')
const FILES = Number(process.env.BENCH_FILES ?? 20_000)
const RUNS = Number(process.env.BENCH_CLONE_N ?? 7)

const root = mkdtempSync(join(tmpdir(), 'container-isolation-clone-bench-'))
const git = (cwd, ...args) =>
  execFileSync('git', ['-c', 'user.name=Bench', '-c', 'user.email=bench@localhost', '-c', 'gc.auto=0', ...args], { cwd, stdio: 'ignore' })
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

  // Alternating runs, so that disk write-back and cache state fall on both alike; the
  // clones are deleted outside the timed part.
  const clones = new CloneManager({ baseDir: join(root, 'base') })
  const seedsRuns = []
  const oursRuns = []
  for (let i = -1; i < RUNS; i++) {
    const cli = join(root, `cli-${i + 1}`)
    let t = process.hrtime.bigint()
    git(root, 'clone', '-q', '--local', project, cli)
    git(cli, 'checkout', '-q', '-b', `session-${i + 1}`)
    const s = Number(process.hrtime.bigint() - t) / 1e6
    t = process.hrtime.bigint()
    const ours = await clones.createSessionClone(project, `b${i + 1}`)
    const o = Number(process.hrtime.bigint() - t) / 1e6
    if (i >= 0) {
      seedsRuns.push(s)
      oursRuns.push(o)
    }
    rmSync(cli, { recursive: true, force: true })
    rmSync(ours, { recursive: true, force: true })
    execFileSync('sync')
  }
  const seeds = median(seedsRuns)
  const ours = median(oursRuns)
  table(`createSessionClone, ${FILES} files, median of ${RUNS} (ms); seeds = git clone --local + git checkout -b`, [
    ['session clone', seeds, ours],
  ])
  console.log(`ratio ours/seeds: ${(ours / seeds).toFixed(2)} (target <= 1.25)`)
} finally {
  rmSync(root, { recursive: true, force: true })
}
