// Docker Compose devcontainers (issue 37): an application service and the services its tests
// need (`db`: PostgreSQL with a healthcheck, `cache`: Redis), run sealed: every container of
// the session joins one network namespace with no route anywhere (a holder with network
// `none`), the service names map to loopback, a service reaches the network only through
// the session's relay under its policy, and a published port is reachable from the host
// only once the host forwards it. Not on the remote pass: its rig carries the three base
// images only.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { internetNets, startInternet, type Internet } from './egress-net'
import { addon, engine, engineCli, firstLine, gitProject, IMAGES, isRemote, rejection, tempDir } from './helpers'

const NETS = internetNets(2)
const base = tempDir('compose-base')
const dirs: Array<{ cleanup: () => void }> = [base]
const workspaces = new addon.Workspaces({ baseDir: base.path, engine, image: IMAGES.debian })
let internet: Internet | undefined

beforeAll(async () => {
  if (!isRemote) internet = await startInternet(NETS)
}, 60_000)
afterAll(async () => {
  for (const ws of await workspaces.list()) await workspaces.destroy(ws.sessionId).catch(() => {})
  await internet?.stop()
  dirs.forEach((d) => d.cleanup())
})

let n = 0
const sessionId = () => `compose${process.pid}x${++n}`
const LABEL = 'dev.container-isolation.session'
const containersOf = (id: string) =>
  engineCli('ps', '-a', '--format', '{{.Names}}', '--filter', `label=${LABEL}=${id}`).split('\n').filter(Boolean)
const volumesOf = (id: string) =>
  engineCli('volume', 'ls', '-q', '--filter', `label=${LABEL}=${id}`).split('\n').filter(Boolean)

const SHOP = `
name: shop
services:
  app:
    image: ${IMAGES.postgres}
    command: ["sleep", "infinity"]
    volumes:
      - ..:/workspace:cached
    depends_on:
      db:
        condition: service_healthy
      cache:
        condition: service_started
  db:
    image: ${IMAGES.postgres}
    healthcheck:
      test: ["CMD", "pg_isready", "-h", "localhost", "-U", "postgres"]
      interval: 1s
      timeout: 5s
      retries: 60
    volumes:
      - dbdata:/var/lib/postgresql/data
  cache:
    image: ${IMAGES.redis}
    ports:
      - "6379"
volumes:
  dbdata: {}
`

function composeProject(compose: string, devcontainer: Record<string, unknown> = {}): string {
  const project = gitProject('compose-project', {
    '.devcontainer/devcontainer.json': JSON.stringify({
      dockerComposeFile: 'docker-compose.yml',
      service: 'app',
      workspaceFolder: '/workspace',
      ...devcontainer,
    }),
    '.devcontainer/docker-compose.yml': compose,
  })
  dirs.push(project)
  return project.path
}

async function run(id: string, command: string): Promise<{ exitCode: number; text: string }> {
  const env = await workspaces.environment(id, 'compose')
  const r = await env.shell.execute(command, { toolRequestId: `c${++n}` })
  return { exitCode: r.exitCode, text: r.output.map((l) => l.text).join('\n') }
}

/** The exit code of `script` run by bash in `container` (a service's, through the engine's CLI). */
function inService(container: string, script: string): number {
  try {
    engineCli('exec', container, 'bash', '-c', script)
    return 0
  } catch (e) {
    return (e as { status?: number }).status ?? -1
  }
}

