// createSessionClone against `git clone --no-hardlinks` + `git checkout -b` (a session clone
// may share no inode with the project, so the git CLI's equivalent copies too), with the
// hard-linking `git clone --local` shown for reference; on a generated repository of 20 000
// files, and the same with a 256 MiB incompressible blob, so that copying the pack counts.
// Then Workspaces.create end to end (clone + container start, no lifecycle commands).
// Medians of N runs each, in one process.
//
// Nothing is deleted while timing: on a file system without a journal, ext4 skips inodes
// freed in the last seconds when it allocates new ones, and 20 000 such skips cost more
// than the checkout itself. Every clone is kept until the end, and the two sides take
// turns at going first.
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { median, table } from './common.mjs'

const require = createRequire(import.meta.url)
const { CloneManager, Workspaces } = require('../index.js')
const FILES = Number(process.env.BENCH_FILES ?? 20_000)
const RUNS = Number(process.env.BENCH_CLONE_N ?? 7)
const BLOB_MB = Number(process.env.BENCH_BLOB_MB ?? 256)
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
  let clonesMade = 0
  const cli = async (projectDir, flag) => {
    const dir = join(root, `cli-${++clonesMade}`)
    const t = process.hrtime.bigint()
    git(root, 'clone', '-q', flag, projectDir, dir)
    git(dir, 'checkout', '-q', '-b', `session-${clonesMade}`)
    return since(t)
  }
  const ours = async (projectDir) => {
    const t = process.hrtime.bigint()
    await clones.createSessionClone(projectDir, `b${++clonesMade}`)
    return since(t)
  }
  const compare = async (label, projectDir) => {
    const runs = { copy: [], ours: [], link: [] }
    for (let i = -1; i < RUNS; i++) {
      // Each side goes first in turn; a warm-up round is not counted.
      const order = i % 2 ? ['copy', 'ours', 'link'] : ['ours', 'link', 'copy']
      for (const side of order) {
        const ms = side === 'ours' ? await ours(projectDir) : await cli(projectDir, side === 'copy' ? '--no-hardlinks' : '--local')
        if (i >= 0) runs[side].push(ms)
      }
      execFileSync('sync')
    }
    const [copy, mine, link] = [median(runs.copy), median(runs.ours), median(runs.link)]
    table(`createSessionClone, ${label}, median of ${RUNS} (ms); seeds = git clone --no-hardlinks + git checkout -b`, [
      ['session clone', copy, mine],
    ])
    console.log(`ratio ours/git clone --no-hardlinks: ${(mine / copy).toFixed(2)} (target <= 1.25); for reference, git clone --local (hard links): ${link.toFixed(1)} ms`)
  }
  await compare(`${FILES} files`, project)

  const big = join(root, 'project-big')
  execFileSync('cp', ['-a', project, big])
  writeFileSync(join(big, 'blob.bin'), randomBytes(BLOB_MB * 1024 * 1024))
  git(big, 'add', 'blob.bin')
  git(big, 'commit', '-q', '-m', 'blob')
  git(big, 'repack', '-adq')
  execFileSync('sync')
  console.log()
  await compare(`${FILES} files + a ${BLOB_MB} MiB blob`, big)

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
