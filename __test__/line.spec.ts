import { createHash } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addon, engine, engineCli, eventually, gitProject, IMAGES, isRemote, suiteRuntime, tempDir } from './helpers'

// The direct line to the session agent (a unix socket this process listens on in the
// container's line folder), what the container can do to it from inside, and every handle
// of a session closing with the session rather than with the garbage collector.
const { runtime, baseDir, cleanup } = suiteRuntime('line')
const byCli: string[] = []
const dirs: Array<{ cleanup: () => void }> = []
afterAll(async () => {
  await cleanup()
  for (const id of byCli) engineCli('rm', '-f', '-v', id)
  dirs.forEach((d) => d.cleanup())
})

/** Where the agent of a container this library made finds this process's socket. */
const SOCKET = `/.container-isolation-line/host-${process.pid}.sock`
const access = (id: string) => addon.containerAccess(id, engine)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function container(extra: Record<string, unknown> = {}) {
  const id = await runtime.create({ image: IMAGES.debian, workingDirectory: '/tmp', mounts: [], ...extra })
  await runtime.start(id)
  return id
}

/** A script run as root in the container through the engine's own exec (not the agent). */
function asRoot(id: string, script: string) {
  return engineCli('exec', '-u', '0', id, 'sh', '-c', script)
}

/** Kills the container's agent and waits for the next call to start another one. */
async function restartAgent(id: string) {
  const before = await access(id)
  asRoot(id, `kill -9 ${before.agentPid}`)
  for (let i = 0; i < 200; i++) {
    const now = await access(id)
    if (now.agentPid !== before.agentPid) return now
    await sleep(50)
  }
  throw new Error(`the agent of ${id} was not started again`)
}

/** What a command run through the agent says (whichever line it takes). */
async function said(id: string, command: string) {
  const shell = new addon.DockerShell({ container: id, cwd: '/tmp', threadId: 'line', engine })
  const r = await shell.execute(command, { toolRequestId: `line-${Math.random()}` })
  return { exitCode: r.exitCode, lines: r.output.map((l) => `${l.stream}:${l.text}`).sort() }
}

/** A perl one-liner in the background, as root, detached from the exec that starts it. */
function perlInBackground(id: string, program: string, ready: string) {
  asRoot(id, `setsid perl -MIO::Socket::UNIX -e '${program}' ${SOCKET} ${ready} >/dev/null 2>&1 < /dev/null &
    for i in $(seq 1 100); do [ -e ${ready} ] && exit 0; sleep 0.05; done; exit 1`)
}

describe.skipIf(isRemote)('the direct line to the session agent', () => {
  it('a fresh container takes it, and requests behave as over the exec stream', async () => {
    const id = await container()
    const line = await access(id)
    expect(line).toMatchObject({ path: 'agent', line: 'direct' })
    expect(line.reason ?? undefined).toBeUndefined()
    expect(existsSync(join(baseDir, 'lines', id, `host-${process.pid}.sock`))).toBe(true)
    expect(await said(id, 'echo out; echo err >&2; exit 3')).toEqual({ exitCode: 3, lines: ['stderr:err', 'stdout:out'] })
    // Through the agent (no host path), past the 4 MiB reply window both ways.
    const io = new addon.DockerFileIO({ container: id, hostAccess: false, engine })
    const big = Buffer.alloc((5 << 20) + 17)
    for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff
    await io.writeFile('/tmp/big.bin', big)
    expect((await io.readBinaryFile('/tmp/big.bin')).equals(big)).toBe(true)
    expect(await io.readdir('/tmp')).toContain('big.bin')
    // The agent holds the line's socket (its stdin and stdout are the exec's pipes).
    expect(asRoot(id, `ls -l /proc/${line.agentPid}/fd | grep -c socket: || true`)).not.toBe('0')
  })

  it('the line folder is read-only in the container and not among its mounts', async () => {
    const id = await container()
    expect(asRoot(id, `touch /.container-isolation-line/x 2>&1 || echo refused`)).toMatch(/refused/)
    expect((await runtime.inspect(id)).mounts?.map((m) => m.target)).not.toContain('/.container-isolation-line')
  })

  it('a container the engine CLI made keeps the exec stream, saying why', async () => {
    const name = `ci-line-cli-${process.pid}`
    engineCli('run', '-d', '--name', name, IMAGES.debian, 'sleep', '600')
    byCli.push(name)
    const line = await access(name)
    expect(line).toMatchObject({ path: 'agent', line: 'exec' })
    expect(line.reason).toMatch(/no line folder/)
    expect(await said(name, 'echo ok')).toEqual({ exitCode: 0, lines: ['stdout:ok'] })
  })

  it('CONTAINER_ISOLATION_LINE=off keeps new agents on the exec stream', async () => {
    const id = await container()
    process.env.CONTAINER_ISOLATION_LINE = 'off'
    try {
      expect(await access(id)).toMatchObject({ line: 'exec', reason: 'CONTAINER_ISOLATION_LINE=off' })
    } finally {
      delete process.env.CONTAINER_ISOLATION_LINE
    }
  })

  it('closes the session socket when its container is removed', async () => {
    const id = await container()
    expect((await access(id)).line).toBe('direct')
    const folder = join(baseDir, 'lines', id)
    expect(existsSync(join(folder, `host-${process.pid}.sock`))).toBe(true)
    await runtime.remove(id)
    expect(existsSync(folder)).toBe(false)
  })
})

