// `storage: 'volume'`: a session's repository in a named engine volume (as on an engine on
// another machine) instead of a bind-mounted host clone: made and labelled at create,
// filled before the container starts, read back for changes/export, removed on destroy and
// by reapOrphans once its session is gone. Runs on the engine under test (TEST_ENGINE_SOCKET).
import { spawn } from 'node:child_process'
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { addon, engine, engineCli, git, gitProject, IMAGES, tempDir } from './helpers'

const base = tempDir('wsv-base')
const dirs: Array<{ cleanup: () => void }> = [base]
const workspaces = new addon.Workspaces({ baseDir: base.path, engine, image: IMAGES.debian, storage: 'volume' })
afterAll(async () => {
  for (const ws of await workspaces.list()) await workspaces.destroy(ws.sessionId).catch(() => {})
  for (const v of ourVolumes()) {
    try {
      engineCli('volume', 'rm', '-f', v)
    } catch {}
  }
  dirs.forEach((d) => d.cleanup())
})

let n = 0
const session = () => `wsv${process.pid}x${++n}`

/** The volumes labelled with this suite's base directory. */
function ourVolumes(): string[] {
  const out = engineCli('volume', 'ls', '-q', '--filter', `label=dev.container-isolation.base-dir=${base.path}`)
  return out ? out.split('\n') : []
}

/** A host process from `fixtures/<script>`, and what it prints first (one JSON line). */
function startOwner<T>(script: string, baseDir: string, projectDir: string) {
  const child = spawn(process.execPath, [join(__dirname, 'fixtures', script), baseDir, projectDir, session(), JSON.stringify(engine)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const made = new Promise<T>((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (chunk) => {
      out += chunk
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]))
    })
    child.on('exit', (code) => reject(new Error(`owner exited early with ${code}`)))
  })
  return { child, made }
}

function volumeLabels(name: string): Record<string, string> {
  return JSON.parse(engineCli('volume', 'inspect', '--format', '{{json .Labels}}', name))
}

