import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { addon, rejection, tempDir } from './helpers'

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { cwd, encoding: 'utf8' }).trim()

const dirs: Array<{ cleanup: () => void }> = []
afterAll(() => dirs.forEach((d) => d.cleanup()))
function scratch(prefix: string) {
  const d = tempDir(prefix)
  dirs.push(d)
  return d.path
}

/** A project repository with a packed history and a second commit. */
function project(): string {
  const dir = scratch('project')
  git(dir, 'init', '-q', '-b', 'main')
  writeFileSync(join(dir, 'README.md'), '# project\n')
  mkdirSync(join(dir, 'src'))
  writeFileSync(join(dir, 'src', 'a.ts'), 'export const a = 1\n')
  git(dir, 'add', '.')
  git(dir, 'commit', '-q', '-m', 'first')
  git(dir, 'gc', '-q')
  writeFileSync(join(dir, 'src', 'b.ts'), 'export const b = 2\n')
  git(dir, 'add', '.')
  git(dir, 'commit', '-q', '-m', 'second')
  return dir
}

describe('CloneManager', () => {
  it('clones a full repository on session-<id> from the project HEAD, its objects copies (no inode shared)', async () => {
    const proj = project()
    const base = scratch('base')
    const clones = new addon.CloneManager({ baseDir: base })
    const path = await clones.createSessionClone(proj, 's1')
    expect(path).toBe(join(base, 'sessions', 'session-s1'))
    expect(statSync(join(path, '.git')).isDirectory()).toBe(true) // not a worktree
    expect(git(path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('session-s1')
    expect(git(path, 'rev-parse', 'HEAD')).toBe(git(proj, 'rev-parse', 'HEAD'))
    expect(git(path, 'status', '--porcelain')).toBe('')
    expect(git(path, 'log', '--format=%s')).toBe('second\nfirst')
    expect(readFileSync(join(path, 'src', 'b.ts'), 'utf8')).toBe('export const b = 2\n')
    const packs = readdirSync(join(proj, '.git', 'objects', 'pack')).filter((f) => f.endsWith('.pack'))
    expect(packs.length).toBeGreaterThan(0)
    for (const pack of packs) {
      const theirs = statSync(join(proj, '.git', 'objects', 'pack', pack))
      const ours = statSync(join(path, '.git', 'objects', 'pack', pack))
      expect([theirs.nlink, ours.nlink, ours.ino === theirs.ino]).toEqual([1, 1, false])
    }
    expect(git(path, 'fsck', '--no-progress')).toBe('')
    expect(git(path, 'remote', 'get-url', 'origin')).toBe(realpathSync(proj))
    expect(await clones.listSessionClones()).toEqual(['s1'])
    expect(clones.isGitRepo(path)).toBe(true)
    expect(clones.isGitRepo(base)).toBe(false)
  })

  it('is idempotent: a second call returns the same path and changes nothing', async () => {
    const proj = project()
    const clones = new addon.CloneManager({ baseDir: scratch('base') })
    const path = await clones.createSessionClone(proj, 'same')
    writeFileSync(join(path, 'work.txt'), 'session work')
    git(path, 'add', '.')
    git(path, 'commit', '-q', '-m', 'session commit')
    const head = git(path, 'rev-parse', 'HEAD')
    const concurrent = await Promise.all([clones.createSessionClone(proj, 'same'), clones.createSessionClone(proj, 'same')])
    expect(concurrent).toEqual([path, path])
    expect(git(path, 'rev-parse', 'HEAD')).toBe(head)
    expect(readFileSync(join(path, 'work.txt'), 'utf8')).toBe('session work')
  })

  it('concurrent first calls for one session make one whole clone', async () => {
    const proj = project()
    const base = scratch('base')
    const clones = new addon.CloneManager({ baseDir: base })
    const paths = await Promise.all([1, 2, 3].map(() => clones.createSessionClone(proj, 'race')))
    expect(new Set(paths).size).toBe(1)
    expect(git(paths[0], 'status', '--porcelain')).toBe('')
    expect(readdirSync(join(base, 'sessions'))).toEqual(['session-race'])
  })

  it('does not carry uncommitted project changes; git commit works in the clone', async () => {
    const proj = project()
    writeFileSync(join(proj, 'README.md'), 'dirty\n')
    writeFileSync(join(proj, 'untracked.txt'), 'u')
    const clones = new addon.CloneManager({ baseDir: scratch('base') })
    const path = await clones.createSessionClone(proj, 'clean')
    expect(readFileSync(join(path, 'README.md'), 'utf8')).toBe('# project\n')
    expect(existsSync(join(path, 'untracked.txt'))).toBe(false)
    writeFileSync(join(path, 'new.txt'), 'n')
    git(path, 'add', 'new.txt')
    git(path, 'commit', '-q', '-m', 'in clone')
    expect(git(path, 'log', '-1', '--format=%s')).toBe('in clone')
    expect(git(proj, 'branch', '--list', 'session-clean')).toBe('') // the project is untouched
  })

  it('initialises a non-repository project with one commit and a default .gitignore', async () => {
    const proj = scratch('plain')
    writeFileSync(join(proj, 'main.py'), 'print(1)\n')
    mkdirSync(join(proj, 'node_modules'))
    writeFileSync(join(proj, 'node_modules', 'dep.js'), '')
    const clones = new addon.CloneManager({ baseDir: scratch('base') })
    expect(clones.isGitRepo(proj)).toBe(false)
    const path = await clones.createSessionClone(proj, 'init')
    expect(clones.isGitRepo(proj)).toBe(true)
    expect(git(proj, 'rev-list', '--count', 'HEAD')).toBe('1')
    expect(readFileSync(join(proj, '.gitignore'), 'utf8')).toContain('node_modules/')
    const configured = spawnSync('git', ['config', '--global', 'user.email'], { encoding: 'utf8' }).stdout.trim()
    expect(git(proj, 'log', '-1', '--format=%ae')).toBe(configured || 'container-isolation@localhost')
    expect(readFileSync(join(path, 'main.py'), 'utf8')).toBe('print(1)\n')
    expect(existsSync(join(path, 'node_modules'))).toBe(false)
  })

  it('gives a repository without commits its first commit, authored from its git config', async () => {
    const proj = scratch('unborn')
    execFileSync('git', ['init', '-q', '-b', 'trunk'], { cwd: proj })
    execFileSync('git', ['config', 'user.name', 'Repo User'], { cwd: proj })
    execFileSync('git', ['config', 'user.email', 'repo@example.com'], { cwd: proj })
    writeFileSync(join(proj, 'a.txt'), 'a')
    const path = await new addon.CloneManager({ baseDir: scratch('base') }).createSessionClone(proj, 'unborn')
    expect(git(proj, 'rev-list', '--count', 'HEAD')).toBe('1')
    expect(git(proj, 'log', '-1', '--format=%an <%ae>')).toBe('Repo User <repo@example.com>')
    expect(git(proj, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('trunk')
    expect(git(proj, 'status', '--porcelain')).toBe('')
    expect(existsSync(join(proj, '.gitignore'))).toBe(false) // only a non-repository gets one
    expect(readFileSync(join(path, 'a.txt'), 'utf8')).toBe('a')
  })

  it('works as an ordinary repository from another path, as in a container mount', async () => {
    const proj = project()
    const base = scratch('base')
    const path = await new addon.CloneManager({ baseDir: base }).createSessionClone(proj, 'moved')
    const mentions = spawnSync('grep', ['-rIl', '--', base, join(path, '.git')], { encoding: 'utf8' })
    expect(mentions.status, mentions.stdout).toBe(1) // no file in .git names the clone's path
    const elsewhere = join(scratch('mount'), 'workspace')
    renameSync(path, elsewhere)
    expect(git(elsewhere, 'status', '--porcelain')).toBe('')
    writeFileSync(join(elsewhere, 'c.txt'), 'c')
    git(elsewhere, 'add', 'c.txt')
    git(elsewhere, 'commit', '-q', '-m', 'from the mount')
    expect(git(elsewhere, 'log', '--format=%s')).toBe('from the mount\nsecond\nfirst')
  })

  it('keeps an existing .gitignore when initialising', async () => {
    const proj = scratch('plain2')
    writeFileSync(join(proj, '.gitignore'), 'custom\n')
    writeFileSync(join(proj, 'x'), 'x')
    await new addon.CloneManager({ baseDir: scratch('base') }).createSessionClone(proj, 'keep')
    expect(readFileSync(join(proj, '.gitignore'), 'utf8')).toBe('custom\n')
  })

  it('rejects bad session ids with INVALID_ARGUMENT and a missing project with ENOENT', async () => {
    const clones = new addon.CloneManager({ baseDir: scratch('base') })
    const proj = project()
    for (const bad of ['../x', 'a b', '$(id)', 'a/b', '', 'x'.repeat(65)]) {
      expect((await rejection(clones.createSessionClone(proj, bad))).code, bad).toBe('INVALID_ARGUMENT')
    }
    expect((await rejection(clones.removeSessionClone('../x'))).code).toBe('INVALID_ARGUMENT')
    expect((await rejection(clones.createSessionClone('/nonexistent/project', 'ok'))).code).toBe('ENOENT')
    expect((await rejection(clones.createSessionClone(join(proj, 'README.md'), 'ok'))).code).toBe('ENOTDIR')
  })

  it('removal moves the clone to trash with its commits; only emptyTrash deletes', async () => {
    const proj = project()
    const base = scratch('base')
    const clones = new addon.CloneManager({ baseDir: base })
    const path = await clones.createSessionClone(proj, 'gone')
    writeFileSync(join(path, 'result.txt'), 'precious')
    git(path, 'add', '.')
    git(path, 'commit', '-q', '-m', 'precious work')
    const trashed = await clones.removeSessionClone('gone')
    expect(trashed).toMatch(new RegExp(`^${base}/\\.trash/[0-9T.Z]+/session-gone$`))
    expect(existsSync(path)).toBe(false)
    expect(git(trashed!, 'log', '-1', '--format=%s')).toBe('precious work')
    expect(git(trashed!, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('session-gone')
    expect(await clones.listSessionClones()).toEqual([])
    expect(await clones.removeSessionClone('gone')).toBeUndefined()
    expect(await clones.emptyTrash({ olderThanMs: 60_000 })).toEqual([])
    const bin = join(trashed!, '..')
    const old = new Date(Date.now() - 120_000)
    utimesSync(bin, old, old)
    expect(await clones.emptyTrash({ olderThanMs: 60_000 })).toEqual([bin])
    expect(existsSync(trashed!)).toBe(false)
  })
})