describe.skipIf(isRemote)('the line tampered with from inside (as root, with CAP_SYS_ADMIN)', () => {
  // The folder is mounted read-only; root with CAP_SYS_ADMIN can unmount it and put its own
  // entry where the agent looks. The host never connects to anything: the agent refuses
  // what is not a socket, and what answers it there is not the host.
  const tampered = async (setUp: string) => {
    const id = await container({ capAdd: ['SYS_ADMIN'], mounts: [{ source: engine.socketPath, target: '/run/engine.sock' }] })
    expect((await access(id)).line).toBe('direct')
    asRoot(id, `umount /.container-isolation-line && ${setUp}`)
    return id
  }

  const cases: Array<[string, string, RegExp]> = [
    ['replaced by a symlink to the engine\'s socket', `ln -s /run/engine.sock ${SOCKET}`, /is a symlink, not a socket/],
    ['replaced by a plain file', `: > ${SOCKET}`, /is a plain file, not a socket/],
    ['missing', 'true', /no entry for the line/],
  ]
  for (const [name, setUp, reason] of cases) {
    it(`the socket entry ${name}: refused, the exec stream goes on`, async () => {
      const id = await tampered(setUp)
      const after = await restartAgent(id)
      expect(after).toMatchObject({ path: 'agent', line: 'exec' })
      expect(after.reason).toMatch(reason)
      expect(await said(id, 'echo still')).toEqual({ exitCode: 0, lines: ['stdout:still'] })
    })
  }

  it('a listener of the container\'s own making that says nothing: refused after its silence', async () => {
    const id = await tampered('true')
    perlInBackground(id, 'unlink $ARGV[0]; $s = IO::Socket::UNIX->new(Local => $ARGV[0], Listen => 5) or die; open F, ">$ARGV[1]"; close F; while ($c = $s->accept) { push @held, $c }', '/tmp/listening')
    const after = await restartAgent(id)
    expect(after).toMatchObject({ path: 'agent', line: 'exec' })
    expect(after.reason).toMatch(/said nothing within 5 s/)
    expect(await said(id, 'echo still')).toEqual({ exitCode: 0, lines: ['stdout:still'] })
  })

  it('a listener of the container\'s own making that accepts the agent: the agent is started again without the line', async () => {
    const id = await tampered('true')
    // Answers `Done` under request id 1 (the `Line` offer's), as the host would.
    perlInBackground(id, 'unlink $ARGV[0]; $s = IO::Socket::UNIX->new(Local => $ARGV[0], Listen => 5) or die; open F, ">$ARGV[1]"; close F; while ($c = $s->accept) { $c->syswrite(pack("VVC", 5, 1, 33)); push @held, $c }', '/tmp/listening')
    const after = await restartAgent(id)
    expect(after).toMatchObject({ path: 'agent', line: 'exec' })
    expect(after.reason).toMatch(/something other than this host/)
    expect(await said(id, 'echo still')).toEqual({ exitCode: 0, lines: ['stdout:still'] })
  })

  it('a process other than the agent connecting first, without the token: refused', async () => {
    const id = await container()
    expect((await access(id)).line).toBe('direct')
    // Connected while the first agent runs: the next start finds it first in the queue.
    perlInBackground(id, '$c = IO::Socket::UNIX->new(Peer => $ARGV[0]) or die; open F, ">$ARGV[1]"; close F; sleep 600', '/tmp/connected')
    const after = await restartAgent(id)
    expect(after).toMatchObject({ path: 'agent', line: 'exec' })
    expect(after.reason).toMatch(/refused: the peer is pid \d+ in the container, not its agent/)
    expect(await said(id, 'echo still')).toEqual({ exitCode: 0, lines: ['stdout:still'] })
  })
})

