// Every request on a connection to the session's HTTP proxy is a request: parsed, put to
// the policy and rewritten on its own, kept alive or pipelined alike, each sent to the
// server its own URI names; malformed heads get 400. The test writes exact bytes to the
// proxy through a forwarded port of the session: the relay dials 127.0.0.1:3128 inside the
// container, as a tool there does. Its "internet" (egress-net.ts) has a range of its own,
// so it runs beside the egress suite; the shared front there serves any Host (a CDN).
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { internetNets, startInternet, until, type Internet, type Nets } from './egress-net'
import { addon, engine, gitProject, IMAGES, tempDir } from './helpers'

type Event = import('../index').EgressEventInfo

const NETS: Nets = internetNets(1)
const hosts = { 'allowed.test': [NETS.public.ns], 'fronted.test': [NETS.public.ns] }
const policy = { allow: ['allowed.test'], hosts, onEvent: (e: Event) => events.push(e) }

let net: Internet
let proxyPort = 0
const events: Event[] = []
const base = tempDir('egress-requests')
const project = gitProject('egress-requests-project')
const workspaces = new addon.Workspaces({ baseDir: base.path, engine, image: IMAGES.debian })
const sessionId = `egr${process.pid}`

beforeAll(async () => {
  net = await startInternet(NETS)
  await workspaces.create({
    projectDir: project.path, sessionId, lifetime: 'process',
    egress: policy,
  })
  proxyPort = (await workspaces.forwardPort(sessionId, 3128)).hostPort
})
afterAll(async () => {
  await workspaces.destroy(sessionId).catch(() => {})
  await net?.stop()
  base.cleanup()
  project.cleanup()
})

interface Answer {
  status: number
  reason: string
  headers: Record<string, string>
  body: string
}

/** The whole responses at the start of `data` (each framed by its Content-Length), and what is left. */
function parse(data: Buffer): { answers: Answer[]; rest: Buffer } {
  const answers: Answer[] = []
  for (;;) {
    const end = data.indexOf('\r\n\r\n')
    if (end < 0) return { answers, rest: data }
    const [line, ...fields] = data.subarray(0, end).toString('latin1').split('\r\n')
    const headers = Object.fromEntries(fields.map((f) => [f.slice(0, f.indexOf(':')).toLowerCase(), f.slice(f.indexOf(':') + 1).trim()]))
    const length = Number(headers['content-length'] ?? 0)
    if (data.length < end + 4 + length) return { answers, rest: data }
    const [, status, ...reason] = line.split(' ')
    answers.push({ status: Number(status), reason: reason.join(' '), headers, body: data.subarray(end + 4, end + 4 + length).toString('latin1') })
    data = data.subarray(end + 4 + length)
  }
}

interface Step {
  send: string
  /** How many answers this step's requests get before the next step is written. */
  answers: number
  /** Done before the step is written. */
  before?: () => Promise<void>
}
/** How the conversation ends: the proxy closes it, the test does, or once `echo` came back through a tunnel. */
type Ending = 'closed' | 'open' | { echo: string }

/**
 * One connection to the proxy: each step's bytes written once the answers to the steps
 * before it have come (a step of several requests is one write: pipelined).
 */
function converse(steps: Step[], ending: Ending): Promise<{ answers: Answer[]; closed: boolean; rest: string }> {
  return new Promise((resolve) => {
    const socket = connect(proxyPort, '127.0.0.1')
    const answers: Answer[] = []
    let rest: Buffer = Buffer.alloc(0)
    let step = 0
    let wanted = 0
    let done = false
    const finish = (closed: boolean) => {
      if (done) return
      done = true
      socket.destroy()
      resolve({ answers, closed, rest: rest.toString('latin1') })
    }
    let waiting = false
    const advance = () => {
      while (!waiting && step < steps.length && answers.length >= wanted) {
        const { send, answers: count, before } = steps[step++]
        wanted += count
        if (before) {
          waiting = true
          void before().then(() => {
            waiting = false
            socket.write(Buffer.from(send, 'latin1'))
            advance()
          })
          return
        }
        socket.write(Buffer.from(send, 'latin1'))
      }
      if (waiting || step < steps.length || answers.length < wanted) return
      if (ending === 'open') finish(false)
      else if (typeof ending === 'object' && rest.toString('latin1').includes(ending.echo)) finish(false)
    }
    socket.on('connect', advance)
    socket.on('data', (d) => {
      const parsed = parse(Buffer.concat([rest, d]))
      answers.push(...parsed.answers)
      rest = parsed.rest
      advance()
    })
    // A reset is the proxy closing too (it may come while unanswered bytes are in flight).
    socket.on('error', () => finish(true))
    socket.on('close', () => finish(true))
  })
}

