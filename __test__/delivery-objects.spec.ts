// Delivery against git objects a hostile agent writes by hand inside its container (raw
// trees and commits through `git hash-object --literally`): each is refused by `export`
// and `push` with GIT, the project's refs, config, hooks, index, work tree and objects left
// as they were; what is accepted leaves a project `git fsck --strict` and `git gc` accept.
// On the engine under test (TEST_ENGINE_SOCKET).
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { addon, engine, git, gitProject, IMAGES, rejection, tempDir } from './helpers'

const base = tempDir('objects-base')
const dirs: Array<{ cleanup: () => void }> = [base]
const workspaces = new addon.Workspaces({ baseDir: base.path, engine, image: IMAGES.debian })
afterAll(async () => {
  for (const ws of await workspaces.list()) await workspaces.destroy(ws.sessionId).catch(() => {})
  dirs.forEach((d) => d.cleanup())
})

let n = 0
const session = () => `ob${process.pid}x${++n}`

function project(): string {
  const d = gitProject('objects-project', { 'a.txt': 'a\n', 'src/lib.ts': 'export {}\n' })
  dirs.push(d)
  return d.path
}

/** Shell functions for the agent: raw tree entries and commits, written as they are. */
const TOOLS = [
  'set -e; git config user.name Agent; git config user.email agent@example.com',
  `entry() { printf '%s %s\\0' "$1" "$2"; printf "$(printf %s "$3" | sed 's/../\\\\x&/g')"; }`,
  'raw() { git hash-object -t "$1" --literally -w --stdin; }',
  `commit() { printf 'tree %s\\nparent %s\\nauthor %s\\ncommitter A <a@b> 1700000000 +0000\\n\\nraw\\n' "$1" "$2" "\${3:-A <a@b> 1700000000 +0000}" | raw commit; }`,
  'blob=$(echo x | git hash-object -w --stdin)',
  `sub=$(printf '100644 blob %s\\tf\\n' $blob | git mktree)`,
].join('\n')

async function agent(id: string, script: string): Promise<string> {
  const env = await workspaces.environment(id, 'agent')
  const r = await env.shell.execute(`${TOOLS}\n${script}`, { toolRequestId: `agent-${Date.now()}` })
  const text = r.output.map((l) => l.text).join('\n')
  expect(r.exitCode, text).toBe(0)
  return text
}

/** What export must leave as it was: refs, HEAD, index, config, hooks, files, object counts. */
function projectState(proj: string): Record<string, string> {
  const read = (p: string) => readFileSync(join(proj, '.git', p)).toString('base64')
  return {
    refs: git(proj, 'for-each-ref', '--format=%(refname) %(objectname)'),
    head: read('HEAD'),
    index: read('index'),
    config: read('config'),
    hooks: readdirSync(join(proj, '.git', 'hooks')).map((h) => `${h}:${read(`hooks/${h}`)}`).join(','),
    status: execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: proj, encoding: 'utf8' }),
    files: execFileSync('sh', ['-c', 'find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 sha1sum'], { cwd: proj, encoding: 'utf8' }),
    objects: git(proj, 'count-objects', '-v'),
  }
}