describe.skipIf(isRemote)('handles close with the session, not the garbage collector', () => {
  const fds = () => readdirSync('/proc/self/fd').length

  it('16 sessions created and destroyed with their FileIO and Shell kept: the fd count comes back (one leaked per session would be 16)', async () => {
    const base = tempDir('line-ws')
    const project = gitProject('line-project', { 'a.txt': 'a\n' })
    dirs.push(base, project)
    const workspaces = new addon.Workspaces({ baseDir: base.path, engine, image: IMAGES.debian })
    const kept: unknown[] = []
    const session = async (i: number) => {
      const sessionId = `line${process.pid}x${i}`
      await workspaces.create({ projectDir: project.path, sessionId })
      const env = await workspaces.environment(sessionId, 't')
      expect(await env.fileIO.readFile('a.txt')).toBe('a\n')
      await env.fileIO.writeFile('b.txt', 'b\n')
      expect((await env.shell.execute('cat b.txt', { toolRequestId: `h-${i}` })).exitCode).toBe(0)
      const access = await workspaces.containerAccess(sessionId)
      expect(access.line, access.reason).toBe('direct')
      kept.push(env)
      await workspaces.destroy(sessionId)
    }
    await session(0) // the process's pools, agent copy and engine connections
    const before = fds()
    for (let i = 1; i <= 16; i++) await session(i)
    console.log(`open fds: ${before} before 16 sessions, ${fds()} after`)
    expect(fds() - before).toBeLessThanOrEqual(4)
    expect(kept).toHaveLength(17)
  }, 600_000)

  it('stop closes them too', async () => {
    const base = tempDir('line-stop')
    const project = gitProject('line-stop-project', { 'a.txt': 'a\n' })
    dirs.push(base, project)
    const workspaces = new addon.Workspaces({ baseDir: base.path, engine, image: IMAGES.debian })
    const sessionId = `linestop${process.pid}`
    await workspaces.create({ projectDir: project.path, sessionId })
    const warm = await workspaces.environment(sessionId, 't')
    await warm.shell.execute('true', { toolRequestId: 's-0' })
    await workspaces.stop(sessionId)
    const before = fds()
    const env = await workspaces.environment(sessionId, 't')
    expect(await env.fileIO.readFile('a.txt')).toBe('a\n')
    expect((await env.shell.execute('true', { toolRequestId: 's-1' })).exitCode).toBe(0)
    expect(fds()).toBeGreaterThan(before)
    await workspaces.stop(sessionId)
    expect(fds() - before).toBeLessThanOrEqual(1)
    await workspaces.destroy(sessionId)
  }, 120_000)
})