const get = (host: string, path: string, extra = '') => `GET http://${host}${path} HTTP/1.1\r\nHost: ${host}\r\n${extra}\r\n`
const allowed = (path: string, extra = '') => get('allowed.test:8080', path, extra)
const frontSays = (path: string, body = '') => `front GET allowed.test:8080 ${path} ${body}\n`

/** Waits until the front has received `path` (after all that came before it). */
async function frontReached(path: string): Promise<void> {
  await until(`the front's request ${path}`, () => net.front.some((r) => r.path === path))
}

describe('every request on a proxy connection', () => {
  it('kept alive: a second allowed request is answered by its own server; a smuggled one is refused, reaches nothing and closes the connection', async () => {
    const canary = `127.0.0.1:${net.loopbackPort}`
    const before = events.length
    const r = await converse([
      { send: allowed('/one'), answers: 1 },
      { send: allowed('/two'), answers: 1 },
      { send: get(canary, '/smuggled'), answers: 1 },
    ], 'closed')
    expect(r.answers.map((a) => a.status)).toEqual([200, 200, 403])
    expect(r.answers[0].body).toBe(frontSays('/one'))
    expect(r.answers[1].body).toBe(frontSays('/two'))
    expect(r.answers[2].body).toContain(`container-isolation: egress to ${canary} refused by the session's policy`)
    expect(r.answers[2].headers['x-container-isolation-refusal']).toContain(`egress to ${canary} refused`)
    expect(r.closed).toBe(true)
    expect(net.canaryHits).toEqual([])
    await frontReached('/two')
    // onEvent: once per request, each with its own outcome.
    await until('three events', () => events.length >= before + 3)
    const mine = events.slice(before)
    expect(mine.map((e) => [e.host, e.allowed])).toEqual([['allowed.test', true], ['allowed.test', true], ['127.0.0.1', false]])
    expect(mine[0]).toMatchObject({ sessionId, address: NETS.public.ns })
    expect(mine[0].bytesUp).toBeGreaterThan(0)
    expect(mine[0].bytesDown).toBeGreaterThan(frontSays('/one').length)
    expect(mine[2]).toMatchObject({ bytesUp: 0, bytesDown: 0 })
  })

  it('pipelined in one write: each request is checked; a Host naming another site on the same front is refused', async () => {
    const smuggled = `GET http://fronted.test:8080/secret HTTP/1.1\r\nHost: fronted.test:8080\r\n\r\n`
    const r = await converse([{ send: allowed('/p1') + smuggled + allowed('/p2'), answers: 2 }], 'closed')
    expect(r.answers.map((a) => a.status)).toEqual([200, 403])
    expect(r.answers[1].body).toContain('container-isolation: egress to fronted.test:8080 refused')
    expect(r.closed).toBe(true)
    const mismatch = `GET http://allowed.test:8080/h2 HTTP/1.1\r\nHost: fronted.test:8080\r\n\r\n`
    const host = await converse([{ send: allowed('/h1') + mismatch, answers: 2 }], 'closed')
    expect(host.answers.map((a) => a.status)).toEqual([200, 400])
    expect(host.answers[1].body).toContain("the Host header 'fronted.test:8080' is not the request's host allowed.test:8080")
    await converse([{ send: allowed('/marker-pipelined', 'Connection: close\r\n'), answers: 1 }], 'closed')
    await frontReached('/marker-pipelined')
    expect(net.front.filter((s) => s.host !== 'allowed.test:8080' || ['/secret', '/p2', '/h2'].includes(s.path))).toEqual([])
  })

  it('pipelined requests with bodies (a length, chunks) are each framed and answered in order, and the connection stays open for more', async () => {
    const post = (path: string, framing: string, body: string) =>
      `POST http://allowed.test:8080${path} HTTP/1.1\r\nHost: allowed.test:8080\r\n${framing}\r\n${body}`
    const r = await converse([
      {
        send: allowed('/a')
          + post('/b', 'Content-Length: 11\r\n', 'GET /x HTTP')
          + post('/c', 'Transfer-Encoding: chunked\r\n', '4\r\nchun\r\n3;ext=1\r\nked\r\n0\r\n\r\n')
          + allowed('/d'),
        answers: 4,
      },
      { send: allowed('/e'), answers: 1 },
    ], 'open')
    expect(r.answers.map((a) => [a.status, a.body])).toEqual([
      [200, frontSays('/a')],
      [200, 'front POST allowed.test:8080 /b GET /x HTTP\n'],
      [200, 'front POST allowed.test:8080 /c chunked\n'],
      [200, frontSays('/d')],
      [200, frontSays('/e')],
    ])
  })

  it('a NUL byte, a bare CR or LF or another control character in the request line or a header gets 400 and the connection closed', async () => {
    const bad: Array<[string, string]> = [
      ['GET http://allowed.test:8080/bad\0 HTTP/1.1\r\nHost: allowed.test:8080\r\n\r\n', '0x00'],
      ['GET http://allowed.test:8080/bad HTTP/1.1\nHost: allowed.test:8080\r\n\r\n', 'bare LF'],
      ['GET http://allowed.test:8080/bad HTTP/1.1\r\nHost: allowed.test:8080\nX: 1\r\n\r\n', 'bare LF'],
      ['GET http://allowed.test:8080/bad HTTP/1.1\r\nHost: allowed.test:8080\rX: 1\r\n\r\n', 'bare CR'],
      ['GET http://allowed.test:8080/bad HTTP/1.1\r\nHost: allowed.test:8080\r\nX: a\x01b\r\n\r\n', '0x01'],
      ['GET http://allowed.test:8080/bad HTTP/1.1\r\nHost: allowed.test:8080\r\nX: \0\r\n\r\n', '0x00'],
    ]
    for (const [request, why] of bad) {
      const alone = await converse([{ send: request, answers: 1 }], 'closed')
      expect(alone.answers.map((a) => a.status), why).toEqual([400])
      expect(alone.answers[0].body).toMatch(new RegExp(`^container-isolation: .*${why}`))
      expect(alone.closed).toBe(true)
      const after = await converse([{ send: allowed('/good') + request, answers: 2 }], 'closed')
      expect(after.answers.map((a) => a.status), why).toEqual([200, 400])
    }
    await converse([{ send: allowed('/marker-malformed', 'Connection: close\r\n'), answers: 1 }], 'closed')
    await frontReached('/marker-malformed')
    expect(net.front.filter((s) => s.path.startsWith('/bad'))).toEqual([])
  })

  it('a CONNECT after a plain request on the same connection opens its own tunnel', async () => {
    const r = await converse([
      { send: allowed('/before-tunnel'), answers: 1 },
      { send: 'CONNECT allowed.test:7 HTTP/1.1\r\nHost: allowed.test:7\r\n\r\n', answers: 1 },
      { send: 'ping through the tunnel', answers: 0 },
    ], { echo: 'ping through the tunnel' })
    expect(r.answers.map((a) => [a.status, a.reason])).toEqual([[200, 'OK'], [200, 'Connection established']])
    expect(r.rest).toBe('ping through the tunnel')
  })

  it('setEgress between two requests on one kept-alive connection applies to the second', async () => {
    try {
      const r = await converse([
        { send: allowed('/before-change'), answers: 1 },
        { send: allowed('/after-change'), answers: 1, before: () => workspaces.setEgress(sessionId, { ...policy, allow: [] }) },
      ], 'closed')
      expect(r.answers.map((a) => a.status)).toEqual([200, 403])
      expect(r.answers[1].body).toContain('container-isolation: egress to allowed.test:8080 refused')
    } finally {
      await workspaces.setEgress(sessionId, policy)
    }
  })

  it('curl in the session reuses its proxy connection for two URLs, each answered by its own request', async () => {
    const env = await workspaces.environment(sessionId, 'egress-requests')
    const r = await env.shell.execute('curl -sS -v --max-time 20 http://allowed.test:8080/c1 http://allowed.test:8080/c2', { toolRequestId: 'curl-two' })
    const text = r.output.map((l) => l.text).join('\n')
    expect(r.exitCode).toBe(0)
    expect(text).toContain(frontSays('/c1').trim())
    expect(text).toContain(frontSays('/c2').trim())
    expect(text).toMatch(/Re-using existing connection/i)
  })
})