describe('Workspaces with storage: volume', () => {
  it('keeps the repository in a labelled volume; changes and export read the work back; destroy removes it', async () => {
    const proj = gitProject('wsv-project', { 'src/a.txt': 'a\n' })
    dirs.push(proj)
    const id = session()
    const info = await workspaces.create({ projectDir: proj.path, sessionId: id })
    expect(info.storage).toBe('volume')
    expect(info.volume).toBe(`${info.containerId}-workspace`)
    expect(info.state).toBe('running')
    expect(ourVolumes()).toEqual([info.volume])
    const labels = volumeLabels(info.volume!)
    expect(labels).toMatchObject({
      'dev.container-isolation.managed': 'true',
      'dev.container-isolation.session': id,
      'dev.container-isolation.base-dir': base.path,
      'dev.container-isolation.container': info.containerId,
    })
    const mounts = JSON.parse(engineCli('inspect', '--format', '{{json .Mounts}}', info.containerId))
    expect(mounts.find((m: { Destination: string }) => m.Destination === '/workspace')).toMatchObject({ Type: 'volume', Name: info.volume })

    const env = await workspaces.environment(id, 't')
    expect(await env.fileIO.readFile('src/a.txt')).toBe('a\n')
    await env.fileIO.writeFile('feature.txt', 'work\n')
    const r = await env.shell.execute(
      'git add feature.txt && git -c user.name=A -c user.email=a@b commit -qm feature && git log --format=%s -1 && echo pending > wip.txt',
      { toolRequestId: 'c1' },
    )
    expect(r.exitCode).toBe(0)
    expect(r.output.map((l) => l.text)).toEqual(['feature'])
    // The host clone is not the container's: nothing of the work is there until read back.
    expect(git(info.clonePath, 'log', '--format=%s', '-1')).toBe('init')

    const changes = await workspaces.changes(id)
    expect(changes.commits.map((c) => c.summary)).toEqual(['feature'])
    expect(changes.files.map((f) => f.path)).toEqual(['feature.txt'])
    expect(changes.uncommitted.map((u) => u.path)).toEqual(['wip.txt'])
    expect(git(info.clonePath, 'log', '--format=%s', '-1')).toBe('feature')

    const exported = await workspaces.export(id)
    expect(git(proj.path, 'log', '--format=%s', '-1', `session/${id}`)).toBe('feature')
    expect(git(proj.path, 'rev-parse', `session/${id}`)).toBe(exported.commit)
    expect(git(proj.path, 'show', `session/${id}:feature.txt`)).toBe('work')

    await workspaces.destroy(id)
    expect(ourVolumes()).toEqual([])
  })

  it('reads back a stopped container, symlinks kept as links and never followed', async () => {
    const proj = gitProject('wsv-project')
    dirs.push(proj)
    const id = session()
    const info = await workspaces.create({ projectDir: proj.path, sessionId: id })
    const env = await workspaces.environment(id, 't')
    const r = await env.shell.execute(
      'ln -s /etc/hostname leak && ln -s / root && mkdir -p d && echo x > d/x.txt && git add -A && git -c user.name=A -c user.email=a@b commit -qm links',
      { toolRequestId: 'l1' },
    )
    expect(r.exitCode).toBe(0)
    await workspaces.stop(id)
    const changes = await workspaces.changes(id)
    expect((await workspaces.get(id))?.state).toBe('stopped')
    expect(changes.commits.map((c) => c.summary)).toEqual(['links'])
    expect(changes.files.map((f) => f.path).sort()).toEqual(['d/x.txt', 'leak', 'root'])
    expect(lstatSync(join(info.clonePath, 'leak')).isSymbolicLink()).toBe(true)
    expect(readlinkSync(join(info.clonePath, 'root'))).toBe('/')
    expect(readdirSync(join(base.path, 'sessions')).filter((n) => n.startsWith('.readback'))).toEqual([])
    await workspaces.destroy(id)
  })

  it("gives the volume's files to remoteUser, who can commit there", async () => {
    const proj = gitProject('wsv-project', {
      '.devcontainer/devcontainer.json': `{ "image": "${IMAGES.debian}", "remoteUser": "agent" }`,
    })
    dirs.push(proj)
    const id = session()
    await workspaces.create({ projectDir: proj.path, sessionId: id })
    const env = await workspaces.environment(id, 't')
    const r = await env.shell.execute(
      'id -un; stat -c %U /workspace /workspace/README.md /workspace/.git/HEAD; echo w > w.txt && git add w.txt && git -c user.name=A -c user.email=a@b commit -qm w && git log --format=%s -1',
      { toolRequestId: 'u1' },
    )
    expect(r.output.map((l) => l.text)).toEqual(['agent', 'agent', 'agent', 'agent', 'w'])
    expect((await workspaces.changes(id)).commits.map((c) => c.summary)).toEqual(['w'])
    await workspaces.destroy(id)
  })

  it('a recreated container finds the volume as it was, not uploaded again', async () => {
    const proj = gitProject('wsv-project')
    dirs.push(proj)
    const id = session()
    const info = await workspaces.create({ projectDir: proj.path, sessionId: id })
    const env = await workspaces.environment(id, 't')
    await env.fileIO.writeFile('kept.txt', 'kept\n')
    await env.fileIO.writeFile('README.md', 'changed in the volume\n')
    engineCli('rm', '-f', info.containerId)
    // Without a container the volume is read through a reader container, removed after.
    const changes = await workspaces.changes(id)
    expect(changes.uncommitted.map((u) => `${u.status} ${u.path}`).sort()).toEqual([' M README.md', '?? kept.txt'])
    expect(engineCli('ps', '-a', '-q', '--filter', `name=${info.volume}-reader`)).toBe('')
    const again = await workspaces.create({ projectDir: proj.path, sessionId: id })
    expect(again.state).toBe('running')
    const env2 = await workspaces.environment(id, 't')
    expect(await env2.fileIO.readFile('kept.txt')).toBe('kept\n')
    expect(await env2.fileIO.readFile('README.md')).toBe('changed in the volume\n')
    await workspaces.destroy(id)
    expect(ourVolumes()).toEqual([])
  })

  it('reapOrphans removes a volume whose session and owner are gone, and keeps a live one', async () => {
    const proj = gitProject('wsv-project')
    dirs.push(proj)
    const id = session()
    const live = await workspaces.create({ projectDir: proj.path, sessionId: id })
    const host = readFileSync('/proc/sys/kernel/hostname', 'utf8').trim()
    const orphan = `wsv-orphan-${process.pid}`
    const label = (k: string, v: string) => ['--label', `dev.container-isolation.${k}=${v}`]
    engineCli(
      'volume', 'create',
      ...label('managed', 'true'), ...label('base-dir', base.path), ...label('session', 'gone'),
      ...label('container', `${orphan}-ctr`), ...label('lifetime', 'process'),
      ...label('owner-pid', '1'), ...label('owner-start', '1'), ...label('owner-boot-id', 'another-boot'),
      ...label('owner-host', host),
      orphan,
    )
    const dry = await addon.reapOrphans({ baseDir: base.path, engine, dryRun: true })
    expect(dry.volumesRemoved).toEqual([orphan])
    expect(ourVolumes().sort()).toEqual([live.volume!, orphan].sort())
    const report = await addon.reapOrphans({ baseDir: base.path, engine })
    expect(report.volumesRemoved).toEqual([orphan])
    expect(ourVolumes()).toEqual([live.volume])
    expect((await workspaces.list()).map((w) => w.storage)).toEqual(['volume'])
    expect((await workspaces.prune({ dryRun: true })).imagesRemoved).toEqual([])
    await workspaces.destroy(id)
  })
  it("a 'process' session's volume goes with its container when its owner is SIGKILLed (the watchdog)", async () => {
    const proj = gitProject('wsv-owner')
    dirs.push(proj)
    const started = startOwner<{ volume: string; container: string }>('volume-owner.cjs', base.path, proj.path)
    const { child } = started
    const made = await started.made
    expect(ourVolumes()).toContain(made.volume)
    child.kill('SIGKILL')
    const killedAt = Date.now()
    while (ourVolumes().includes(made.volume) && Date.now() - killedAt < 15_000) await new Promise((r) => setTimeout(r, 200))
    expect(ourVolumes()).not.toContain(made.volume)
    expect(engineCli('ps', '-aq', '--filter', `name=^${made.container}$`)).toBe('')
  })
})