describe.skipIf(isRemote)('the egress relay over the direct line', () => {
  // A server of this test on the host's loopback, reached from a session without a network
  // through its relay: `target.test` is pinned to it and allowed, `other.test` is pinned to
  // another loopback address the policy does not allow.
  const BIG = Buffer.alloc((3 << 20) + 4099)
  for (let i = 0; i < BIG.length; i++) BIG[i] = (i * 131 + (i >> 12)) & 0xff
  const bigHash = createHash('sha256').update(BIG).digest('hex')
  let server: Server
  let port = 0
  const egress = () => ({ allow: ['127.0.0.1/32'], hosts: { 'target.test': ['127.0.0.1'], 'other.test': ['127.0.0.2'] } })
  beforeAll(async () => {
    server = createServer((req, res) => res.end(req.url === '/big' ? BIG : 'relayed-ok'))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })
  afterAll(() => server?.close())

  const curl = (url: string) => ['curl', '-sS', '--max-time', '20', url]
  /** What the session's policy lets through and what it refuses, from inside the container. */
  async function egressWorks(exec: (command: string[]) => Promise<string>) {
    expect(await exec(curl(`http://target.test:${port}/`))).toBe('relayed-ok')
    const big = await exec(['sh', '-c', `curl -sS --max-time 60 http://target.test:${port}/big | sha256sum`])
    expect(big.split(' ')[0]).toBe(bigHash)
    expect(await exec(curl(`http://other.test:${port}/`))).toContain(`container-isolation: egress to other.test:${port} refused by the session's policy`)
  }

  async function relayedContainer(extra: Record<string, unknown> = {}) {
    const id = await container({ egress: egress(), lifetime: 'process', ...extra })
    const exec = async (command: string[]) => (await runtime.exec(id, { command })).stdout
    return { id, exec }
  }

  /** Kills the container's relay and has this process start another one. */
  async function restartRelay(id: string) {
    asRoot(id, 'kill -9 "$(cat /run/.container-isolation-relay.pid 2>/dev/null || cat /tmp/.container-isolation-relay.pid)"')
    await eventually('the relay seen gone', async () => (await access(id)).relayLine === undefined)
    await runtime.start(id)
    return access(id)
  }

  it('a relayed session\'s relay is on the line: the proxy and a forwarded port work over it', async () => {
    const base = tempDir('line-relay')
    const project = gitProject('line-relay-project', { 'a.txt': 'a\n' })
    dirs.push(base, project)
    const workspaces = new addon.Workspaces({ baseDir: base.path, engine, image: IMAGES.debian, egress: egress() })
    const sessionId = `linerelay${process.pid}`
    try {
      await workspaces.create({ projectDir: project.path, sessionId, lifetime: 'process' })
      expect(await workspaces.containerAccess(sessionId)).toMatchObject({ line: 'direct', relayLine: 'direct' })
      const env = await workspaces.environment(sessionId, 't')
      await egressWorks(async (command) => {
        const r = await env.shell.execute(command.map((a) => `'${a}'`).join(' '), { toolRequestId: `r-${Math.random()}` })
        return r.output.filter((l) => l.stream === 'stdout').map((l) => l.text).join('\n')
      })
      // The relay's own proxy port, forwarded to this host: a dial over the line.
      const forward = await workspaces.forwardPort(sessionId, 3128)
      const viaForward = await new Promise<string>((resolve, reject) => {
        request({ host: '127.0.0.1', port: forward.hostPort, path: `http://target.test:${port}/`, headers: { host: `target.test:${port}` } }, (res) => {
          let body = ''
          res.on('data', (d) => (body += d))
          res.on('end', () => resolve(body))
        }).on('error', reject).end()
      })
      expect(viaForward).toBe('relayed-ok')
      await forward.close()
      expect((await workspaces.containerAccess(sessionId)).relayLine).toBe('direct')
    } finally {
      await workspaces.destroy(sessionId).catch(() => {})
    }
  }, 120_000)

  const cases: Array<[string, string, RegExp]> = [
    ['replaced by a symlink to the engine\'s socket', `ln -s /run/engine.sock ${SOCKET}`, /is a symlink, not a socket/],
    ['replaced by a plain file', `: > ${SOCKET}`, /is a plain file, not a socket/],
  ]
  for (const [name, setUp, reason] of cases) {
    it(`the line's socket ${name}: the relay keeps its exec, and the policy still holds`, async () => {
      const { id, exec } = await relayedContainer({ capAdd: ['SYS_ADMIN'], mounts: [{ source: engine.socketPath, target: '/run/engine.sock' }] })
      expect((await access(id)).relayLine).toBe('direct')
      asRoot(id, `umount /.container-isolation-line && ${setUp}`)
      const after = await restartRelay(id)
      expect(after.relayLine).toBe('exec')
      expect(after.relayReason).toMatch(reason)
      await egressWorks(exec)
    }, 120_000)
  }

  it('CONTAINER_ISOLATION_LINE=off keeps the relay on its exec', async () => {
    process.env.CONTAINER_ISOLATION_LINE = 'off'
    try {
      const { id, exec } = await relayedContainer()
      expect(await access(id)).toMatchObject({ relayLine: 'exec', relayReason: 'CONTAINER_ISOLATION_LINE=off' })
      await egressWorks(exec)
    } finally {
      delete process.env.CONTAINER_ISOLATION_LINE
    }
  }, 120_000)
})
