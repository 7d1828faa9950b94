// Delivery, bringing work home: `Workspaces.export` writes the session's HEAD (or a
// snapshot of its work tree) as a branch of the project, and nothing else of it. Checked
// with the git CLI on the project, on the engine under test (TEST_ENGINE_SOCKET); the clone
// is armed and bombed by the agent inside its container.
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { addon, engine, git, gitProject, IMAGES, rejection, tempDir } from './helpers'

const base = tempDir('export-base')
const dirs: Array<{ cleanup: () => void }> = [base]
const workspaces = new addon.Workspaces({ baseDir: base.path, engine, image: IMAGES.debian })
afterAll(async () => {
  for (const ws of await workspaces.list()) await workspaces.destroy(ws.sessionId).catch(() => {})
  dirs.forEach((d) => d.cleanup())
})

function project(): string {
  const d = gitProject('export-project', { 'a.txt': 'a\n', 'src/lib.ts': 'export {}\n', '.gitignore': '*.log\n' })
  dirs.push(d)
  git(d.path, 'tag', 'v1')
  git(d.path, 'branch', 'other')
  return d.path
}

let n = 0
const session = () => `ex${process.pid}x${++n}`

async function agent(id: string, script: string): Promise<void> {
  const env = await workspaces.environment(id, 'agent')
  const r = await env.shell.execute(`set -e; git config user.name Agent; git config user.email agent@example.com; ${script}`, { toolRequestId: `agent-${Date.now()}` })
  expect(r.exitCode, r.output.map((l) => l.text).join('\n')).toBe(0)
}

/** Everything of the project that export must leave as it was, byte for byte. */
function projectState(proj: string, exported: string[]): Record<string, string> {
  const refs = git(proj, 'for-each-ref', '--format=%(refname) %(objectname)')
    .split('\n')
    .filter((l) => !exported.some((b) => l.startsWith(`refs/heads/${b} `)))
  const read = (p: string) => readFileSync(join(proj, '.git', p)).toString('base64')
  return {
    status: execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: proj, encoding: 'utf8' }),
    head: read('HEAD'),
    index: read('index'),
    config: read('config'),
    hooks: readdirSync(join(proj, '.git', 'hooks')).join(','),
    refs: refs.join('\n'),
    files: execFileSync('sh', ['-c', 'find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 sha1sum'], { cwd: proj, encoding: 'utf8' }),
  }
}

