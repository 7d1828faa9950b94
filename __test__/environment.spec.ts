// createDockerEnvironment as Magenta's `Environment`, and its git client: the state of
// repositories made on the host with the git CLI and bind-mounted into a container must be
// what the host's git reports for them, on the agent path and on the engine path.
import { execFileSync } from 'node:child_process'
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addon, engine, IMAGES, suiteRuntime, tempDir } from './helpers'

const { runtime, cleanup } = suiteRuntime('environment')
const host = tempDir('environment-host')
const ws = tempDir('environment-ws')
const workspaces = new addon.Workspaces({ baseDir: ws.path, engine, image: IMAGES.debian })
afterAll(async () => {
  for (const w of await workspaces.list()) await workspaces.destroy(w.sessionId).catch(() => {})
  await cleanup()
  host.cleanup()
  ws.cleanup()
})

const MOUNT = '/work'
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@e', ...args], { cwd, encoding: 'utf8' })
const lines = (text: string) => text.split('\n').filter((l) => l !== '').length

function write(dir: string, name: string, text: string) {
  mkdirSync(join(dir, name, '..'), { recursive: true })
  writeFileSync(join(dir, name), text)
}

function repo(name: string, commits: string[] = ['Initial commit']): string {
  const dir = join(host.path, name)
  mkdirSync(dir, { recursive: true })
  git(dir, 'init', '-q', '-b', 'main')
  commits.forEach((message, i) => {
    write(dir, `file${i}.txt`, `${i}\n`)
    git(dir, 'add', '.')
    git(dir, 'commit', '-q', '-m', message)
  })
  return dir
}

/** The state as the host's git CLI reports it, by other commands than ours. */
function hostState(dir: string) {
  const headSha = (() => {
    try {
      return git(dir, 'rev-parse', '-q', '--verify', 'HEAD').trim()
    } catch {
      return ''
    }
  })()
  const branch = (() => {
    try {
      return git(dir, 'symbolic-ref', '--short', '-q', 'HEAD').trim() || undefined
    } catch {
      return undefined
    }
  })()
  const staged = headSha
    ? git(dir, 'diff', '--cached', '--name-only')
    : git(dir, 'ls-files', '--cached')
  return {
    repoRoot: `${MOUNT}/${dir.slice(host.path.length + 1)}`,
    branch,
    headSha,
    headSubject: headSha ? git(dir, 'log', '-1', '--format=%s').replace(/\n$/, '') : '',
    stagedCount: lines(staged),
    unstagedCount: lines(git(dir, 'diff', '--name-only')),
    untrackedCount: lines(git(dir, 'ls-files', '--others', '--exclude-standard', '--directory')),
  }
}

let debian = ''
let busybox = ''
let dirty = ''
let detached = ''
let unborn = ''
beforeAll(async () => {
  chmodSync(host.path, 0o755) // the container's user `agent` reads the repositories too
  mkdirSync(join(host.path, 'plain'))
  dirty = repo('dirty', ['Initial commit', 'Fix: ünïcode & "quotes"\n\nbody line'])
  write(dirty, 'staged.ts', 's\n')
  write(dirty, 'both.ts', 'b\n')
  git(dirty, 'add', 'staged.ts', 'both.ts')
  write(dirty, 'both.ts', 'b2\n')
  write(dirty, 'file0.txt', 'changed\n')
  write(dirty, 'new.ts', 'n\n')
  write(dirty, 'sub dir/other new.ts', 'n\n')
  detached = repo('detached', ['one', 'two'])
  git(detached, 'checkout', '-q', '--detach', 'HEAD~1')
  unborn = repo('unborn', [])
  write(unborn, 'a.txt', 'a\n')
  git(unborn, 'add', 'a.txt')
  write(unborn, 'b.txt', 'b\n')
  const mounts = [{ source: host.path, target: MOUNT }]
  debian = await runtime.create({ image: IMAGES.debian, workingDirectory: '/tmp', mounts })
  busybox = await runtime.create({ image: IMAGES.busybox, workingDirectory: '/tmp', mounts })
  await runtime.start(debian)
  await runtime.start(busybox)
})

