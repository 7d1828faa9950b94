// Workspaces.changes() on a session whose agent committed changes to 10 000 files (half
// modified, half added), against the git CLI's `git diff --numstat base HEAD` on the same
// clone; and Workspaces.export() of a session with 1 000 commits into its project, against
// `git fetch <clone> HEAD:<branch>` run in the project (what a host does without us). In
// the same process, medians of N runs each, taking turns at going first; before each
// export the project's objects are put back as they were, so every run copies the 1 000
// commits. Goals: changes() <= 1 s, export <= 2 s. The agent's work is written into the
// clone from the host (the same files it would write), so that setting up is not timed.
import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
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
const exportId = 'delivery-bench-export'
const COMMITS = Number(process.env.BENCH_EXPORT_COMMITS ?? 1000)

/** Medians of RUNS timed runs of each side, after one untimed round, taking turns. */
async function compare(sides) {
  const runs = Object.fromEntries(Object.keys(sides).map((k) => [k, []]))
  for (let i = -1; i < RUNS; i++) {
    const order = i % 2 ? Object.keys(sides).reverse() : Object.keys(sides)
    for (const side of order) {
      const ms = await sides[side]()
      if (i >= 0) runs[side].push(ms)
    }
  }
  return Object.fromEntries(Object.entries(runs).map(([k, xs]) => [k, median(xs)]))
}

/** A session whose clone has COMMITS commits on top of its small project. */
async function exportSession() {
  const project = join(root, 'export-project')
  mkdirSync(join(project, 'src'), { recursive: true })
  for (let i = 0; i < 20; i++) writeFileSync(join(project, 'src', `m${i}.ts`), `export const m${i} = ${i}\n`.repeat(40))
  git(project, 'init', '-q', '-b', 'main')
  git(project, 'add', '.')
  git(project, 'commit', '-q', '-m', 'generated')
  const info = await workspaces.create({ projectDir: project, sessionId: exportId })
  // fast-import: 1 000 commits, each changing one module and adding a file.
  const stream = []
  for (let i = 0; i < COMMITS; i++) {
    const text = `export const m = ${i}\n`.repeat(40)
    const added = `step ${i}\n`.repeat(10)
    stream.push(`commit refs/heads/session-${exportId}`, `committer Agent <agent@example.com> ${1700000000 + i} +0000`, `data ${`step ${i}`.length}`, `step ${i}`)
    if (i === 0) stream.push(`from ${info.baseCommit}`)
    stream.push(`M 100644 inline src/m${i % 20}.ts`, `data ${Buffer.byteLength(text)}`, text.slice(0, -1), `M 100644 inline steps/s${i}.txt`, `data ${Buffer.byteLength(added)}`, added.slice(0, -1), '')
  }
  execFileSync('git', ['-c', 'safe.directory=*', 'fast-import', '--quiet'], { cwd: info.clonePath, input: stream.join('\n') + '\n' })
  git(info.clonePath, 'reset', '-q', '--hard')
  for (const d of ['objects', 'refs']) cpSync(join(project, '.git', d), join(root, `saved-${d}`), { recursive: true })
  return { project, clone: info.clonePath }
}

function restore(project) {
  for (const d of ['objects', 'refs']) {
    rmSync(join(project, '.git', d), { recursive: true, force: true })
    cpSync(join(root, `saved-${d}`), join(project, '.git', d), { recursive: true })
  }
  execFileSync('sync')
}

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
  const changes = await compare({ ours, cli })
  table(`Workspaces.changes(), ${FILES} changed files, median of ${RUNS} (ms); seeds = git diff --numstat base HEAD`, [['changes()', changes.cli, changes.ours]])
  console.log(`changes(): ${changes.ours.toFixed(0)} ms (goal <= 1000); ratio ours/git diff --numstat: ${(changes.ours / changes.cli).toFixed(2)}`)

  const exporting = await exportSession()
  const exported = await compare({
    ours: async () => {
      restore(exporting.project)
      const t = process.hrtime.bigint()
      const done = await workspaces.export(exportId)
      const ms = since(t)
      if (git(exporting.project, 'rev-list', '--count', `main..${done.branch}`).trim() !== String(COMMITS)) throw new Error('export: commits missing')
      return ms
    },
    fetch: async () => {
      restore(exporting.project)
      const t = process.hrtime.bigint()
      git(exporting.project, 'fetch', '-q', '--no-tags', exporting.clone, `HEAD:refs/heads/fetched`)
      return since(t)
    },
  })
  table(`Workspaces.export(), ${COMMITS} commits, median of ${RUNS} (ms); seeds = git fetch <clone> HEAD:<branch>`, [['export()', exported.fetch, exported.ours]])
  console.log(`export(): ${exported.ours.toFixed(0)} ms (goal <= 2000); ratio ours/git fetch: ${(exported.ours / exported.fetch).toFixed(2)}`)
} finally {
  await workspaces.destroy(sessionId).catch(() => {})
  await workspaces.destroy(exportId).catch(() => {})
  rmSync(root, { recursive: true, force: true })
}
