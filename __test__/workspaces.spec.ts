import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, readdirSync, realpathSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { addon, engine, engineCli, folderManifest, git, gitProject, IMAGES, isRemote, plainFolder, rejection, tempDir } from './helpers'

const base = tempDir('ws-base')
const dirs: Array<{ cleanup: () => void }> = [base]
const workspaces = new addon.Workspaces({ baseDir: base.path, engine, image: IMAGES.debian })
afterAll(async () => {
  for (const ws of await workspaces.list()) await workspaces.destroy(ws.sessionId).catch(() => {})
  dirs.forEach((d) => d.cleanup())
})

function project(files: Record<string, string> = {}): string {
  const d = gitProject('ws-project', files)
  dirs.push(d)
  return d.path
}

let n = 0
const session = () => `ws${process.pid}x${++n}`

describe('Workspaces', () => {
  it('creates clone + running container, idempotently, and git works inside', async () => {
    const proj = project()
    const id = session()
    const info = await workspaces.create({ projectDir: proj, sessionId: id })
    expect(info).toMatchObject({
      sessionId: id,
      projectDir: proj,
      clonePath: join(base.path, 'sessions', `session-${id}`),
      branchName: `session-${id}`,
      containerMountPath: '/workspace',
      state: 'running',
      image: IMAGES.debian,
    })
    expect(await workspaces.create({ projectDir: proj, sessionId: id })).toEqual(info)
    const env = await workspaces.environment(id, 'thread-1')
    expect(env.cwd).toBe('/workspace')
    expect(env.homeDir).toBe('/root')
    await env.fileIO.writeFile('feature.txt', 'work\n')
    const r = await env.shell.execute(
      'git status --porcelain && git add feature.txt && git -c user.name=A -c user.email=a@b commit -qm feature && git log --format=%s -1 && git rev-parse --abbrev-ref HEAD',
      { toolRequestId: 'git-1' },
    )
    expect(r.exitCode).toBe(0)
    expect(r.output.map((l) => l.text)).toEqual(['?? feature.txt', 'feature', `session-${id}`])
    // On a remote engine the repository lives in a volume there; `changes` reads it back
    // into the clone on this machine.
    if (isRemote) await workspaces.changes(id)
    expect(git(info.clonePath, 'log', '--format=%s', '-1')).toBe('feature')
  })

  it('isolates two sessions of one project from each other and from the project', async () => {
    const proj = project()
    const [a, b] = [session(), session()]
    await workspaces.create({ projectDir: proj, sessionId: a })
    await workspaces.create({ projectDir: proj, sessionId: b })
    const envA = await workspaces.environment(a, 't')
    const envB = await workspaces.environment(b, 't')
    await envA.fileIO.writeFile('only-a.txt', 'a')
    expect(await envA.fileIO.fileExists('only-a.txt')).toBe(true)
    expect(await envB.fileIO.fileExists('only-a.txt')).toBe(false)
    expect(existsSync(join(proj, 'only-a.txt'))).toBe(false)
    const inB = await envB.shell.execute('ls /workspace', { toolRequestId: 'ls' })
    expect(inB.output.map((l) => l.text)).toEqual(['README.md'])
  })

  it('stop keeps the clone; environment() starts it again; destroy trashes the clone with its branch', async () => {
    const proj = project()
    const id = session()
    const info = await workspaces.create({ projectDir: proj, sessionId: id })
    await workspaces.stop(id)
    expect((await workspaces.get(id))?.state).toBe('stopped')
    const env = await workspaces.environment(id, 't')
    expect((await workspaces.get(id))?.state).toBe('running')
    await env.fileIO.writeFile('kept.txt', 'kept')
    if (isRemote) {
      // The work is in the engine's volume, not in the clone here: committed in the
      // container, and read back into the clone by destroy before it goes to the trash.
      const r = await env.shell.execute('git add . && git -c user.name=T -c user.email=t@e commit -qm "kept work"', { toolRequestId: 'keep' })
      expect(r.exitCode).toBe(0)
    } else {
      git(info.clonePath, 'add', '.')
      git(info.clonePath, 'commit', '-q', '-m', 'kept work')
    }
    await workspaces.destroy(id)
    expect(await workspaces.get(id)).toBeUndefined()
    expect((await rejection(addon.detectEngine(engine).then(() => new addon.DockerRuntime({ engine }).inspect(info.containerId)))).code).toBe('CONTAINER_NOT_FOUND')
    expect(existsSync(info.clonePath)).toBe(false)
    const trash = join(base.path, '.trash')
    const trashed = readdirSync(trash).map((d) => join(trash, d, `session-${id}`)).find((p) => existsSync(p))!
    expect(git(trashed, 'log', '--format=%s', '-1')).toBe('kept work')
    expect(git(trashed, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe(`session-${id}`)
  })

  it('recreates a container removed behind its back on the same clone, keeping the work', async () => {
    const proj = project()
    const id = session()
    const info = await workspaces.create({ projectDir: proj, sessionId: id })
    // Remotely the work lives in the engine's volume, which outlives the container.
    if (isRemote) await (await workspaces.environment(id, 't')).fileIO.writeFile('unsaved.txt', 'still here')
    else writeFileSync(join(info.clonePath, 'unsaved.txt'), 'still here')
    engineCli('rm', '-f', info.containerId)
    expect((await workspaces.get(id))?.state).toBe('missing')
    const again = await workspaces.create({ projectDir: proj, sessionId: id })
    expect(again.state).toBe('running')
    const env = await workspaces.environment(id, 't')
    expect(await env.fileIO.readFile('unsaved.txt')).toBe('still here')
  })

  it('a second node process finds the workspace with get() and runs a command in it', async () => {
    const proj = project()
    const id = session()
    await workspaces.create({ projectDir: proj, sessionId: id })
    const script = `
      const { Workspaces } = require(${JSON.stringify(join(__dirname, '..', 'index.js'))})
      ;(async () => {
        const ws = new Workspaces({ baseDir: ${JSON.stringify(base.path)}, engine: ${JSON.stringify(engine)} })
        const info = await ws.get(${JSON.stringify(id)})
        const env = await ws.environment(${JSON.stringify(id)}, 'other-process')
        const r = await env.shell.execute('cat README.md', { toolRequestId: 'p2' })
        console.log(JSON.stringify({ state: info.state, out: r.output.map((l) => l.text) }))
      })()`
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
    expect(child.status, child.stderr).toBe(0)
    expect(JSON.parse(child.stdout)).toEqual({ state: 'running', out: ['# p'] })
  })

  it("environment()'s third argument sets the shell's log folder and per-command timeout; out-of-range timeouts reject INVALID_ARGUMENT", async () => {
    const id = session()
    await workspaces.create({ projectDir: project(), sessionId: id })
    const logs = tempDir('ws-env-logs')
    dirs.push(logs)
    const env = await workspaces.environment(id, 'logged', { logDir: logs.path, timeoutMs: 1000 })
    const ok = await env.shell.execute('echo hello', { toolRequestId: 'echo-1' })
    expect(ok.exitCode).toBe(0)
    expect(ok.logFilePath?.startsWith(`${logs.path}/`)).toBe(true)
    expect(readFileSync(ok.logFilePath!, 'utf8')).toContain('hello')
    const slow = await env.shell.execute('sleep 5', { toolRequestId: 'sleep-1' })
    expect(slow.exitCode).not.toBe(0)
    expect(slow.output.at(-1)).toEqual({ stream: 'stderr', text: 'Command timed out after 1000 ms and was terminated' })
    // Two arguments: the defaults, as before.
    const plain = await workspaces.environment(id, 'plain')
    const r = await plain.shell.execute('echo plain', { toolRequestId: 'echo-2' })
    expect(r.logFilePath?.startsWith(logs.path)).toBe(false)
    for (const timeoutMs of [0, -1, 86_400_001, Number.NaN]) {
      expect((await rejection(workspaces.environment(id, 't', { timeoutMs }))).code).toBe('INVALID_ARGUMENT')
    }
    await workspaces.environment(id, 't', { timeoutMs: 86_400_000 })
  })

  it('rejects bad session ids and a missing project', async () => {
    for (const bad of ['../x', 'a b', '$(id)']) {
      expect((await rejection(workspaces.create({ projectDir: project(), sessionId: bad }))).code).toBe('INVALID_ARGUMENT')
    }
    expect((await rejection(workspaces.create({ projectDir: '/nonexistent/p', sessionId: session() }))).code).toBe('ENOENT')
  })

  it('refuses a misspelled option, at the top or nested, in every class and method, naming it and the nearest known one; nothing is made', async () => {
    const bad = (f: () => unknown) => {
      try {
        f()
      } catch (err) {
        return err as { code: string; message: string }
      }
      throw new Error('accepted')
    }
    const loose = (o: object) => o as any
    const refused = [
      [bad(() => new addon.Workspaces(loose({ baseDir: base.path, egres: 'none' }))), /new Workspaces: opts: unknown option 'egres' \(did you mean 'egress'\?\)/],
      [bad(() => new addon.Workspaces(loose({ baseDir: base.path, engine: { sockerPath: '/x' } }))), /opts\.engine: unknown option 'sockerPath' \(did you mean 'socketPath'\?\)/],
      [bad(() => new addon.DockerRuntime(loose({ engine, timout: 5 }))), /new DockerRuntime: opts: unknown option 'timout'/],
      [bad(() => new addon.DockerShell(loose({ container: 'c', cwd: '/', threadId: 't', engine, agnet: false }))), /unknown option 'agnet' \(did you mean 'agent'\?\)/],
      [bad(() => new addon.DockerFileIO(loose({ container: 'c', engine, rot: '/' }))), /new DockerFileIO: opts: unknown option 'rot'/],
      [bad(() => new addon.KubernetesRuntime(loose({ kubernetes: { namespce: 'x' } }))), /unknown option 'namespce' \(did you mean 'namespace'\?\)/],
      [await rejection(workspaces.create(loose({ projectDir: project(), sessionId: session(), egres: 'none' }))), /Workspaces\.create: opts: unknown option 'egres' \(did you mean 'egress'\?\)/],
      [await rejection(workspaces.create(loose({ projectDir: project(), sessionId: session(), resourcez: {} }))), /unknown option 'resourcez' \(did you mean 'resources'\?\)/],
      [await rejection(workspaces.create(loose({ projectDir: project(), sessionId: session(), resources: { memry: '1g' } }))), /opts\.resources: unknown option 'memry' \(did you mean 'memory'\?\)/],
      [await rejection(workspaces.create(loose({ projectDir: project(), sessionId: session(), egress: { allow: [], alow: [] } }))), /opts\.egress: unknown option 'alow' \(did you mean 'allow'\?\)/],
      [await rejection(new addon.DockerRuntime({ engine }).create(loose({ image: IMAGES.debian, mounts: [{ source: '/tmp', target: '/t', readOnly: true }] }))), /config\.mounts\[0\]: unknown option 'readOnly' \(did you mean 'readonly'\?\)/],
    ] as const
    for (const [err, message] of refused) {
      expect(err.code, err.message).toBe('INVALID_ARGUMENT')
      expect(err.message).toMatch(message)
    }
    expect(await workspaces.list()).toEqual(expect.not.arrayContaining([expect.objectContaining({ sessionId: `ws${process.pid}x${n}` })]))
  })
})

describe('Workspaces on a folder that is not a git repository', () => {
  const plain = (prefix: string) => {
    const d = plainFolder(prefix)
    dirs.push(d)
    return d.path
  }

  it("is snapshotted by default: its files (ignored ones left out, links as links) in the library's repository, the folder byte-for-byte the same after create, work, export and destroy", async () => {
    const folder = plain('ws-plain')
    const before = folderManifest(folder)
    const id = session()
    const info = await workspaces.create({ projectDir: folder, sessionId: id })
    const own = join(base.path, 'repositories', `session-${id}`)
    expect(info).toMatchObject({ projectDir: own, snapshotOf: realpathSync(folder), state: 'running' })
    expect(info.repositoryUrl).toBeUndefined()
    expect(git(own, 'log', '--format=%s', 'HEAD')).toBe(`Snapshot of ${realpathSync(folder)} (container-isolation)`)
    expect(git(info.clonePath, 'rev-parse', 'HEAD')).toBe(info.baseCommit)

    const env = await workspaces.environment(id, 't')
    const look = await env.shell.execute(
      'find . -path ./.git -prune -o -print | LC_ALL=C sort; test -x run.sh && echo executable; readlink app-link outside-link dangling-link; git status --porcelain',
      { toolRequestId: 'look' },
    )
    expect(look.exitCode).toBe(0)
    expect(look.output.map((l) => l.text)).toEqual([
      '.',
      './.gitignore',
      './README.md',
      './app-link',
      './dangling-link',
      './docs',
      './docs/.gitignore',
      './docs/guide.md',
      './outside-link',
      './run.sh',
      './src',
      './src/app.js',
      'executable',
      'src/app.js',
      '/etc/hostname',
      'nowhere',
    ])
    await env.fileIO.writeFile('src/new.js', 'export const added = 1\n')
    // On a remote engine the work is read back from its volume by export itself.
    const exported = await workspaces.export(id, { uncommitted: true })
    expect(exported).toMatchObject({ branch: `session/${id}`, projectDir: own })
    expect(git(own, 'show', `session/${id}:src/new.js`)).toBe('export const added = 1')

    await workspaces.destroy(id)
    expect(existsSync(own)).toBe(false)
    const trash = join(base.path, '.trash')
    expect(readdirSync(trash).some((bin) => existsSync(join(trash, bin, `repository-${id}`)))).toBe(true)
    expect(folderManifest(folder)).toEqual(before)
  })

  it("plainFolder: 'snapshot' given leaves the folder as it was; a ref is GIT_REF_NOT_FOUND and an unknown choice INVALID_ARGUMENT, both making nothing", async () => {
    const folder = plain('ws-plain-explicit')
    const before = folderManifest(folder)
    const id = session()
    const info = await workspaces.create({ projectDir: folder, sessionId: id, plainFolder: 'snapshot', devcontainer: false })
    expect(info.snapshotOf).toBe(realpathSync(folder))
    await workspaces.destroy(id)
    expect(folderManifest(folder)).toEqual(before)

    const refused = session()
    expect((await rejection(workspaces.create({ projectDir: folder, sessionId: refused, ref: 'main' }))).code).toBe('GIT_REF_NOT_FOUND')
    const bad = await rejection(workspaces.create({ projectDir: folder, sessionId: refused, plainFolder: 'copy' as 'snapshot' }))
    expect(bad.code).toBe('INVALID_ARGUMENT')
    expect(bad.message).toContain("plainFolder 'copy' is not 'snapshot' or 'initialize'")
    expect(await workspaces.get(refused)).toBeUndefined()
    expect(existsSync(join(base.path, 'repositories', `session-${refused}`))).toBe(false)
    expect(existsSync(join(base.path, 'sessions', `session-${refused}`))).toBe(false)
    expect(folderManifest(folder)).toEqual(before)
  })

  it("plainFolder: 'initialize' makes the folder a repository with one commit and a default .gitignore, as CloneManager does", async () => {
    const folder = tempDir('ws-plain-init')
    dirs.push(folder)
    writeFileSync(join(folder.path, 'main.py'), 'print(1)\n')
    const id = session()
    const info = await workspaces.create({ projectDir: folder.path, sessionId: id, plainFolder: 'initialize' })
    expect(info.projectDir).toBe(realpathSync(folder.path))
    expect(info.snapshotOf).toBeUndefined()
    expect(git(folder.path, 'rev-list', '--count', 'HEAD')).toBe('1')
    expect(readFileSync(join(folder.path, '.gitignore'), 'utf8')).toContain('node_modules/')
    expect(git(info.clonePath, 'rev-parse', 'HEAD')).toBe(git(folder.path, 'rev-parse', 'HEAD'))
  })
})

describe('Workspaces with devcontainer.json', () => {
  it('honours image, containerEnv, remoteEnv, ${localEnv} the host allows, lifecycle commands in every form', async () => {
    process.env.CI_WS_TOKEN = 'from-local-env'
    const proj = project({
      '.devcontainer/devcontainer.json': `{
        // JSONC, with trailing commas
        "image": "${IMAGES.debian}",
        "containerEnv": { "TOKEN": "\${localEnv:CI_WS_TOKEN}", },
        "remoteEnv": { "REMOTE": "yes" },
        "onCreateCommand": "echo created >> /tmp/lifecycle",
        "postCreateCommand": ["sh", "-c", "echo post-create >> /tmp/lifecycle"],
        "postStartCommand": { "one": "echo start-one >> /tmp/starts", "two": ["sh", "-c", "echo start-two >> /tmp/starts"] },
      }`,
    })
    const id = session()
    await workspaces.create({ projectDir: proj, sessionId: id, trust: { localEnv: ['CI_WS_TOKEN'] } })
    const env = await workspaces.environment(id, 't')
    const r = await env.shell.execute('echo "$TOKEN $REMOTE"; cat /tmp/lifecycle; sort /tmp/starts', { toolRequestId: 'dc' })
    expect(r.output.map((l) => l.text)).toEqual(['from-local-env yes', 'created', 'post-create', 'start-one', 'start-two'])
    await workspaces.stop(id)
    await workspaces.create({ projectDir: proj, sessionId: id }) // starts again: postStart again, postCreate not
    const again = await env.shell.execute('wc -l < /tmp/lifecycle; wc -l < /tmp/starts', { toolRequestId: 'dc2' })
    expect(again.output.map((l) => l.text.trim())).toEqual(['2', '4'])
  })

  it('initializeCommand is refused unless the host trusts host commands; then it runs on the host, first', async () => {
    const marker = join(base.path, `init-ran-${process.pid}`)
    const proj = project({
      '.devcontainer.json': `{ "image": "${IMAGES.debian}", "initializeCommand": ["touch", "${marker}"] }`,
    })
    const err = await rejection(workspaces.create({ projectDir: proj, sessionId: session() }))
    expect(err.code).toBe('DEVCONTAINER')
    expect(err.message).toContain('initializeCommand: runs a command on the host; allow with trust.hostCommands: true')
    expect(existsSync(marker)).toBe(false)
    await workspaces.create({ projectDir: proj, sessionId: session(), trust: { hostCommands: true } })
    expect(existsSync(marker)).toBe(true)
  })

  it('builds build.dockerfile FROM the local test image, offline', async () => {
    const proj = project({
      '.devcontainer/devcontainer.json': '{ "build": { "dockerfile": "Dockerfile", "args": { "GREETING": "built" } } }',
      '.devcontainer/Dockerfile': `FROM ${IMAGES.debian}\nARG GREETING\nRUN echo "$GREETING" > /built.txt\n`,
    })
    const id = session()
    const info = await workspaces.create({ projectDir: proj, sessionId: id })
    expect(info.image).toMatch(/^container-isolation-devcontainer-[0-9a-f]{16}:latest$/)
    const env = await workspaces.environment(id, 't')
    expect(await env.fileIO.readFile('/built.txt')).toBe('built\n')
  })

  it('a failing lifecycle command rejects DEVCONTAINER and leaves no container, but keeps the clone', async () => {
    const proj = project({ '.devcontainer.json': `{ "image": "${IMAGES.debian}", "postCreateCommand": "echo broken >&2; exit 3" }` })
    const id = session()
    const err = await rejection(workspaces.create({ projectDir: proj, sessionId: id }))
    expect(err.code).toBe('DEVCONTAINER')
    expect(err.message).toContain('postCreateCommand exited 3')
    expect(err.message).toContain('broken')
    const left = engineCli('ps', '-aq', '--filter', `label=dev.container-isolation.session=${id}`)
    expect(left.trim()).toBe('')
    expect(existsSync(join(base.path, 'sessions', `session-${id}`))).toBe(true)
  })

  it('devcontainer: false ignores the file', async () => {
    const proj = project({ '.devcontainer.json': '{ "image": "nope:none" }' })
    const info = await workspaces.create({ projectDir: proj, sessionId: session(), devcontainer: false })
    expect(info.image).toBe(IMAGES.debian)
    expect(readFileSync(join(info.clonePath, '.devcontainer.json'), 'utf8')).toContain('nope')
  })
})

describe('reapOrphans and workspaces', () => {
  it('with activeSessionIds: removes inactive sessions\' containers and trashes their clones (dry run first)', async () => {
    const proj = project()
    const [keep, drop] = [session(), session()]
    const kept = await workspaces.create({ projectDir: proj, sessionId: keep })
    const dropped = await workspaces.create({ projectDir: proj, sessionId: drop })
    writeFileSync(join(dropped.clonePath, 'work.txt'), 'do not lose me')
    const others = (await workspaces.list()).map((w) => w.sessionId).filter((s) => s !== drop)
    const dry = await addon.reapOrphans({ baseDir: base.path, engine, activeSessionIds: others, dryRun: true })
    expect(dry.containersRemoved).toEqual([dropped.containerId])
    // Also any clone an earlier test left without a workspace (a failed create).
    expect(dry.clonesTrashed).toContain(dropped.clonePath)
    expect((await workspaces.get(drop))?.state).toBe('running')
    const report = await addon.reapOrphans({ baseDir: base.path, engine, activeSessionIds: others })
    expect(report.containersRemoved).toEqual([dropped.containerId])
    expect(report.clonesTrashed).toHaveLength(dry.clonesTrashed.length)
    const moved = report.clonesTrashed.find((p) => p.endsWith(`/session-${drop}`))!
    expect(readFileSync(join(moved, 'work.txt'), 'utf8')).toBe('do not lose me')
    expect(await workspaces.get(drop)).toBeUndefined()
    expect((await workspaces.get(keep))?.state).toBe('running')
    expect(existsSync(kept.clonePath)).toBe(true)
  })

  /** A child process that creates a `process` workspace, prints its info and idles until killed. */
  async function processOwner(id: string, watchdog: boolean) {
    const proj = project()
    const script = `
      const { Workspaces } = require(${JSON.stringify(join(__dirname, '..', 'index.js'))})
      ;(async () => {
        const ws = new Workspaces({ baseDir: ${JSON.stringify(base.path)}, engine: ${JSON.stringify(engine)}, image: ${JSON.stringify(IMAGES.debian)}, watchdog: ${watchdog} })
        const info = await ws.create({ projectDir: ${JSON.stringify(proj)}, sessionId: ${JSON.stringify(id)}, lifetime: 'process' })
        console.log(JSON.stringify(info))
        setInterval(() => {}, 1 << 30)
      })()`
    const { spawn } = await import('node:child_process')
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
    const info = await new Promise<{ containerId: string; clonePath: string }>((resolve) => {
      let out = ''
      child.stdout!.on('data', (c) => {
        out += c
        if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]))
      })
    })
    const kill = async () => {
      child.kill('SIGKILL')
      await new Promise((r) => child.on('exit', r))
    }
    return { info, kill }
  }

  async function until(check: () => Promise<boolean>, ms: number) {
    const deadline = Date.now() + ms
    while (!(await check()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
  }

  it('a process-lifetime workspace of a SIGKILLed owner: container removed, clone to trash', async () => {
    const { info, kill } = await processOwner(session(), false)
    await kill()
    const report = await addon.reapOrphans({ baseDir: base.path, engine })
    expect(report.containersRemoved).toContain(info.containerId)
    expect(report.clonesTrashed).toHaveLength(1)
    expect(existsSync(info.clonePath)).toBe(false)
    expect(existsSync(report.clonesTrashed[0])).toBe(true)
  })

  it('the watchdog of a SIGKILLed owner removes its process workspace\'s container and trashes the clone', async () => {
    const id = session()
    const { info, kill } = await processOwner(id, true)
    writeFileSync(join(info.clonePath, 'work.txt'), 'kept in trash')
    await kill()
    // Seconds when the machine is quiet; Podman beside three other passes has taken over 10.
    await until(async () => (await workspaces.get(id)) === undefined, 30_000)
    expect(await workspaces.get(id)).toBeUndefined()
    expect(existsSync(info.clonePath)).toBe(false)
    const trash = join(base.path, '.trash')
    const trashed = readdirSync(trash)
      .map((bin) => join(trash, bin, `session-${id}`))
      .filter((p) => existsSync(p))
    expect(trashed).toHaveLength(1)
    expect(readFileSync(join(trashed[0], 'work.txt'), 'utf8')).toBe('kept in trash')
  }, 90_000)

  it('reapOrphans trashes a process workspace\'s clone whose container is already gone once its owner is gone', async () => {
    const id = session()
    const { info, kill } = await processOwner(id, false)
    engineCli('rm', '-f', info.containerId)
    // The owner lives: its workspace may still be recreated, so the clone stays.
    let report = await addon.reapOrphans({ baseDir: base.path, engine })
    expect(report.clonesTrashed).toEqual([])
    expect((await workspaces.get(id))?.state).toBe('missing')
    await kill()
    report = await addon.reapOrphans({ baseDir: base.path, engine })
    expect(report.containersRemoved).toEqual([])
    expect(report.clonesTrashed).toHaveLength(1)
    expect(report.clonesTrashed[0]).toContain(`session-${id}`)
    expect(existsSync(info.clonePath)).toBe(false)
    expect(await workspaces.get(id)).toBeUndefined()
  }, 120_000)
})

describe('Workspaces idleTimeoutMs', () => {
  it('stops an unused session container and starts it again on the next use', async () => {
    const idle = new addon.Workspaces({ baseDir: base.path, engine, image: IMAGES.debian, idleTimeoutMs: 800 })
    const proj = project()
    const id = session()
    await idle.create({ projectDir: proj, sessionId: id })
    const env = await idle.environment(id, 't')
    // A command longer than the timeout is not interrupted.
    const long = await env.shell.execute('sleep 1.5; echo survived', { toolRequestId: 'long' })
    expect(long.output.map((l) => l.text)).toEqual(['survived'])
    const deadline = Date.now() + 5000
    while ((await idle.get(id))?.state === 'running' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    expect((await idle.get(id))?.state).toBe('stopped')
    expect(await env.fileIO.readFile('README.md')).toBe('# p\n') // mounted: answered, and started again
    expect((await idle.get(id))?.state).toBe('running')
    const r = await env.shell.execute('echo back', { toolRequestId: 'back' })
    expect(r.output.map((l) => l.text)).toEqual(['back'])
    await idle.destroy(id)
  })
})