// Each case: what it is, a script printing the agent's new HEAD commit, and what the refusal names.
const HOSTILE: Array<[string, string, string]> = [
  ['a directory entry naming the project’s blob', `t=$( { entry 40000 dir "$(git rev-parse HEAD:a.txt)"; } | raw tree); commit $t $h`, 'bad pointer'],
  ['a file entry naming the project’s tree', `t=$( { entry 100644 file "$(git rev-parse HEAD:src)"; } | raw tree); commit $t $h`, 'bad pointer'],
  ['a commit whose tree is a blob', `commit "$(git rev-parse HEAD:a.txt)" $h`, 'bad pointer'],
  ['a commit whose parent is a tree', `commit "$(git rev-parse HEAD^{tree})" "$(git rev-parse HEAD:src)"`, 'bad pointer'],
  ['duplicate entries', `t=$( { entry 100644 a $blob; entry 100644 a $blob; } | raw tree); commit $t $h`, 'duplicateEntries'],
  ['unsorted entries', `t=$( { entry 100644 b $blob; entry 100644 a $blob; } | raw tree); commit $t $h`, 'treeNotSorted'],
  ['.gitmodules as a symlink', `t=$( { entry 120000 .gitmodules $blob; } | raw tree); commit $t $h`, 'gitmodulesSymlink'],
  ['.git\\u200c', `t=$( { entry 40000 $'.git\\xe2\\x80\\x8c' $sub; } | raw tree); commit $t $h`, 'hasDotgit'],
  ['.g\\u200cit', `t=$( { entry 40000 $'.g\\xe2\\x80\\x8cit' $sub; } | raw tree); commit $t $h`, 'hasDotgit'],
  ['.git::$INDEX_ALLOCATION', `t=$( { entry 40000 '.git::$INDEX_ALLOCATION' $sub; } | raw tree); commit $t $h`, 'hasDotgit'],
  ['a submodule named ../../x', `m=$(printf '[submodule "../../x"]\\n\\tpath = x\\n\\turl = ./x\\n' | git hash-object -w --stdin); t=$( { entry 100644 .gitmodules $m; } | raw tree); commit $t $h`, 'gitmodulesName'],
  ['a malformed author', `commit "$(git rev-parse HEAD^{tree})" $h 'A <a@b> 0170 +0000'`, 'zeroPaddedDate'],
]

describe('export and push of objects written by hand', () => {
  it('refuse each object git fsck refuses with GIT, leaving the project and the remote as they were', async () => {
    const proj = project()
    const id = session()
    const info = await workspaces.create({ projectDir: proj, sessionId: id })
    const remote = tempDir('objects-remote')
    dirs.push(remote)
    git(remote.path, 'init', '-q', '--bare')
    const before = projectState(proj)
    for (const [what, script, named] of HOSTILE) {
      const head = (await agent(id, `git update-ref HEAD ${info.baseCommit}; h=${info.baseCommit}; c=$(${script}); echo $c > .git/$(git symbolic-ref HEAD); echo $c`)).trim().split('\n').pop()
      const exported = await rejection(workspaces.export(id, { uncommitted: false }))
      expect(exported.code, `${what}: ${exported.message}`).toBe('GIT')
      expect(exported.message, what).toContain(named)
      expect(projectState(proj), what).toEqual(before)
      const pushed = await rejection(workspaces.push(id, { url: remote.path, uncommitted: false }))
      expect(pushed.code, `${what}: ${pushed.message}`).toBe('GIT')
      expect(pushed.message, what).toContain(named)
      expect(git(remote.path, 'for-each-ref'), what).toBe('')
      expect(head, what).toMatch(/^[0-9a-f]{40}$/)
    }
    expect(readdirSync(join(base.path, 'delivery'))).toEqual([])
  })

  it('refuse a snapshot of a work tree whose names spell .git for another file system', async () => {
    const proj = project()
    const id = session()
    await workspaces.create({ projectDir: proj, sessionId: id })
    const before = projectState(proj)
    await agent(id, `d=$'.git\\xe2\\x80\\x8c'; mkdir -p "$d"; printf '[core]\\n\\thooksPath = /tmp\\n' > "$d/config"`)
    const refused = await rejection(workspaces.export(id, { uncommitted: true }))
    expect(refused.code, refused.message).toBe('GIT')
    expect(refused.message).toContain('hasDotgit')
    expect(projectState(proj)).toEqual(before)
  })

  it('accept well-formed work with a submodule and attributes, after which git fsck --strict and git gc are clean', async () => {
    const proj = project()
    const id = session()
    await workspaces.create({ projectDir: proj, sessionId: id })
    await agent(
      id,
      `printf '*.bin binary\\n' > .gitattributes; printf '[submodule "vendor"]\\n\\tpath = vendor\\n\\turl = ../vendor.git\\n' > .gitmodules
       git add .gitattributes .gitmodules; git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),vendor
       git commit -qm 'submodule and attributes'; echo wip > wip.txt`,
    )
    const done = await workspaces.export(id, { uncommitted: true })
    expect(done.snapshot).toBe(done.commit)
    git(proj, 'fsck', '--strict', '--no-dangling')
    git(proj, 'gc', '--quiet')
    git(proj, 'fsck', '--strict')
    expect(git(proj, 'show', `${done.branch}:wip.txt`)).toBe('wip')
  })
})
