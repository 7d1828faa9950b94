import { spawn } from 'node:child_process'
import { existsSync, lstatSync, readdirSync, readlinkSync } from 'node:fs'
import { basename, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { addon, engine, engineCli, gitProject, IMAGES, isRemote, tempDir } from './helpers'
import { closeServers, startServer, text } from './mcp-harness'

// Warm pools (docs/contract.md §6, "Warm pools"). The host rule is each test's own: the
// machine running the suite may be busy, and a pool that waits for it would make nothing.
const POOL = 'dev.container-isolation.pool'
const anyHost = { maxLoadPerCpu: 1e6, minAvailableMemory: 0 }
const dirs: Array<{ cleanup: () => void }> = []
const pools: Array<{ ws: InstanceType<typeof addon.Workspaces>; base: string }> = []

afterAll(async () => {
  await closeServers()
  for (const { ws, base } of pools) {
    for (const info of await ws.list()) await ws.destroy(info.sessionId).catch(() => {})
    for (const name of members(base)) engineCli('rm', '-f', name)
  }
  dirs.forEach((d) => d.cleanup())
})

function project(): string {
  const d = gitProject('pool-project', { 'src/app.js': 'export const app = 1\n' })
  dirs.push(d)
  return d.path
}

function pooled(size: number, extra: Record<string, unknown> = {}) {
  const base = tempDir('pool-base')
  dirs.push(base)
  const ws = new addon.Workspaces({ baseDir: base.path, engine, image: IMAGES.debian, pool: { size, ...anyHost }, ...extra })
  pools.push({ ws, base: base.path })
  return { ws, base: base.path }
}

/** Every pool member of `base`, claimed or not, by name. */
function members(base: string): string[] {
  const out = engineCli('ps', '-a', '--filter', `label=${POOL}`, '--filter', `label=dev.container-isolation.base-dir=${base}`, '--format', '{{.Names}}')
  return out.split('\n').filter(Boolean)
}
const unclaimed = (base: string) => members(base).filter((n) => n.startsWith('wp-'))
const idOf = (name: string) => engineCli('inspect', '--format', '{{.Id}}', name)
const labelOf = (name: string, key: string) => engineCli('inspect', '--format', `{{index .Config.Labels "${key}"}}`, name)
const lines = (r: { output: Array<{ text: string }> }) => r.output.map((l) => l.text)

let n = 0
const session = () => `pool${process.pid}x${++n}`

describe.skipIf(isRemote)('warm pool', () => {
  it('a create claims a ready member, which holds only its own session; the next gets another', async () => {
    const { ws, base } = pooled(2)
    const proj = project()
    expect(ws.poolStatus()).toMatchObject({ size: 2, ready: 0, made: 0 })
    expect(await ws.poolReady()).toMatchObject({ ready: 0, made: 0 }) // no settings learned yet
    const a = await ws.create({ projectDir: proj, sessionId: session(), lifetime: 'process' })
    expect(labelOf(a.containerId, POOL)).toBe('') // the first of its settings is made as without a pool
    expect(await ws.poolReady()).toMatchObject({ ready: 2, made: 2, claimed: 0 })
    const ready = new Map(unclaimed(base).map((name) => [idOf(name), name]))
    expect(ready.size).toBe(2)

    const envA = await ws.environment(a.sessionId, 't')
    const processes = 'for f in /proc/[0-9]*/comm; do cat "$f"; done | sort -u'
    const coldProcesses = lines(await envA.shell.execute(processes, { toolRequestId: 'ps-a' }))
    const coldEnv = lines(await envA.shell.execute('env | cut -d= -f1 | sort', { toolRequestId: 'env-a' }))
    await envA.fileIO.writeFile('secret-a.txt', 'only a\n')
    await envA.shell.execute('export SECRET_A=1; sleep 600 >/dev/null 2>&1 &', { toolRequestId: 'bg-a' })

    const b = await ws.create({ projectDir: proj, sessionId: session(), lifetime: 'process' })
    const bId = idOf(b.containerId)
    const member = ready.get(bId)
    expect(member).toBeDefined()
    expect(b.state).toBe('running')
    expect(b.clonePath).toBe(join(base, 'sessions', `session-${b.sessionId}`))
    expect(labelOf(b.containerId, 'dev.container-isolation.lifetime')).toBe('process')
    // The member's folder became the clone; its old path links to it.
    expect(lstatSync(join(base, 'pool', member!)).isSymbolicLink()).toBe(true)
    expect(readlinkSync(join(base, 'pool', member!))).toBe(b.clonePath)

    const envB = await ws.environment(b.sessionId, 't')
    expect(lines(await envB.shell.execute('ls -A', { toolRequestId: 'ls-b' })).sort()).toEqual(['.git', 'README.md', 'src'])
    expect(lines(await envB.shell.execute('git status --porcelain; git rev-parse --abbrev-ref HEAD', { toolRequestId: 'git-b' }))).toEqual([
      `session-${b.sessionId}`,
    ])
    const bProcesses = lines(await envB.shell.execute(processes, { toolRequestId: 'ps-b' }))
    const commandLines = 'for f in /proc/[0-9]*/cmdline; do tr "\\0" " " <"$f"; echo; done'
    expect(lines(await envA.shell.execute(commandLines, { toolRequestId: 'cmd-a' }))).toContain('sleep 600 ')
    expect(lines(await envB.shell.execute(commandLines, { toolRequestId: 'cmd-b' }))).not.toContain('sleep 600 ')
    // The listing's own `cat` and `sort` may or may not have started when /proc is read.
    for (const name of bProcesses.filter((n) => n !== 'sort' && n !== 'cat')) expect(coldProcesses).toContain(name)
    expect(lines(await envB.shell.execute('env | cut -d= -f1 | sort', { toolRequestId: 'env-b' }))).toEqual(coldEnv)
    await envB.fileIO.writeFile('from-b.txt', 'b\n')
    expect(existsSync(join(b.clonePath, 'from-b.txt'))).toBe(true)

    // Refilled, the pool gives the next session another container.
    expect(await ws.poolReady()).toMatchObject({ ready: 2, made: 3, claimed: 1 })
    const c = await ws.create({ projectDir: proj, sessionId: session(), lifetime: 'process' })
    expect(labelOf(c.containerId, POOL)).not.toBe('')
    expect(idOf(c.containerId)).not.toBe(bId)

    // A claimed session stops and starts again on its clone.
    await ws.stop(b.sessionId)
    const again = await ws.environment(b.sessionId, 't')
    expect(lines(await again.shell.execute('cat from-b.txt', { toolRequestId: 'cat-b' }))).toEqual(['b'])
    expect(idOf(b.containerId)).toBe(bId)

    // The member's agent came with it, on the direct line (the engine is on this machine);
    // destroyed, it leaves no line folder, neither under its session's name nor its member's.
    expect((await ws.containerAccess(c.sessionId)).line).toBe('direct')
    const memberOfC = basename(labelOf(c.containerId, 'dev.container-isolation.clone-path'))
    expect(memberOfC).toMatch(/^wp-/)
    expect(existsSync(join(base, 'lines', memberOfC))).toBe(true)
    await ws.destroy(c.sessionId)
    expect(existsSync(join(base, 'lines', c.containerId))).toBe(false)
    expect(existsSync(join(base, 'lines', memberOfC))).toBe(false)
  })

  it('a refill does not run while the pool is full', async () => {
    const { ws, base } = pooled(1)
    const proj = project()
    await ws.create({ projectDir: proj, sessionId: session(), lifetime: 'process' })
    expect(await ws.poolReady()).toMatchObject({ ready: 1, made: 1 })
    const before = unclaimed(base)
    expect(before).toHaveLength(1)
    // Another full pool's wait changes nothing: the same member, nothing more made.
    expect(await ws.poolReady()).toMatchObject({ ready: 1, made: 1, filling: false })
    expect(unclaimed(base)).toEqual(before)
    await ws.create({ projectDir: proj, sessionId: session(), lifetime: 'process' })
    expect(await ws.poolReady()).toMatchObject({ ready: 1, made: 2, claimed: 1 })
    expect(unclaimed(base)).toHaveLength(1)
    expect(unclaimed(base)).not.toEqual(before)
  })

  it('members retire when the settings change: the image re-tagged', async () => {
    const tag = `container-isolation-pool-test:${process.pid}`
    engineCli('tag', IMAGES.debian, tag)
    try {
      const { ws, base } = pooled(1, { image: tag })
      const proj = project()
      await ws.create({ projectDir: proj, sessionId: session(), lifetime: 'process' })
      await ws.poolReady()
      const old = unclaimed(base)
      expect(old).toHaveLength(1)
      engineCli('tag', IMAGES.busybox, tag)
      const b = await ws.create({ projectDir: proj, sessionId: session(), lifetime: 'process' })
      expect(labelOf(b.containerId, POOL)).toBe('') // the old member is not of its settings
      expect(await ws.poolReady()).toMatchObject({ ready: 1, retired: 1, claimed: 0 })
      const now = unclaimed(base)
      expect(now).toHaveLength(1)
      expect(now).not.toContain(old[0])
      expect(existsSync(join(base, 'pool', old[0]))).toBe(false)
      // Other resources are other settings too.
      const c = await ws.create({ projectDir: proj, sessionId: session(), lifetime: 'process', resources: { pids: 300 } })
      expect(labelOf(c.containerId, POOL)).toBe('')
      expect(await ws.poolReady()).toMatchObject({ ready: 1, retired: 2 })
    } finally {
      try {
        engineCli('rmi', tag)
      } catch {}
    }
  })

  it('a host that cannot spare a member gets none, and sessions are made as without a pool', async () => {
    const base = tempDir('pool-tight')
    dirs.push(base)
    const pool = { size: 1, maxLoadPerCpu: 1e6, minAvailableMemory: 2 ** 52 }
    const tight = new addon.Workspaces({ baseDir: base.path, engine, image: IMAGES.debian, pool })
    pools.push({ ws: tight, base: base.path })
    const proj = project()
    const a = await tight.create({ projectDir: proj, sessionId: session(), lifetime: 'process' })
    const status = await tight.poolReady()
    expect(status).toMatchObject({ ready: 0, made: 0 })
    expect(status!.waitingForHost).toMatch(/memory available/)
    expect(unclaimed(base.path)).toEqual([])
    const b = await tight.create({ projectDir: proj, sessionId: session(), lifetime: 'process' })
    expect(labelOf(b.containerId, POOL)).toBe('')
    await tight.destroy(a.sessionId)
    await tight.destroy(b.sessionId)
    expect(tight.poolStatus()).toMatchObject({ made: 0 })
  })

  it('pool options out of range are INVALID_ARGUMENT', () => {
    for (const pool of [{ size: 0 }, { size: 17 }, { size: 1, maxLoadPerCpu: 0 }, { size: 1, minAvailableMemory: -1 }]) {
      let err: (Error & { code?: string }) | undefined
      try {
        new addon.Workspaces({ baseDir: '/tmp/ci-pool-invalid', engine, pool })
      } catch (e) {
        err = e as Error & { code?: string }
      }
      expect(err?.code, JSON.stringify(pool)).toBe('INVALID_ARGUMENT')
    }
    expect(new addon.Workspaces({ baseDir: '/tmp/ci-pool-invalid', engine }).poolStatus()).toBeUndefined()
  })

  it("the MCP server's --pool is a number of containers", () => {
    const { parseMcpArgs } = require('../lib/mcp/args.js')
    expect(parseMcpArgs(['--pool', '3']).pool).toBe(3)
    expect(parseMcpArgs([]).pool).toBeUndefined()
    for (const bad of ['0', '17', 'x', '1.5']) expect(() => parseMcpArgs(['--pool', bad])).toThrow(/--pool/)
  })
})

/** A process that makes a pool, says READY with its members' folder, then exits or waits. */
const owner = `
const { Workspaces } = require(${JSON.stringify(join(__dirname, '..', 'index.js'))})
const [baseDir, projectDir, sessionId, socketPath, image, how] = process.argv.slice(1)
;(async () => {
  const pool = { size: 2, maxLoadPerCpu: 1e6, minAvailableMemory: 0 }
  const ws = new Workspaces({ baseDir, engine: { socketPath }, image, pool, watchdog: how === 'watch' })
  await ws.create({ projectDir, sessionId, lifetime: 'session' })
  await ws.poolReady()
  console.log('READY')
  if (how === 'exit') process.exit(0)
  setInterval(() => {}, 1000)
})().catch((err) => { console.error(err); process.exit(3) })
`

function startOwner(base: string, how: 'exit' | 'wait' | 'watch') {
  const proj = project()
  const id = session()
  const child = spawn(process.execPath, ['-e', owner, base, proj, id, engine.socketPath, IMAGES.debian, how], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const ready = new Promise<void>((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
      if (out.includes('READY')) resolve()
    })
    child.on('exit', (code) => (out.includes('READY') ? undefined : reject(new Error(`owner exited ${code}`))))
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, id, ready, exited }
}

describe.skipIf(isRemote)('warm pool members outlive no process', () => {
  it('exit removes the members (not the session) of a process that ends', async () => {
    const base = tempDir('pool-exit')
    dirs.push(base)
    const { id, ready, exited } = startOwner(base.path, 'exit')
    await ready
    expect(await exited).toBe(0)
    expect(unclaimed(base.path)).toEqual([])
    expect(readdirSync(join(base.path, 'pool'))).toEqual([])
    const ws = new addon.Workspaces({ baseDir: base.path, engine })
    pools.push({ ws, base: base.path })
    expect((await ws.get(id))?.state).toBe('running') // a 'session' session stays
  })

  it('the watchdog removes the members of a process killed with SIGKILL, with no further call', async () => {
    const base = tempDir('pool-watch')
    dirs.push(base)
    const { child, id, ready, exited } = startOwner(base.path, 'watch')
    await ready
    expect(unclaimed(base.path)).toHaveLength(2)
    child.kill('SIGKILL')
    await exited
    const deadline = Date.now() + 20_000
    while (unclaimed(base.path).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250))
    expect(unclaimed(base.path)).toEqual([])
    expect(readdirSync(join(base.path, 'pool'))).toEqual([])
    const ws = new addon.Workspaces({ baseDir: base.path, engine })
    pools.push({ ws, base: base.path })
    expect((await ws.get(id))?.state).toBe('running') // a 'session' session is not the watchdog's
  })

  it('reapOrphans removes the members of a process killed with SIGKILL', async () => {
    const base = tempDir('pool-kill')
    dirs.push(base)
    const { child, id, ready, exited } = startOwner(base.path, 'wait')
    await ready
    const left = unclaimed(base.path)
    expect(left).toHaveLength(2)
    child.kill('SIGKILL')
    await exited
    expect(unclaimed(base.path)).toEqual(left) // nothing ran at death
    const report = await addon.reapOrphans({ baseDir: base.path, engine })
    expect([...report.containersRemoved].sort()).toEqual([...left].sort())
    expect(unclaimed(base.path)).toEqual([])
    expect(readdirSync(join(base.path, 'pool'))).toEqual([])
    const ws = new addon.Workspaces({ baseDir: base.path, engine })
    pools.push({ ws, base: base.path })
    expect((await ws.get(id))?.state).toBe('running')
  })
})