/** An upgrade request as a WebSocket client sends it, with a header its Connection names. */
const upgradeTo = (host: string, path: string) =>
  get(host, path, 'Upgrade: websocket\r\nConnection: Upgrade, X-Secret\r\nX-Secret: s\r\n' +
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n')

/**
 * A bash script for the session: one connection to `$http_proxy` by /dev/tcp, the upgrade
 * request written, the answer's head printed, then each line written and its echo printed.
 */
function upgradeScript(request: string, lines: string[]): string {
  const printf = (text: string) => `printf '%s' '${text.split('\r').join("'$'\\r''").split('\n').join("'$'\\n''")}' >&3`
  return [
    'p=${http_proxy#http://}; p=${p%/}',
    'exec 3<>/dev/tcp/${p%:*}/${p##*:}',
    printf(request),
    "while IFS= read -r -t 20 line <&3; do line=${line%$'\\r'}; echo \"head: $line\"; [ -z \"$line\" ] && break; done",
    ...lines.flatMap((l) => [printf(`${l}\n`), 'IFS= read -r -t 20 got <&3; echo "echo: $got"']),
    'exec 3>&-',
  ].join('\n')
}

describe('an upgrade (WebSocket) through the proxy', () => {
  it('to an allowed host switches (101) and carries bytes both ways, with Upgrade kept and the rest hop-by-hop dropped; its event comes when it ends', async () => {
    const before = events.length
    const env = await workspaces.environment(sessionId, 'egress-requests')
    const script = upgradeScript(upgradeTo('allowed.test:8080', '/ws-allowed'), ['ping up', 'GET / HTTP/1.1'])
    const r = await env.shell.execute(script, { toolRequestId: 'ws-allowed' })
    const lines = r.output.map((l) => l.text).join('\n').split('\n')
    expect(r.exitCode).toBe(0)
    expect(lines[0]).toBe('head: HTTP/1.1 101 Switching Protocols')
    expect(lines).toContain('head: upgrade: websocket')
    expect(lines).toContain('head: connection: upgrade')
    expect(lines).toContain('head: sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=')
    expect(lines.filter((l) => l.startsWith('echo: '))).toEqual(['echo: ping up', 'echo: GET / HTTP/1.1'])
    await frontReached('/ws-allowed')
    const seen = net.front.find((s) => s.path === '/ws-allowed')
    expect(seen).toEqual({ method: 'GET', host: 'allowed.test:8080', path: '/ws-allowed', body: 'upgrade=websocket connection=upgrade secret=None' })
    await until('the upgrade\'s event', () => events.slice(before).some((e) => e.port === 8080 && e.allowed))
    const event = events.slice(before).find((e) => e.port === 8080)
    expect(event).toMatchObject({ sessionId, host: 'allowed.test', allowed: true, address: NETS.public.ns })
    // The server's connection: the request head and both lines up; the 101 and both echoes down.
    expect(event!.bytesUp).toBeGreaterThan('GET /ws-allowed HTTP/1.1\r\n'.length + 'ping up\nGET / HTTP/1.1\n'.length)
    expect(event!.bytesDown).toBeGreaterThan('HTTP/1.1 101 Switching Protocols\r\n'.length + 'ping up\nGET / HTTP/1.1\n'.length)
  })

  it('to a denied host is refused as any request (403), and its server sees nothing', async () => {
    const before = events.length
    const env = await workspaces.environment(sessionId, 'egress-requests')
    const r = await env.shell.execute(upgradeScript(upgradeTo('fronted.test:8080', '/ws-denied'), []), { toolRequestId: 'ws-denied' })
    const lines = r.output.map((l) => l.text).join('\n').split('\n')
    expect(lines[0]).toBe('head: HTTP/1.1 403 Forbidden')
    expect(lines.find((l) => l.startsWith('head: x-container-isolation-refusal:'))).toContain('egress to fronted.test:8080 refused')
    await until('the refusal\'s event', () => events.length > before)
    expect(events.slice(before)[0]).toMatchObject({ host: 'fronted.test', allowed: false, bytesUp: 0, bytesDown: 0 })
    await converse([{ send: allowed('/marker-ws-denied', 'Connection: close\r\n'), answers: 1 }], 'closed')
    await frontReached('/marker-ws-denied')
    expect(net.front.filter((s) => s.path === '/ws-denied')).toEqual([])
  })

  it('answered without 101, the response comes back as any and the next bytes are checked as a request head', async () => {
    const r = await converse([
      { send: upgradeTo('allowed.test:8080', '/no-ws'), answers: 1 },
      { send: allowed('/after-no-ws'), answers: 1 },
      { send: 'ping\n', answers: 1 },
    ], 'closed')
    expect(r.answers.map((a) => [a.status, a.body])).toEqual([
      [200, frontSays('/no-ws')],
      [200, frontSays('/after-no-ws')],
      [400, expect.stringContaining('bare LF') as unknown as string],
    ])
  })
})

