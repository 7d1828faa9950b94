// The session's network under the host's control: a session has no route out, its tools
// reach what the policy allows through the agent's proxies, and nothing else — against a
// test "internet" in a network namespace (egress-net.ts) and canaries on the host.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { request } from 'node:http'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startInternet, PRIVATE, PRIVATE_RANGE, PUBLIC, type Internet } from './egress-net'
import { egressSessions } from './egress-sessions'
import { addon, engine, engineCli, eventually, gitProject, IMAGES, isRemote, rejection, tempDir } from './helpers'

type Event = import('../index').EgressEventInfo

const hosts = {
  'internet.test': [PUBLIC.ns],
  'private.test': [PRIVATE.ns],
  'hostprivate.test': [PRIVATE.host],
  'loop.test': ['127.0.0.1'],
}

let net: Internet
const { base, dirs, workspaces, session, run, cleanup } = egressSessions('egress')

beforeAll(async () => {
  net = await startInternet()
})
afterAll(async () => {
  await cleanup()
  await net?.stop()
})

function httpGet(port: number): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/index.html' }, (res) => {
      let body = ''
      res.on('data', (d) => (body += d))
      res.on('end', () => resolve(body))
    }).on('error', reject).end()
  })
}

const curl = (id: string, args: string) => run(id, `curl -sS --max-time 20 ${args}`)
const refusedLine = (host: string, port: number) => `container-isolation: egress to ${host}:${port} refused`