describe.skipIf(isRemote)('the MCP server with --pool', () => {
  it('session_open after the first claims a ready container; the server takes its members with it', { timeout: 180_000 }, async () => {
    // The host rule's default load, which the server takes: this machine may be busy.
    process.env.CONTAINER_ISOLATION_POOL_MAX_LOAD = '1000000'
    const server = await startServer(project(), ['--image', IMAGES.debian, '--pool', '1']).finally(() => {
      delete process.env.CONTAINER_ISOLATION_POOL_MAX_LOAD
    })
    const first = await server.call('session_open', { title: 'first' })
    expect(first.isError, text(first)).toBeFalsy()
    // A member is ready once its agent runs (the pool's last step); the server shows no
    // more than its containers.
    const agentRuns = (name: string) => {
      try {
        return engineCli('top', name).includes('/.container-isolation-agent')
      } catch {
        return false
      }
    }
    const deadline = Date.now() + 90_000
    while (!unclaimed(server.base).some(agentRuns) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250))
    const member = unclaimed(server.base).find(agentRuns)
    expect(member, 'no pool member was made within 90 s').toBeDefined()
    await new Promise((r) => setTimeout(r, 500)) // from its agent's start to the pool's list
    const memberId = idOf(member!)
    const second = await server.call('session_open', { title: 'second' })
    expect(second.isError, text(second)).toBeFalsy()
    const session = second.structuredContent.session
    const [name] = engineCli('ps', '-a', '--filter', `label=dev.container-isolation.base-dir=${server.base}`, '--format', '{{.Names}}')
      .split('\n')
      .filter((n) => n.startsWith(`ws-${session}-`))
    expect(idOf(name)).toBe(memberId)
    await server.client.close()
    const gone = Date.now() + 30_000
    while (members(server.base).length > 0 && Date.now() < gone) await new Promise((r) => setTimeout(r, 250))
    expect(members(server.base)).toEqual([])
  })
})