describe('a warm pool with storage: volume', () => {
  const pool = { size: 1, maxLoadPerCpu: 1e6, minAvailableMemory: 0 }
  const volumesOf = (baseDir: string) => {
    const out = engineCli('volume', 'ls', '-q', '--filter', `label=dev.container-isolation.base-dir=${baseDir}`)
    return out ? out.split('\n') : []
  }
  const containersOf = (baseDir: string) => {
    const out = engineCli('ps', '-a', '--format', '{{.Names}}', '--filter', `label=dev.container-isolation.base-dir=${baseDir}`)
    return out ? out.split('\n') : []
  }
  const sweep = (baseDir: string) => {
    for (const c of containersOf(baseDir)) engineCli('rm', '-f', c)
    for (const v of volumesOf(baseDir)) engineCli('volume', 'rm', '-f', v)
  }

  it("a claimed member's volume holds the session's clone and nothing of another; destroy removes it", async () => {
    const poolBase = tempDir('wsv-pool')
    dirs.push(poolBase)
    const proj = gitProject('wsv-pool-project', { 'src/a.txt': 'a\n' })
    dirs.push(proj)
    const ws = new addon.Workspaces({ baseDir: poolBase.path, engine, image: IMAGES.debian, storage: 'volume', pool })
    try {
      const a = await ws.create({ projectDir: proj.path, sessionId: session(), lifetime: 'process' })
      await (await ws.environment(a.sessionId, 't')).fileIO.writeFile('only-a.txt', 'a\n')
      expect(await ws.poolReady()).toMatchObject({ ready: 1 })
      const member = containersOf(poolBase.path).find((c) => c.startsWith('wp-'))!
      expect(volumesOf(poolBase.path)).toContain(`${member}-workspace`)
      expect(engineCli('exec', member, 'ls', '-A', '/workspace')).toBe('') // nothing until a claim
      const memberId = engineCli('inspect', '--format', '{{.Id}}', member)

      const b = await ws.create({ projectDir: proj.path, sessionId: session(), lifetime: 'process' })
      expect(engineCli('inspect', '--format', '{{.Id}}', b.containerId)).toBe(memberId)
      expect(b.storage).toBe('volume')
      expect(b.volume).toBe(`${member}-workspace`)
      expect((await ws.get(b.sessionId))?.volume).toBe(b.volume)
      const envB = await ws.environment(b.sessionId, 't')
      expect(await envB.fileIO.readFile('src/a.txt')).toBe('a\n')
      const listed = await envB.shell.execute('ls -A; git status --porcelain; git rev-parse --abbrev-ref HEAD', { toolRequestId: 'ls' })
      expect(listed.output.map((l) => l.text)).toEqual(['.git', 'README.md', 'src', `session-${b.sessionId}`])
      await envB.fileIO.writeFile('from-b.txt', 'b\n')
      const reaped = await addon.reapOrphans({ baseDir: poolBase.path, engine })
      expect(reaped.volumesRemoved).toEqual([])
      expect(await envB.fileIO.readFile('from-b.txt')).toBe('b\n')

      await ws.destroy(b.sessionId)
      expect(volumesOf(poolBase.path)).not.toContain(b.volume)
    } finally {
      for (const s of await ws.list()) await ws.destroy(s.sessionId).catch(() => {})
      await ws.poolReady().catch(() => {})
      sweep(poolBase.path)
    }
  })

  it("killed with SIGKILL: the watchdog takes the unclaimed member and its volume; a claimed member's volume outlives its container and reapOrphans", async () => {
    const poolBase = tempDir('wsv-pool-kill')
    dirs.push(poolBase)
    const proj = gitProject('wsv-pool-kill-project', { 'src/a.txt': 'a\n' })
    dirs.push(proj)
    type Made = { volume: string; containerId: string; sessionId: string }
    const started = startOwner<{ a: Made; b: Made }>('volume-pool-owner.cjs', poolBase.path, proj.path)
    const { child } = started
    const made = await started.made
    const ws = new addon.Workspaces({ baseDir: poolBase.path, engine, image: IMAGES.debian, storage: 'volume' })
    try {
      expect(made.b.volume).toMatch(/^wp-.*-workspace$/)
      const member = containersOf(poolBase.path).find((c) => c.startsWith('wp-'))!
      expect(volumesOf(poolBase.path)).toContain(`${member}-workspace`)
      child.kill('SIGKILL')
      const killedAt = Date.now()
      // The watchdog removes the member's container, then its volume: waited for both.
      const memberLeft = () => containersOf(poolBase.path).includes(member) || volumesOf(poolBase.path).includes(`${member}-workspace`)
      while (memberLeft() && Date.now() - killedAt < 20_000) await new Promise((r) => setTimeout(r, 200))
      expect(containersOf(poolBase.path)).not.toContain(member)
      expect(volumesOf(poolBase.path).sort()).toEqual([made.a.volume, made.b.volume].sort())
      // B's container lost; its owner gone: its volume is still its record's.
      engineCli('rm', '-f', made.b.containerId)
      const reaped = await addon.reapOrphans({ baseDir: poolBase.path, engine })
      expect(reaped.volumesRemoved).toEqual([])
      expect(volumesOf(poolBase.path)).toContain(made.b.volume)
      const changes = await ws.changes(made.b.sessionId) // read from the claimed volume
      expect(changes.uncommitted.map((u) => `${u.status} ${u.path}`)).toEqual(['?? from-b.txt'])
      const again = await ws.create({ projectDir: proj.path, sessionId: made.b.sessionId })
      expect(again.volume).toBe(made.b.volume)
      const envB = await ws.environment(made.b.sessionId, 't')
      expect(await envB.fileIO.readFile('from-b.txt')).toBe('b\n')
    } finally {
      child.kill('SIGKILL')
      for (const s of await ws.list()) await ws.destroy(s.sessionId).catch(() => {})
      sweep(poolBase.path)
    }
  })
})