// Not on the remote pass: the remote rig's engine has the three base images only, not the
// PostgreSQL and Redis ones.
describe.skipIf(isRemote)('Compose devcontainers, sealed', () => {
  it('runs app, db and cache in one namespace with no route: names on loopback, ready before create returns, gone after destroy', async () => {
    const id = sessionId()
    const project = composeProject(SHOP)
    const info = await workspaces.create({ projectDir: project, sessionId: id })
    expect(info.state).toBe('running')
    // create waited for db's healthcheck: the first query works at once.
    expect(await run(id, `psql -h db -U postgres -tAc 'select 40 + 2'`)).toEqual({ exitCode: 0, text: '42' })
    expect(await run(id, 'redis-cli -h cache ping')).toEqual({ exitCode: 0, text: 'PONG' })
    expect((await run(id, 'cat /workspace/.devcontainer/devcontainer.json')).text).toContain('dockerComposeFile')

    const names = containersOf(id)
    const services = names.filter((c) => c !== info.containerId)
    expect(names).toContain(info.containerId)
    expect(services.length).toBe(3) // the holder, db and cache
    expect(volumesOf(id).length).toBeGreaterThanOrEqual(1)

    // No route anywhere, from the session and from every service: the host's loopback
    // canary, the host's private address, the test internet.
    const net = internet!
    const targets = [
      `127.0.0.1/${net.loopbackPort}`,
      `${NETS.private.host}/${net.hostPrivatePort}`,
      `${NETS.public.ns}/8080`,
    ]
    for (const target of targets) {
      const probe = `timeout 5 bash -c 'exec 3<>/dev/tcp/${target}' 2>/dev/null`
      expect((await run(id, probe)).exitCode, `session → ${target}`).not.toBe(0)
      for (const container of services) expect(inService(container, probe), `${container} → ${target}`).not.toBe(0)
    }
    expect(net.canaryHits).toEqual([])
    // Through the session's relay, under its policy ('public'): the internet yes, the host no.
    const viaRelay = (url: string) => `curl -s -o /dev/null -w '%{http_code}' --max-time 10 --proxy http://127.0.0.1:3128 ${url}`
    const db = services.find((c) => c.includes('db'))!
    expect(engineCli('exec', db, 'bash', '-c', viaRelay(`http://${NETS.public.ns}:8080/`))).toBe('200')
    expect(engineCli('exec', db, 'bash', '-c', `${viaRelay(`http://${NETS.private.host}:${net.hostPrivatePort}/`)} || true`)).not.toBe('200')
    expect(net.canaryHits).toEqual([])

    // cache's published port: nothing on the host until the host forwards it.
    const cache = services.find((c) => c.includes('cache'))!
    expect(engineCli('port', cache)).toBe('')
    const forward = await workspaces.forwardPort(id, 6379)
    expect(await firstLine(forward.hostPort, 'PING\r\n')).toBe('+PONG')
    await forward.close()

    await workspaces.destroy(id)
    expect(containersOf(id)).toEqual([])
    expect(volumesOf(id)).toEqual([])
    expect(engineCli('ps', '-a', '--format', '{{.Names}}').split('\n').filter((c) => c.startsWith(info.containerId))).toEqual([])
  }, 240_000)

  it('stops the services with the session and starts them again, their volumes kept; a removed container is made again into its set', async () => {
    const id = sessionId()
    const info = await workspaces.create({ projectDir: composeProject(SHOP), sessionId: id })
    expect((await run(id, `psql -h db -U postgres -c 'create table kept (n int); insert into kept values (7)'`)).exitCode).toBe(0)
    await workspaces.stop(id)
    const running = engineCli('ps', '--format', '{{.Names}}', '--filter', `label=${LABEL}=${id}`)
    expect(running).toBe('')
    expect(await run(id, `psql -h db -U postgres -tAc 'select n from kept'`)).toEqual({ exitCode: 0, text: '7' })
    engineCli('rm', '-f', info.containerId)
    await workspaces.create({ projectDir: composeProject(SHOP), sessionId: id })
    expect(await run(id, `psql -h db -U postgres -tAc 'select n from kept'`)).toEqual({ exitCode: 0, text: '7' })
    await workspaces.destroy(id)
    expect(containersOf(id)).toEqual([])
    expect(volumesOf(id)).toEqual([])
  }, 240_000)

  it('refuses by name what would open the namespace or the host, and leaves nothing', async () => {
    const cases: Array<[string, string]> = [
      ['network_mode: host', 'network_mode'],
      ['privileged: true', 'privileged'],
      ['volumes: ["/etc:/host-etc"]', '/etc'],
      ['ports: ["3128"]', "the session's relay listens there"],
    ]
    for (const [line, named] of cases) {
      const id = sessionId()
      const compose = `services:\n  app:\n    image: ${IMAGES.debian}\n    command: ["sleep", "infinity"]\n  db:\n    image: ${IMAGES.redis}\n    ${line}\n`
      const err = await rejection(workspaces.create({ projectDir: composeProject(compose), sessionId: id }))
      expect(err.message, line).toContain(named)
      expect(['DEVCONTAINER', 'TRUST_REQUIRED', 'INVALID_ARGUMENT']).toContain(err.code)
      expect(containersOf(id)).toEqual([])
      expect(await workspaces.get(id)).toBeUndefined()
    }
  })

  it('refuses two services that listen on the same port, naming both', async () => {
    const id = sessionId()
    const compose = `services:\n  app:\n    image: ${IMAGES.debian}\n    command: ["sleep", "infinity"]\n  one:\n    image: ${IMAGES.redis}\n    expose: ["6379"]\n  two:\n    image: ${IMAGES.redis}\n    ports: ["6379"]\n`
    const err = await rejection(workspaces.create({ projectDir: composeProject(compose), sessionId: id }))
    expect(err.message).toContain('6379')
    expect(err.message).toContain('one')
    expect(err.message).toContain('two')
    expect(containersOf(id)).toEqual([])
  })

  it("runs the session service's command (overrideCommand defaults to false), the keep-alive only under overrideCommand: true; the shell and terminate work in both", async () => {
    const compose = `services:\n  app:\n    image: ${IMAGES.debian}\n    command: ["sh", "-c", "echo ran > /tmp/service-command; exec sleep 4711"]\n`
    const ran = sessionId()
    const info = await workspaces.create({ projectDir: composeProject(compose), sessionId: ran })
    expect(info.warnings.join('\n')).not.toContain('not run')
    expect(await run(ran, 'cat /tmp/service-command; ps -eo args | grep -c "^sleep 4711"')).toEqual({ exitCode: 0, text: 'ran\n1' })
    const env = await workspaces.environment(ran, 'compose')
    const pending = env.shell.execute('sleep 4712', { toolRequestId: `c${++n}`, onStart: () => setTimeout(() => env.shell.terminate(), 300) })
    expect((await pending).signal).toBe('SIGTERM')
    await workspaces.stop(ran)
    await workspaces.environment(ran, 'compose') // started again: the command runs again
    expect(await run(ran, 'ps -eo args | grep -c "^sleep 4711"')).toEqual({ exitCode: 0, text: '1' })
    await workspaces.destroy(ran)

    const kept = sessionId()
    const overridden = await workspaces.create({ projectDir: composeProject(compose, { overrideCommand: true }), sessionId: kept })
    expect(overridden.warnings.join('\n')).toContain('services.app: command and entrypoint are not run (overrideCommand is true')
    expect(await run(kept, 'test -e /tmp/service-command || echo absent; ps -eo args | grep -c "^sleep 4711"')).toEqual({ exitCode: 1, text: 'absent\n0' })
    await workspaces.destroy(kept)
  }, 180_000)

  it("runs another service with what the trust grants it (issue 52): a capability, and a read-only bind of a project file from the session's clone", async () => {
    const compose = `services:
  app:
    image: ${IMAGES.debian}
    command: ["sleep", "infinity"]
  db:
    image: ${IMAGES.debian}
    command: ["sleep", "infinity"]
    cap_add: [NET_ADMIN]
    volumes:
      - ../init.txt:/docker-entrypoint-initdb.d/init.txt:ro
`
    const project = gitProject('compose-trust', {
      '.devcontainer/devcontainer.json': JSON.stringify({ dockerComposeFile: 'docker-compose.yml', service: 'app', workspaceFolder: '/workspace' }),
      '.devcontainer/docker-compose.yml': compose,
      'init.txt': 'committed',
    })
    dirs.push(project)
    const refusedId = sessionId()
    const err = await rejection(workspaces.create({ projectDir: project.path, sessionId: refusedId }))
    expect(err.code).toBe('DEVCONTAINER')
    expect(err.message).toContain('services.db')
    expect((err as unknown as { refusals: Array<{ trust: unknown }> }).refusals.map((r) => r.trust)).toEqual([{ capabilities: ['NET_ADMIN'] }])
    expect(containersOf(refusedId)).toEqual([])

    const id = sessionId()
    const info = await workspaces.create({ projectDir: project.path, sessionId: id, trust: { capabilities: ['NET_ADMIN'] } })
    const db = containersOf(id).find((c) => c === `${info.containerId}-svc-db`)!
    expect(db).toBeDefined()
    const read = () => engineCli('exec', db, 'cat', '/docker-entrypoint-initdb.d/init.txt')
    expect(read()).toBe('committed')
    // The session's clone, not the user's folder: a change in the project is not seen, one
    // the session makes in its clone (in place) is.
    writeFileSync(join(project.path, 'init.txt'), 'the user edits the project')
    expect(read()).toBe('committed')
    expect((await run(id, 'printf session > /workspace/init.txt')).exitCode).toBe(0)
    expect(read()).toBe('session')
    expect(inService(db, 'echo x > /docker-entrypoint-initdb.d/init.txt')).not.toBe(0)
    // CAP_NET_ADMIN is capability 12: set in the service's effective set, not in the session's.
    const capEff = (text: string) => BigInt(`0x${/CapEff:\s*([0-9a-f]+)/.exec(text)![1]}`)
    const netAdmin = 1n << 12n
    expect(capEff(engineCli('exec', db, 'cat', '/proc/self/status')) & netAdmin).toBe(netAdmin)
    expect(capEff((await run(id, 'cat /proc/self/status')).text) & netAdmin).toBe(0n)
    // The session makes the file a symlink to a host file: the service is not started on it.
    expect((await run(id, 'ln -sf /etc/hostname /workspace/init.txt')).exitCode).toBe(0)
    await workspaces.stop(id)
    const again = await rejection(workspaces.environment(id, 'compose'))
    expect(again.code).toBe('DEVCONTAINER')
    expect(again.message).toContain("service 'db'")
    expect(again.message).toContain('symlink')
    await workspaces.destroy(id)
    expect(containersOf(id)).toEqual([])
  }, 180_000)

  it('names the service that never became healthy, and leaves no container or volume', async () => {
    const id = sessionId()
    const compose = `services:
  app:
    image: ${IMAGES.debian}
    command: ["sleep", "infinity"]
    depends_on:
      sick: { condition: service_healthy }
  sick:
    image: ${IMAGES.redis}
    healthcheck:
      test: ["CMD", "false"]
      interval: 1s
      retries: 2
    volumes: ["data:/data"]
volumes:
  data: {}
`
    const err = await rejection(workspaces.create({ projectDir: composeProject(compose), sessionId: id }))
    expect(err.message).toContain('sick')
    expect(containersOf(id)).toEqual([])
    expect(volumesOf(id)).toEqual([])
  }, 120_000)
})