describe('egress', () => {
  it('an allowed name is reached by curl over HTTP, HTTPS and SOCKS5, and by git', async () => {
    const id = await session({ allow: ['internet.test'], hosts })
    const env = await workspaces.environment(id, 'egress')
    await env.fileIO.writeFile('ca.pem', net.caPem)
    expect(await curl(id, 'http://internet.test/')).toEqual({ exitCode: 0, text: 'internet-ok' })
    expect(await curl(id, '--cacert /workspace/ca.pem https://internet.test/')).toEqual({ exitCode: 0, text: 'internet-tls-ok' })
    expect(await curl(id, '-x socks5h://127.0.0.1:1080 http://internet.test/')).toEqual({ exitCode: 0, text: 'internet-ok' })
    const remote = await run(id, 'git ls-remote http://internet.test/repo.git')
    expect(remote.exitCode).toBe(0)
    expect(remote.text).toContain(net.commit)
  })

  it('a denied name gets the 403 line, over HTTP and CONNECT', async () => {
    const id = await session({ allow: ['*'], deny: ['internet.test'], hosts })
    const plain = await curl(id, '-i http://internet.test/')
    expect(plain.text).toContain('403')
    expect(plain.text).toContain(refusedLine('internet.test', 80))
    const tunnel = await curl(id, 'https://internet.test/')
    expect(tunnel.exitCode).not.toBe(0)
    expect(tunnel.text).toMatch(/403/)
  })

  it("every canary is refused under 'public' and under name patterns, and reached only when its range is allowed", async () => {
    const canaries = [
      ['127.0.0.1', net.loopbackPort], ['loop.test', net.loopbackPort],
      [PRIVATE.host, net.hostPrivatePort], ['hostprivate.test', net.hostPrivatePort],
      [PRIVATE.ns, 80], ['private.test', 80],
    ] as const
    const publicId = await session({ allow: ['*'], hosts })
    const named = await session({ allow: ['loop.test', 'hostprivate.test', 'private.test'], hosts })
    for (const id of [publicId, named]) {
      for (const [host, port] of canaries) {
        // NO_PROXY keeps loopback direct; the proxy is named to ask it for the canary anyway.
        const r = await curl(id, `-i --noproxy '' -x http://127.0.0.1:3128 http://${host}:${port}/`)
        expect(r.text, `${host}:${port}`).toContain(refusedLine(host, port))
      }
    }
    const ranges = await session({ allow: ['private.test', `${PRIVATE.ns}/32`, `127.0.0.1/32:${net.loopbackPort}`], hosts })
    expect((await curl(ranges, `http://private.test/`)).text).toBe('canary-ns-private')
    expect((await curl(ranges, `http://${PRIVATE.ns}/`)).text).toBe('canary-ns-private')
    expect((await curl(ranges, `--noproxy '' http://127.0.0.1:${net.loopbackPort}/`)).text).toBe('canary-loopback')
    expect((await curl(ranges, `-i http://${PRIVATE.host}:${net.hostPrivatePort}/`)).text).toContain('refused')
    const hostRange = await session({ allow: [PRIVATE_RANGE], hosts })
    expect((await curl(hostRange, `http://${PRIVATE.host}:${net.hostPrivatePort}/`)).text).toBe('canary-host-private')
  })

  it("the engines' names for the host are refused under 'public' wherever they point, and opened only by an entry naming one", async () => {
    // Pinned to the test internet's public address: the name alone refuses them.
    const names = ['host.docker.internal', 'gateway.docker.internal', 'host.containers.internal']
    const pinned = { ...hosts, ...Object.fromEntries(names.map((name) => [name, [PUBLIC.ns]])) }
    const publicId = await session({ allow: ['*', '*.internal'], hosts: pinned })
    for (const name of names) {
      const r = await curl(publicId, `-i http://${name}/`)
      expect(r.text, name).toContain(refusedLine(name, 80))
      expect(r.text, name).toContain('only an allow entry naming it opens it')
    }
    const named = await session({ allow: ['host.docker.internal:80'], hosts: pinned })
    expect((await curl(named, 'http://host.docker.internal/')).text).toBe('internet-ok')
    expect((await curl(named, '-i http://gateway.docker.internal/')).text).toContain(refusedLine('gateway.docker.internal', 80))
  })

  it('a program that ignores the proxy settings gets no connection and no name resolution', async () => {
    const id = await session({ allow: ['*'], hosts })
    expect((await run(id, `bash -c 'exec 3<>/dev/tcp/${PUBLIC.ns}/7'`)).exitCode).not.toBe(0)
    expect((await run(id, 'getent hosts internet.test')).exitCode).not.toBe(0)
    expect((await run(id, 'getent hosts example.com')).exitCode).not.toBe(0)
    expect((await curl(id, `--noproxy "*" http://${PUBLIC.ns}/`)).exitCode).not.toBe(0)
    const routes = await run(id, 'tail -n +2 /proc/net/route')
    expect(routes.text.trim()).toBe('')
  })

  it('onRequest is asked once for ten parallel connections, remembered, and a throwing or false answer refuses', async () => {
    const asked: Array<{ sessionId: string; host: string; port: number }> = []
    const id = await session({
      allow: [],
      hosts,
      onRequest: async (req) => {
        asked.push({ sessionId: req.sessionId, host: req.host, port: req.port })
        await new Promise((r) => setTimeout(r, 200))
        return true
      },
    })
    const batch = 'for i in $(seq 10); do curl -s --max-time 20 http://internet.test/ & done; wait'
    expect((await run(id, batch)).text.split('\n').filter((l) => l === 'internet-ok')).toHaveLength(10)
    expect(asked).toEqual([{ sessionId: id, host: 'internet.test', port: 80 }])
    expect((await run(id, batch)).text.split('\n').filter((l) => l === 'internet-ok')).toHaveLength(10)
    expect(asked).toHaveLength(1)

    const throwing = await session({ hosts, onRequest: () => { throw new Error('no') } })
    expect((await curl(throwing, '-i http://internet.test/')).text).toContain(refusedLine('internet.test', 80))
    const saysNo = await session({ hosts, onRequest: () => false })
    expect((await curl(saysNo, '-i http://internet.test/')).text).toContain('403')
    const noAsker = await session({ hosts })
    expect((await curl(noAsker, '-i http://internet.test/')).text).toContain('no onRequest')
  })

  it('an onRequest that does not answer within askTimeoutMs refuses, and its late answer is not taken', async () => {
    // The default wait, 30 s, is the unit tests' (destination_gate_tests.rs).
    const late: Array<(yes: boolean) => void> = []
    const id = await session({ hosts, askTimeoutMs: 1500, onRequest: () => new Promise<boolean>((resolve) => late.push(resolve)) })
    const started = Date.now()
    expect((await curl(id, '-i --max-time 60 http://internet.test/')).text).toContain('403')
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500)
    expect(late).toHaveLength(1)
    late.forEach((answer) => answer(true))
    expect((await curl(id, '-i http://internet.test/')).text).toContain('403')
    expect((await rejection(workspaces.setEgress(id, { allow: [], askTimeoutMs: 0 }))).code).toBe('INVALID_ARGUMENT')
  })

  it('setEgress takes effect on a running session', async () => {
    const id = await session('none')
    expect((await curl(id, '-i http://internet.test/')).text).toContain('403')
    await workspaces.setEgress(id, { allow: ['internet.test'], hosts })
    expect((await curl(id, 'http://internet.test/')).text).toBe('internet-ok')
    await workspaces.setEgress(id, 'none')
    expect((await curl(id, '-i http://internet.test/')).text).toContain("egress is 'none'")
    expect((await rejection(workspaces.setEgress(id, 'bridge'))).code).toBe('INVALID_ARGUMENT')
    expect((await rejection(workspaces.setEgress(id, { allow: ['a*.com'] }))).code).toBe('INVALID_ARGUMENT')
  })

  it('a download to a client that reads slowly arrives whole and in order', async () => {
    const id = await session({ allow: ['internet.test'], hosts })
    const bytes = 384 * 65536
    const expected = createHash('sha256')
    for (let piece = 0; piece < bytes / 65536; piece++) expected.update(Buffer.alloc(65536, piece % 251))
    // The reader sleeps first: the relay's writes to it meet a full socket and queue, then flow.
    const slow = await run(id, `curl -sS "http://internet.test/big?bytes=${bytes}&pattern=1" | (sleep 1; sha256sum)`)
    expect(slow).toEqual({ exitCode: 0, text: `${expected.digest('hex')}  -` })
  })

  it('onEvent reports each connection once, with its bytes', async () => {
    const events: Event[] = []
    const id = await session({ allow: ['internet.test'], hosts, onEvent: (e) => events.push(e) })
    expect((await curl(id, '-o /dev/null -w "%{size_download}" "http://internet.test/big?bytes=1000000"')).text).toBe('1000000')
    await curl(id, 'http://private.test/')
    // Each connection's event comes as it closes.
    await eventually('both events', () => ['internet.test', 'private.test'].every((h) => events.some((e) => e.host === h)))
    const big = events.find((e) => e.host === 'internet.test')
    expect(big).toMatchObject({ sessionId: id, port: 80, address: PUBLIC.ns, allowed: true })
    expect(big!.bytesDown).toBeGreaterThanOrEqual(1_000_000)
    expect(big!.bytesUp).toBeGreaterThan(0)
    expect(big!.ms).toBeGreaterThanOrEqual(0)
    const refused = events.find((e) => e.host === 'private.test')
    expect(refused).toMatchObject({ allowed: false, bytesUp: 0, bytesDown: 0 })
    expect(refused!.reason).toMatch(/private address/)
    expect(events.filter((e) => e.host === 'internet.test')).toHaveLength(1)
  })

  it('a forwarded port serves a server in a session that has no network', async () => {
    const id = await session('none', IMAGES.busybox)
    const env = await workspaces.environment(id, 'egress')
    await env.fileIO.writeFile('/workspace/index.html', 'forwarded-ok\n')
    await env.shell.execute('setsid busybox httpd -p 127.0.0.1:8080 -h /workspace', { toolRequestId: 'httpd' })
    const forward = await workspaces.forwardPort(id, 8080)
    expect(forward.hostIp).toBe('127.0.0.1')
    expect(await httpGet(forward.hostPort)).toBe('forwarded-ok\n')
    await forward.close()
    await expect(httpGet(forward.hostPort)).rejects.toThrow()
    expect((await rejection(workspaces.forwardPort(id, 70000))).code).toBe('INVALID_ARGUMENT')
  })

  it("devcontainer.json's forwardPorts and appPort are served on the host through the relay", async () => {
    const config = { image: IMAGES.busybox, forwardPorts: [8080, 'db:5432'], appPort: ['8081'] }
    const project = gitProject('egress-ports', { '.devcontainer/devcontainer.json': JSON.stringify(config) })
    dirs.push(project)
    const id = `egp${process.pid}`
    const info = await workspaces.create({ projectDir: project.path, sessionId: id, lifetime: 'process', egress: 'none' })
    expect(info.warnings.some((w) => w.includes('"db:5432"') && w.includes('another container'))).toBe(true)
    expect(info.ports.map((p) => p.containerPort).sort()).toEqual([8080, 8081])
    expect(info.ports.every((p) => p.hostIp === '127.0.0.1')).toBe(true)
    const env = await workspaces.environment(id, 'egress')
    await env.fileIO.writeFile('/workspace/index.html', 'configured-ok\n')
    await env.shell.execute('setsid busybox httpd -p 127.0.0.1:8080 -h /workspace', { toolRequestId: 'httpd' })
    const served = info.ports.find((p) => p.containerPort === 8080)!
    expect(await httpGet(served.hostPort)).toBe('configured-ok\n')
    expect((await workspaces.get(id))!.ports).toEqual(info.ports)
  })

  it('a tunnel whose TLS server name is not its CONNECT host is closed (domain fronting)', async () => {
    const events: Event[] = []
    const id = await session({ allow: ['internet.test', 'front.test'], hosts: { ...hosts, 'front.test': [PUBLIC.ns] }, onEvent: (e) => events.push(e) })
    const env = await workspaces.environment(id, 'egress')
    await env.fileIO.writeFile('ca.pem', net.caPem)
    // curl asks the proxy for internet.test:443 and sends a ClientHello naming front.test.
    const fronted = await curl(id, '--cacert /workspace/ca.pem --connect-to front.test:443:internet.test:443 https://front.test/')
    expect(fronted.exitCode).not.toBe(0)
    await eventually('the tunnel\'s event', () => events.some((e) => e.host === 'internet.test' && e.port === 443))
    const event = events.find((e) => e.host === 'internet.test' && e.port === 443)
    expect(event).toMatchObject({ allowed: false })
    expect(event!.reason).toMatch(/front\.test.*domain fronting/)
  })

  it('a connection idle past idleTimeoutMs is closed, and past maxConnections none is opened', async () => {
    const id = await session({ allow: [`${PUBLIC.ns}/32`], idleTimeoutMs: 500 })
    const tunnel = `exec 3<>/dev/tcp/127.0.0.1/3128; printf 'CONNECT ${PUBLIC.ns}:7 HTTP/1.1\\r\\n\\r\\n' >&3`
    // The echo server answers "ping"; then nothing moves until the relay closes the tunnel.
    const idle = await run(id, `${tunnel}; printf ping >&3; timeout 10 cat <&3; echo " exit=$?"`)
    expect(idle.text).toContain('ping exit=0')
    const bounded = await session({ allow: [`${PUBLIC.ns}/32`], maxConnections: 2 })
    const held = `(${tunnel}; sleep 3) & `
    // The third is closed as soon as it is accepted, maybe before the shell's printf to it
    // (then a broken pipe, which must not end the shell) and with its request unread (then a
    // reset: cat's exit 1); either way it ends at once, never with timeout's 124.
    const third = await run(bounded, `trap '' PIPE; ${held}${held}sleep 0.5; ${tunnel}; timeout 5 cat <&3; echo " exit=$?"; wait`)
    expect(third.text).not.toContain('200 Connection established')
    expect(third.text).toMatch(/ exit=[01]$/m)
  })

  it('DockerRuntime.create with egress: no network, the proxy variables, the relay started with the container', async () => {
    const runtime = new addon.DockerRuntime({ engine, image: IMAGES.debian, baseDir: base.path })
    const id = await runtime.create({ workingDirectory: '/', mounts: [], lifetime: 'process', egress: { allow: ['internet.test'], hosts } })
    try {
      await runtime.start(id)
      const ok = await runtime.exec(id, { command: ['curl', '-sS', '--max-time', '10', 'http://internet.test/'] })
      expect(ok.stdout).toBe('internet-ok\n')
      const refused = await runtime.exec(id, { command: ['curl', '-sS', '--max-time', '10', 'http://private.test/'] })
      expect(refused.stdout).toContain(refusedLine('private.test', 80))
      const conflict = runtime.create({ workingDirectory: '/', mounts: [], network: 'bridge', egress: 'public' })
      expect((await rejection(conflict)).code).toBe('INVALID_ARGUMENT')
    } finally {
      await runtime.remove(id)
    }
  })

  it.skipIf(isRemote)("a warm pool member's relay runs before the claim, holds every connection, then serves the claiming session's policy and events", async () => {
    const poolBase = tempDir('egress-pool-base')
    dirs.push(poolBase)
    const pool = { size: 1, maxLoadPerCpu: 1e6, minAvailableMemory: 0 }
    const pooled = new addon.Workspaces({ baseDir: poolBase.path, engine, image: IMAGES.debian, pool })
    const project = gitProject('egress-pool-project')
    dirs.push(project)
    const egress = (events: Event[]) => ({ allow: ['internet.test'], hosts, onEvent: (e: Event) => events.push(e) })
    const [eventsA, eventsB]: Event[][] = [[], []]
    const [a, b] = [`egp${process.pid}a`, `egp${process.pid}b`]
    try {
      await pooled.create({ projectDir: project.path, sessionId: a, lifetime: 'process', egress: egress(eventsA) })
      expect(await pooled.poolReady()).toMatchObject({ ready: 1 })
      const member = engineCli('ps', '--filter', 'label=dev.container-isolation.pool', '--filter', `label=dev.container-isolation.base-dir=${poolBase.path}`, '--format', '{{.Names}}').split('\n').find((n) => n.startsWith('wp-'))!
      // The member's relay listens already, and nothing gets through it.
      const held = engineCli('exec', member, 'curl', '-sS', '--max-time', '10', 'http://internet.test/')
      expect(held).toContain(refusedLine('internet.test', 80))
      const memberId = engineCli('inspect', '--format', '{{.Id}}', member)
      const relayPid = () => engineCli('exec', memberId, 'cat', '/run/.container-isolation-relay.pid')
      const before = relayPid()
      await pooled.create({ projectDir: project.path, sessionId: b, lifetime: 'process', egress: egress(eventsB) })
      const info = await pooled.get(b)
      expect(engineCli('inspect', '--format', '{{.Id}}', info!.containerId)).toBe(memberId)
      expect(relayPid()).toBe(before) // the claim took the member's relay over, not a new one
      expect(await pooled.containerAccess(b)).toMatchObject({ line: 'direct', relayLine: 'direct' })
      const env = await pooled.environment(b, 'egress')
      const ok = await env.shell.execute('curl -sS --max-time 10 http://internet.test/', { toolRequestId: 'pool-ok' })
      expect(ok.output.map((l) => l.text).join('\n')).toBe('internet-ok')
      const refused = await env.shell.execute('curl -sS --max-time 10 http://private.test/', { toolRequestId: 'pool-no' })
      expect(refused.output.map((l) => l.text).join('\n')).toContain(refusedLine('private.test', 80))
      await eventually('both events of b', () => eventsB.length >= 2)
      expect(eventsB.every((e) => e.sessionId === b)).toBe(true)
      expect(eventsB.map((e) => [e.host, e.allowed])).toEqual(expect.arrayContaining([['internet.test', true], ['private.test', false]]))
      expect(eventsA.filter((e) => e.sessionId === b)).toEqual([])
    } finally {
      for (const s of await pooled.list()) await pooled.destroy(s.sessionId).catch(() => {})
      await pooled.poolReady().catch(() => {})
      const left = engineCli('ps', '-a', '--filter', `label=dev.container-isolation.base-dir=${poolBase.path}`, '--format', '{{.Names}}')
      for (const name of left.split('\n').filter(Boolean)) engineCli('rm', '-f', name)
    }
  })

  it('a policy that cannot be enforced rejects create with EGRESS_UNAVAILABLE and leaves no container', () => {
    const project = gitProject('egress-unavailable')
    dirs.push(project)
    const id = `egu${process.pid}`
    const lib = fileURLToPath(new URL('../lib/index.js', import.meta.url))
    const script = `require(${JSON.stringify(lib)}).Workspaces && new (require(${JSON.stringify(lib)}).Workspaces)(${JSON.stringify({ baseDir: base.path, engine, image: IMAGES.debian })})
      .create(${JSON.stringify({ projectDir: project.path, sessionId: id, lifetime: 'process' })})
      .then(() => console.log('created'), (e) => console.log(e.code, e.message))`
    const out = execFileSync(process.execPath, ['-e', script], { env: { ...process.env, CONTAINER_ISOLATION_AGENT: 'off' }, encoding: 'utf8' })
    expect(out).toMatch(/^EGRESS_UNAVAILABLE .*egress 'bridge'/)
    expect(engineCli('ps', '-a', '-q', '--filter', `name=ws-${id}-`)).toBe('')
  })

  it("'none' refuses everything; 'bridge' keeps the engine's network", async () => {
    const none = await session('none')
    expect((await curl(none, '-i http://internet.test/')).text).toContain(refusedLine('internet.test', 80))
    // The engine's default network (dockerd's `bridge`, Podman's `podman`): it runs on both.
    const id = await session('bridge')
    const env = await run(id, 'env | grep -ci proxy || true')
    expect(env.text.trim()).toBe('0')
    expect((await run(id, 'tail -n +2 /proc/net/route')).text.trim()).not.toBe('')
  })
})
