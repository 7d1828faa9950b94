// Delivery, first part: where a session starts (`create({ ref })`, its base recorded) and
// what it changed (`changes()`), read on the host from a clone the agent controls
// completely. Checked against the git CLI's own reading of the same clone, on the engine
// under test (TEST_ENGINE_SOCKET).
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { addon, engine, engineCli, git, gitProject, IMAGES, rejection, tempDir } from './helpers'

const base = tempDir('delivery-base')
const dirs: Array<{ cleanup: () => void }> = [base]
const workspaces = new addon.Workspaces({ baseDir: base.path, engine, image: IMAGES.debian })
afterAll(async () => {
  for (const ws of await workspaces.list()) await workspaces.destroy(ws.sessionId).catch(() => {})
  dirs.forEach((d) => d.cleanup())
})

const lines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} line ${i}\n`).join('')

/** A project with a tag `v1` on its first commit and a second commit on `main`. */
function project(): string {
  const d = gitProject('delivery-project', { 'a.txt': lines(20, 'a'), 'b.txt': lines(5, 'b'), 'c.txt': lines(30, 'c'), '.gitignore': '*.log\n' })
  dirs.push(d)
  git(d.path, 'tag', '-a', 'v1', '-m', 'v1')
  git(d.path, 'commit', '-q', '--allow-empty', '-m', 'second')
  return d.path
}

let n = 0
const session = () => `dl${process.pid}x${++n}`

async function agent(id: string, script: string): Promise<void> {
  const env = await workspaces.environment(id, 'agent')
  const r = await env.shell.execute(`set -e; git config user.name Agent; git config user.email agent@example.com; ${script}`, { toolRequestId: `agent-${Date.now()}` })
  expect(r.exitCode, r.output.map((l) => l.text).join('\n')).toBe(0)
}

/** `git diff --numstat -z` as "added\tdeleted\tpath" rows (renames under their new path). */
function numstat(clone: string, from: string): string[] {
  const fields = execFileSync('git', ['-c', 'safe.directory=*', 'diff', '--numstat', '-z', '-M', from, 'HEAD'], { cwd: clone, encoding: 'utf8' }).split('\0')
  const rows: string[] = []
  for (let i = 0; i < fields.length && fields[i]; i++) {
    const [added, deleted, path] = fields[i].split('\t')
    rows.push(`${added}\t${deleted}\t${path || ((i += 2), fields[i])}`)
  }
  return rows.sort()
}

/** `git diff HEAD` after `git add -A`, in a copy of `clone` (the clone's own index untouched). */
function cliUncommittedPatch(clone: string): string {
  const copy = tempDir('delivery-copy')
  dirs.push(copy)
  execFileSync('cp', ['-a', `${clone}/.`, copy.path])
  const run = (...args: string[]) =>
    execFileSync('git', ['-c', 'safe.directory=*', ...args], { cwd: copy.path, encoding: 'utf8', env: { ...process.env, HOME: copy.path, GIT_CONFIG_NOSYSTEM: '1' } })
  run('add', '-A')
  return run('diff', '--cached', 'HEAD')
}

const letter: Record<string, string> = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R', copied: 'C', typechange: 'T' }

describe('Workspaces: where a session starts', () => {
  it('starts at the project HEAD by default, or at a tag, and records the base', async () => {
    const proj = project()
    const [plain, tagged] = [session(), session()]
    const info = await workspaces.create({ projectDir: proj, sessionId: plain })
    expect(info.baseCommit).toBe(git(proj, 'rev-parse', 'HEAD'))
    const atTag = await workspaces.create({ projectDir: proj, sessionId: tagged, ref: 'v1' })
    expect(atTag.baseCommit).toBe(git(proj, 'rev-parse', 'v1^{commit}'))
    expect(git(atTag.clonePath, 'rev-parse', 'HEAD')).toBe(atTag.baseCommit)
    expect(git(atTag.clonePath, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe(`session-${tagged}`)
    expect((await workspaces.get(tagged))?.baseCommit).toBe(atTag.baseCommit)
  })

  it('a ref that names no commit rejects GIT_REF_NOT_FOUND and leaves nothing; one that is not a revision, INVALID_ARGUMENT', async () => {
    const proj = project()
    for (const [ref, code] of [['no-such-branch', 'GIT_REF_NOT_FOUND'], ['0123456789abcdef0123456789abcdef01234567', 'GIT_REF_NOT_FOUND'], ['--upload-pack=touch /tmp/x', 'INVALID_ARGUMENT'], ['main:a.txt', 'INVALID_ARGUMENT']]) {
      const id = session()
      const err = await rejection(workspaces.create({ projectDir: proj, sessionId: id, ref }))
      expect(err.code, `${ref}: ${err.message}`).toBe(code)
      expect(await workspaces.get(id)).toBeUndefined()
      expect(existsSync(join(base.path, 'sessions', `session-${id}`))).toBe(false)
      expect(engineCli('ps', '-aq', '--filter', `label=dev.container-isolation.session=${id}`)).toBe('')
    }
  })
})

describe('Workspaces.changes', () => {
  it('matches what the git CLI says of the clone after the agent commits and leaves work', async () => {
    const proj = project()
    const id = session()
    const info = await workspaces.create({ projectDir: proj, sessionId: id })
    await agent(
      id,
      `sed -i 's/a line 3/changed 3/' a.txt; printf 'added 1\\nadded 2\\n' >> a.txt; git rm -q b.txt; git mv c.txt d.txt
       printf '\\000\\001\\002\\000' > bin.dat; git add -A; git commit -qm 'one: change, delete, rename, binary'
       mkdir -p sub; echo new > sub/new.txt; git add sub; git commit -qm 'two: new file'
       echo more >> a.txt; echo staged > staged.txt; git add staged.txt; echo u > untracked.txt
       mkdir -p udir; echo x > udir/x.txt; echo ignored > debug.log; rm sub/new.txt; ln -s /etc/passwd passwd-link`,
    )
    const clone = info.clonePath
    const from = info.baseCommit!
    const changes = await workspaces.changes(id, { patch: true })
    expect(changes).toMatchObject({ base: from, recordedBase: from, baseKind: 'recorded', head: git(clone, 'rev-parse', 'HEAD'), patchTruncated: false })
    expect(changes.commits.map((c) => c.id)).toEqual(git(clone, 'log', '--format=%H', `${from}..HEAD`).split('\n'))
    expect(changes.commits.map((c) => `${c.summary}|${c.authorName}|${c.authorEmail}|${c.timeMs / 1000}`)).toEqual(
      git(clone, 'log', '--format=%s|%an|%ae|%at', `${from}..HEAD`).split('\n'),
    )
    const nameStatus = git(clone, 'diff', '--name-status', '-M', from, 'HEAD').split('\n').map((l) => l.replace(/^([A-Z])\d*/, '$1'))
    expect(changes.files.map((f) => [letter[f.status], ...(f.oldPath ? [f.oldPath] : []), f.path].join('\t')).sort()).toEqual(nameStatus.sort())
    expect(changes.files.map((f) => (f.binary ? `-\t-\t${f.path}` : `${f.additions}\t${f.deletions}\t${f.path}`)).sort()).toEqual(numstat(clone, from))
    const porcelain = execFileSync('git', ['-c', 'safe.directory=*', 'status', '--porcelain'], { cwd: clone, encoding: 'utf8' }).split('\n').filter(Boolean)
    expect(changes.uncommitted.map((u) => `${u.status} ${u.path}`).sort()).toEqual(porcelain.sort())
    expect(changes.patch).toContain('+added 1')
    expect(changes.patch).toContain('rename from c.txt')
    // The uncommitted work as `git diff HEAD` prints it once `git add -A` took it all, in a copy.
    expect(changes.uncommittedPatchTruncated).toBe(false)
    expect(changes.uncommittedPatch).toBe(cliUncommittedPatch(clone))
    expect(changes.uncommittedPatch).toContain('+++ b/passwd-link\n@@ -0,0 +1 @@\n+/etc/passwd\n')
    expect(changes.uncommittedPatch).not.toContain('root:')
    expect(changes.uncommittedPatch).toContain('deleted file mode 100644')
    expect(changes.uncommittedPatch).not.toContain('debug.log')
    const cut = await workspaces.changes(id, { patch: true, maxPatchBytes: 200 })
    expect(cut.patchTruncated).toBe(true)
    expect(Buffer.byteLength(cut.patch!)).toBeLessThanOrEqual(200)
    expect(cut).toMatchObject({ uncommittedPatch: '', uncommittedPatchTruncated: true })
    const room = Buffer.byteLength(changes.patch!) + 100
    const shared = await workspaces.changes(id, { patch: true, maxPatchBytes: room })
    expect(shared).toMatchObject({ patch: changes.patch, patchTruncated: false, uncommittedPatchTruncated: true })
    expect(Buffer.byteLength(shared.uncommittedPatch!)).toBeLessThanOrEqual(100)
    expect(changes.uncommittedPatch!.startsWith(shared.uncommittedPatch!)).toBe(true)
    const without = await workspaces.changes(id)
    expect(without.patch).toBeUndefined()
    expect(without.uncommittedPatch).toBeUndefined()
  })

  it('counts a rewritten history from the merge base', async () => {
    const proj = project()
    const id = session()
    const info = await workspaces.create({ projectDir: proj, sessionId: id })
    await agent(id, `git reset -q --hard HEAD~1; echo rewritten > r.txt; git add r.txt; git commit -qm rewritten`)
    const changes = await workspaces.changes(id)
    expect(changes).toMatchObject({ baseKind: 'merge-base', recordedBase: info.baseCommit, base: git(info.clonePath, 'merge-base', info.baseCommit!, 'HEAD') })
    expect(changes.commits.map((c) => c.summary)).toEqual(['rewritten'])
    expect(changes.files.map((f) => `${f.status} ${f.path}`)).toEqual(['added r.txt'])
  })

  it('runs nothing the agent configured: fsmonitor, filter and diff drivers, textconv, external diff, hooks', async () => {
    const proj = project()
    const id = session()
    const info = await workspaces.create({ projectDir: proj, sessionId: id })
    const canary = `/tmp/ci-canary-${id}`
    // Each would write a canary on the host: in the host-visible clone and in /tmp.
    const run = (what: string) => `sh -c 'touch ${info.clonePath}/canary-${what} ${canary}-${what}; cat'`
    const config = Object.entries({ 'core.fsmonitor': 'fsmonitor', 'filter.x.clean': 'clean', 'filter.x.smudge': 'smudge', 'filter.x.process': 'process', 'diff.x.textconv': 'textconv', 'diff.external': 'external' })
      .map(([key, what]) => `git config ${key} "${run(what)}"`)
      .join('; ')
    const hooks = ['pre-commit', 'post-commit', 'post-checkout', 'post-index-change', 'reference-transaction']
      .map((h) => `printf '#!/bin/sh\\ntouch ${info.clonePath}/canary-${h} ${canary}-${h}\\n' > .git/hooks/${h}; chmod +x .git/hooks/${h}`)
      .join('; ')
    // Committed first, then armed: the agent's own git in the container would run them too.
    await agent(id, `echo '* filter=x diff=x' > .gitattributes; sed -i 's/a line 1/agent 1/' a.txt; git add -A; git commit -qm edit; ${config}; ${hooks}; echo dirty >> b.txt`)
    const planted = () => [...readdirSync(info.clonePath).filter((f) => f.startsWith('canary-')), ...readdirSync('/tmp').filter((f) => f.startsWith(`ci-canary-${id}-`))]
    expect(planted()).toEqual([])
    const changes = await workspaces.changes(id, { patch: true })
    expect(changes.patch).toContain('+agent 1')
    expect(changes.uncommitted.map((u) => `${u.status} ${u.path}`)).toEqual([' M b.txt'])
    expect(planted()).toEqual([])
    // The traps are armed: the git CLI on the host runs them.
    execFileSync('git', ['-c', 'safe.directory=*', 'diff', info.baseCommit!, 'HEAD'], { cwd: info.clonePath, stdio: 'ignore' })
    expect(planted().length).toBeGreaterThan(0)
    for (const f of readdirSync('/tmp').filter((f) => f.startsWith(`ci-canary-${id}-`))) execFileSync('rm', ['-f', join('/tmp', f)])
  })

  it('counts a 100 MiB blob the agent committed, and a 100 MiB file it left uncommitted, as binary without loading them: the host RSS stays bounded', async () => {
    const proj = project()
    const id = session()
    await workspaces.create({ projectDir: proj, sessionId: id })
    // `diff` forces text, which would make libgit2 load it whatever its size.
    await agent(id, `head -c 104857600 /dev/urandom > big.bin; echo '* diff' > .gitattributes; git add big.bin .gitattributes; git commit -qm big; head -c 104857600 /dev/urandom > work.bin`)
    const probe = `
      const { Workspaces } = require(${JSON.stringify(join(process.cwd(), 'index.js'))})
      const ws = new Workspaces(${JSON.stringify({ baseDir: base.path, engine, image: IMAGES.debian })})
      const before = process.resourceUsage().maxRSS
      ws.changes(${JSON.stringify(id)}, { patch: true }).then((c) => {
        const file = c.files.find((f) => f.path === 'big.bin')
        console.log(JSON.stringify({ file, work: c.uncommittedPatch, grewKiB: process.resourceUsage().maxRSS - before }))
      })`
    const out = JSON.parse(execFileSync(process.execPath, ['-e', probe], { encoding: 'utf8' }))
    console.log(`changes() with a 100 MiB blob and a 100 MiB uncommitted file: the host's max RSS grew ${out.grewKiB} KiB`)
    expect(out.file).toMatchObject({ status: 'added', binary: true, additions: 0 })
    expect(out.work).toBe('diff --git a/work.bin b/work.bin\nBinary files a/work.bin and b/work.bin differ\n')
    expect(out.grewKiB).toBeLessThan(48 * 1024)
  })
})