const client = (opts: { cwd: string; container?: string; agent?: boolean; user?: string; env?: Record<string, string> }) =>
  new addon.ContainerGitClient({ engine, container: debian, ...opts })

describe('createDockerEnvironment as Magenta\'s Environment', () => {
  it('has the docker capabilities, config and no-op clients, in a plain writable object', async () => {
    const env = await addon.createDockerEnvironment({ engine, container: debian, threadId: 't', cwd: '/tmp' })
    const capabilities: Set<string> = env.availableCapabilities
    for (const c of ['file-io', 'shell', 'threads']) expect(capabilities.has(c)).toBe(true)
    for (const c of ['lsp', 'nvim', 'scripts', 'diagnostics']) expect(capabilities.has(c)).toBe(false)
    expect(env.environmentConfig).toEqual({ type: 'docker', container: debian, cwd: '/tmp' })
    expect(env.cwd).toBe('/tmp')
    expect(env.homeDir).toBe('/root')
    expect('sandboxViolationHandler' in env).toBe(true)
    expect(env.sandboxViolationHandler).toBeUndefined()
    expect('luaExecutor' in env).toBe(false)
    expect(Object.getPrototypeOf(env)).toBe(Object.prototype)
    for (const method of ['requestHover', 'requestReferences', 'requestDefinition', 'requestTypeDefinition'] as const) {
      expect(await env.lspClient[method]('/tmp/x.ts', { line: 0, character: 0 })).toEqual([])
    }
    expect(await env.diagnosticsProvider.getDiagnostics()).toBe('Diagnostics are not available in Docker environment')
    expect(await env.gitClient.getState()).toBeUndefined()

    const other = new addon.DockerFileIO({ engine, container: debian })
    env.fileIO = other
    env.cwd = '/elsewhere'
    expect(env.fileIO).toBe(other)
    expect(env.cwd).toBe('/elsewhere')
    for (const key of Object.keys(env)) expect(Object.getOwnPropertyDescriptor(env, key)?.writable, key).toBe(true)
  })

  it('gives a git client bound to its cwd', async () => {
    const env = await addon.createDockerEnvironment({ engine, container: debian, threadId: 't', cwd: `${MOUNT}/dirty` })
    expect(await env.gitClient.getState()).toEqual(hostState(dirty))
  })
})

for (const agent of [true, false]) {
  describe(`ContainerGitClient.getState, ${agent ? 'agent' : 'engine'} path`, () => {
    it('is undefined outside a repository', async () => {
      expect(await client({ cwd: `${MOUNT}/plain`, agent }).getState()).toBeUndefined()
      expect(await client({ cwd: '/', agent }).getState()).toBeUndefined()
    })

    it('a dirty work tree: branch, HEAD, staged, unstaged and untracked as the host git says', async () => {
      const state = await client({ cwd: `${MOUNT}/dirty`, agent }).getState()
      expect(state).toEqual({
        repoRoot: `${MOUNT}/dirty`,
        branch: 'main',
        headSha: git(dirty, 'rev-parse', 'HEAD').trim(),
        headSubject: 'Fix: ünïcode & "quotes"',
        stagedCount: 2,
        unstagedCount: 2,
        untrackedCount: 2,
      })
      expect(state).toEqual(hostState(dirty))
      expect(await client({ cwd: `${MOUNT}/dirty/sub dir`, agent }).getState()).toEqual(state)
    })

    it('a detached HEAD has branch undefined (the key present)', async () => {
      const state = await client({ cwd: `${MOUNT}/detached`, agent }).getState()
      expect(state).toEqual(hostState(detached))
      expect(state).toHaveProperty('branch', undefined)
      expect(Object.keys(state!)).toContain('branch')
      expect(state!.headSubject).toBe('one')
    })

    it('a repository without commits has an empty sha and subject', async () => {
      const state = await client({ cwd: `${MOUNT}/unborn`, agent }).getState()
      expect(state).toEqual({ ...hostState(unborn), headSha: '', headSubject: '', stagedCount: 1, untrackedCount: 1 })
      expect(state!.branch).toBe('main')
    })

    it('is undefined, never a rejection, where git cannot answer', async () => {
      expect(await client({ cwd: `${MOUNT}/missing`, agent }).getState()).toBeUndefined()
      expect(await client({ cwd: `${MOUNT}/dirty`, agent, container: busybox }).getState()).toBeUndefined()
      expect(await client({ cwd: `${MOUNT}/dirty`, agent, container: 'no-such-container' }).getState()).toBeUndefined()
    })
  })
}