describe('Workspaces.export', () => {
  it('writes the branch with the agent’s commits, or a snapshot of its work, and leaves the rest of the project unchanged', async () => {
    const proj = project()
    const id = session()
    const info = await workspaces.create({ projectDir: proj, sessionId: id })
    await agent(
      id,
      `echo changed > a.txt; mkdir -p new; echo n > new/n.txt; git add -A; git commit -qm 'agent one'
       git rm -q src/lib.ts; git commit -qm 'agent two'
       echo uncommitted >> a.txt; echo staged > staged.txt; git add staged.txt; echo u > untracked.txt
       mkdir -p udir/deep; echo x > udir/deep/x.txt; echo ignored > debug.log; ln -s /etc/shadow link; printf '#!/bin/sh\\n' > run.sh; chmod +x run.sh`,
    )
    execFileSync('sh', ['-c', 'echo "the user is editing" >> a.txt; echo mine > mine.txt'], { cwd: proj })
    const before = projectState(proj, [`session/${id}`, 'with-work'])
    const clone = info.clonePath
    const cloneIndex = readFileSync(join(clone, '.git', 'index'))

    const exported = await workspaces.export(id)
    expect(exported).toMatchObject({ branch: `session/${id}`, reference: `refs/heads/session/${id}`, commit: git(clone, 'rev-parse', 'HEAD'), head: git(clone, 'rev-parse', 'HEAD') })
    expect(exported.snapshot).toBeUndefined()
    expect(exported.objectsCopied).toBeGreaterThanOrEqual(5)
    expect(git(proj, 'log', '--format=%H %s', `main..session/${id}`)).toBe(git(clone, 'log', '--format=%H %s', `${info.baseCommit}..HEAD`))

    const withWork = await workspaces.export(id, { branch: 'with-work', uncommitted: true, message: 'work in progress' })
    expect(withWork.snapshot).toBe(withWork.commit)
    expect(git(proj, 'rev-parse', 'with-work^')).toBe(exported.head)
    expect(git(proj, 'log', '-1', '--format=%s', 'with-work')).toBe('work in progress')
    // The tree the git CLI writes for the same work tree (`git add -A` in a copy of the clone).
    const copy = tempDir('export-copy')
    dirs.push(copy)
    execFileSync('cp', ['-a', `${clone}/.`, copy.path])
    git(copy.path, 'add', '-A')
    expect(git(proj, 'rev-parse', 'with-work^{tree}')).toBe(git(copy.path, 'write-tree'))
    expect(git(proj, 'show', 'with-work:link')).toBe('/etc/shadow')

    expect(projectState(proj, [`session/${id}`, 'with-work'])).toEqual(before)
    expect(readFileSync(join(clone, '.git', 'index')).equals(cloneIndex)).toBe(true)
    expect(git(clone, 'rev-parse', 'HEAD')).toBe(exported.head)
    git(proj, 'fsck', '--strict', '--no-dangling')
    expect(readdirSync(join(base.path, 'delivery'))).toEqual([])
  })

  it('refuses an existing branch without force, the checked-out branch always, and a bad name', async () => {
    const proj = project()
    const id = session()
    await workspaces.create({ projectDir: proj, sessionId: id })
    await agent(id, `echo z > z.txt; git add z.txt; git commit -qm z`)
    const other = git(proj, 'rev-parse', 'other')
    expect((await rejection(workspaces.export(id, { branch: 'other' }))).code).toBe('EEXIST')
    expect(git(proj, 'rev-parse', 'other')).toBe(other)
    const moved = await workspaces.export(id, { branch: 'other', force: true })
    expect(moved.previous).toBe(other)
    expect(git(proj, 'rev-parse', 'other')).toBe(moved.commit)
    expect((await rejection(workspaces.export(id, { branch: 'main', force: true }))).code).toBe('INVALID_ARGUMENT')
    for (const branch of ['-f', 'a..b', 'HEAD', 'x y']) {
      expect((await rejection(workspaces.export(id, { branch }))).code, branch).toBe('INVALID_ARGUMENT')
    }
    expect((await rejection(workspaces.export('no-such-session'))).code).toBe('CONTAINER_NOT_FOUND')
  })

  it('runs none of the agent’s hook, fsmonitor, filter or textconv', async () => {
    const proj = project()
    const id = session()
    const info = await workspaces.create({ projectDir: proj, sessionId: id })
    const canary = `/tmp/ci-canary-${id}`
    const run = (what: string) => `sh -c 'touch ${info.clonePath}/canary-${what} ${canary}-${what}; cat'`
    const config = Object.entries({ 'core.fsmonitor': 'fsmonitor', 'filter.x.clean': 'clean', 'filter.x.smudge': 'smudge', 'filter.x.process': 'process', 'diff.x.textconv': 'textconv', 'diff.external': 'external' })
      .map(([key, what]) => `git config ${key} "${run(what)}"`)
      .join('; ')
    const hooks = ['pre-commit', 'post-commit', 'post-checkout', 'post-index-change', 'reference-transaction', 'pre-push', 'pre-auto-gc']
      .map((h) => `printf '#!/bin/sh\\ntouch ${info.clonePath}/canary-${h} ${canary}-${h}\\n' > .git/hooks/${h}; chmod +x .git/hooks/${h}`)
      .join('; ')
    await agent(id, `echo '* filter=x diff=x' > .gitattributes; echo edit > a.txt; git add -A; git commit -qm edit; ${config}; ${hooks}; echo dirty >> a.txt; echo new > new.txt`)
    const planted = () => [...readdirSync(info.clonePath).filter((f) => f.startsWith('canary-')), ...readdirSync('/tmp').filter((f) => f.startsWith(`ci-canary-${id}-`))]
    expect(planted()).toEqual([])
    const done = await workspaces.export(id, { uncommitted: true })
    expect(git(proj, 'show', `${done.commit}:new.txt`)).toBe('new')
    expect(planted()).toEqual([])
    // Armed for real: the git CLI on the host runs them.
    execFileSync('git', ['-c', 'safe.directory=*', 'status'], { cwd: info.clonePath, stdio: 'ignore' })
    expect(planted().length).toBeGreaterThan(0)
    for (const f of planted()) rmSync(f.startsWith('canary-') ? join(info.clonePath, f) : join('/tmp', f), { force: true })
  })

  it('refuses a 300 MiB blob and a tree nested 2100 deep with LIMIT_EXCEEDED, writing nothing, the host RSS bounded', async () => {
    const proj = project()
    const [bomb, deep] = [session(), session()]
    await workspaces.create({ projectDir: proj, sessionId: bomb })
    await workspaces.create({ projectDir: proj, sessionId: deep })
    // Zeros: a few hundred KiB in the clone, 300 MiB once inflated.
    await agent(bomb, `head -c 314572800 /dev/zero > zeros.bin; git add zeros.bin; git commit -qm bomb`)
    await agent(
      deep,
      `t=$(printf '100644 blob %s\\tleaf\\n' $(echo leaf | git hash-object -w --stdin) | git mktree)
       i=0; while [ $i -lt 2100 ]; do t=$(printf '040000 tree %s\\td\\n' $t | git mktree); i=$((i+1)); done
       git update-ref HEAD $(git commit-tree $t -p HEAD -m deep)`,
    )
    const before = projectState(proj, [])
    const objects = git(proj, 'count-objects')
    const probe = `
      const { Workspaces } = require(${JSON.stringify(join(process.cwd(), 'index.js'))})
      const ws = new Workspaces(${JSON.stringify({ baseDir: base.path, engine, image: IMAGES.debian })})
      const before = process.resourceUsage().maxRSS
      const codes = []
      ws.export(${JSON.stringify(bomb)}).catch((e) => codes.push([e.code, e.message]))
        .then(() => ws.export(${JSON.stringify(deep)})).catch((e) => codes.push([e.code, e.message]))
        .then(() => console.log(JSON.stringify({ codes, grewKiB: process.resourceUsage().maxRSS - before })))`
    const out = JSON.parse(execFileSync(process.execPath, ['-e', probe], { encoding: 'utf8' }))
    console.log(`export of a 300 MiB zero blob and a 2100-deep tree: ${JSON.stringify(out.codes)}; the host's max RSS grew ${out.grewKiB} KiB`)
    expect(out.codes.map((c: string[]) => c[0])).toEqual(['LIMIT_EXCEEDED', 'LIMIT_EXCEEDED'])
    expect(out.grewKiB).toBeLessThan(48 * 1024)
    expect(projectState(proj, [])).toEqual(before)
    expect(git(proj, 'count-objects')).toBe(objects)
  })
})