describe('ContainerGitClient: users, environment, locks, size', () => {
  it('answers for a clone owned by another user (safe.directory), as root and as agent', async () => {
    const owned = repo('owned')
    write(owned, 'u.txt', 'u\n')
    const expected = hostState(owned)
    for (const path of [owned, ...walk(owned)]) chownSync(path, 1000, 1000)
    expect(await client({ cwd: `${MOUNT}/owned` }).getState()).toEqual(expected)
    expect(await client({ cwd: `${MOUNT}/dirty`, user: 'agent' }).getState()).toEqual(hostState(dirty))
    expect(await client({ cwd: `${MOUNT}/dirty`, user: 'agent', agent: false }).getState()).toEqual(hostState(dirty))
  })

  it('runs with the given environment', async () => {
    const env = { GIT_DIR: `${MOUNT}/dirty/.git`, GIT_WORK_TREE: `${MOUNT}/dirty` }
    for (const agent of [true, false]) {
      expect(await client({ cwd: '/tmp', env, agent }).getState()).toEqual(hostState(dirty))
    }
  })

  it('never writes the index nor leaves index.lock, even when status would refresh it', async () => {
    const r = repo('locks')
    const old = new Date(Date.now() - 3600_000)
    utimesSync(join(r, 'file0.txt'), old, old)
    const index = join(r, '.git', 'index')
    const before = { bytes: readFileSync(index), mtimeMs: statSync(index).mtimeMs }
    for (const agent of [true, false]) {
      expect(await client({ cwd: `${MOUNT}/locks`, agent }).getState()).toMatchObject({ unstagedCount: 0 })
    }
    expect(readFileSync(index)).toEqual(before.bytes)
    expect(statSync(index).mtimeMs).toBe(before.mtimeMs)
    expect(readdirSync(join(r, '.git'))).not.toContain('index.lock')
  })

  it('counts a status of many thousand lines', async () => {
    const big = repo('big')
    for (let i = 0; i < 6000; i++) writeFileSync(join(big, `untracked-${i}-${'x'.repeat(40)}.txt`), '')
    for (const agent of [true, false]) {
      const state = await client({ cwd: `${MOUNT}/big`, agent }).getState()
      expect(state).toMatchObject({ untrackedCount: 6000, stagedCount: 0, unstagedCount: 0 })
    }
  })

  it('rejects a relative cwd when constructed', () => {
    expect(() => client({ cwd: 'relative' })).toThrow(/absolute/)
  })
})

describe('gitClient of removed containers and of workspaces', () => {
  it('resolves undefined once the container is stopped or gone', async () => {
    const mounts = [{ source: host.path, target: MOUNT }]
    const id = await runtime.create({ image: IMAGES.debian, workingDirectory: MOUNT, mounts })
    await runtime.start(id)
    const env = await addon.createDockerEnvironment({ engine, container: id, threadId: 't', cwd: `${MOUNT}/dirty` })
    expect(await env.gitClient.getState()).toEqual(hostState(dirty))
    await runtime.stop(id)
    await expect(env.gitClient.getState()).resolves.toBeUndefined()
    await runtime.remove(id)
    await expect(env.gitClient.getState()).resolves.toBeUndefined()
  })

  it('Workspaces.environment has a git client on the session branch', async () => {
    const proj = repo('project')
    const id = `env${process.pid}`
    const info = await workspaces.create({ projectDir: proj, sessionId: id })
    const env = await workspaces.environment(id, 't')
    await env.fileIO.writeFile('new.txt', 'n\n')
    expect(await env.gitClient.getState()).toMatchObject({
      repoRoot: info.containerMountPath,
      branch: info.branchName,
      headSha: git(proj, 'rev-parse', 'HEAD').trim(),
      headSubject: 'Initial commit',
      untrackedCount: 1,
    })
  })
})

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    return e.isDirectory() ? [path, ...walk(path)] : [path]
  })
}
