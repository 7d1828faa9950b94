// The hosts' current interfaces at run time (their types are checked by tsc in
// __test__/types/): Lace's ContainerRuntime of June 2026 (execStream, daemonInspect, adopt,
// ports, restart policy, sysctls, capAdd, environmentMode) and the small rules hosts rely
// on (empty ids are absent, the mount root translates with a trailing slash, bad
// environment names are refused).
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { addon, engine, engineCli, eventually, IMAGES, isPodman, rejection, suiteRuntime, tempDir } from './helpers'

const { runtime, baseDir, cleanup } = suiteRuntime('hosts')
afterAll(cleanup)

async function sandbox(extra: Partial<Parameters<typeof runtime.create>[0]> = {}) {
  const id = await runtime.create({ workingDirectory: '/', mounts: [], ...extra })
  await runtime.start(id)
  return id
}

function lines(stream: NodeJS.ReadableStream, onLine: (line: string) => void) {
  let buffered = ''
  stream.on('data', (chunk: Buffer) => {
    buffered += chunk.toString()
    const parts = buffered.split('\n')
    buffered = parts.pop()!
    parts.forEach(onLine)
  })
}

describe("Lace's execStream", () => {
  for (const agent of [true, false]) {
    const label = agent ? 'agent' : 'engine exec'
    it(`answers 100 JSON-RPC round trips, exits when stdin closes, and wait() gives its code (${label})`, async () => {
      const id = await sandbox()
      const rt = new addon.DockerRuntime({ engine, agent })
      const script = 'while IFS= read -r line; do printf "%s\\n" "$line"; done; exit 7'
      const h = await rt.execStream(id, { command: ['sh', '-c', script] })
      const waiting: ((line: string) => void)[] = []
      lines(h.stdout, (line) => waiting.shift()?.(line))
      for (let i = 1; i <= 100; i++) {
        const reply = new Promise<string>((resolve) => waiting.push(resolve))
        h.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: i, method: 'echo' })}\n`)
        expect(JSON.parse(await reply).id).toBe(i)
      }
      h.stdin.end()
      expect((await h.wait()).exitCode).toBe(7)
      await runtime.remove(id)
    })
  }

  it('kill() leaves no process of the command', async () => {
    const id = await sandbox()
    const h = await runtime.execStream(id, { command: ['sh', '-c', 'sleep 1031 & sleep 1032 & wait'] })
    const sleeps = async () => (await runtime.exec(id, { command: ['ps', '-eo', 'args'] })).stdout.split('\n').filter((l) => /^sleep 103[12]$/.test(l)).length
    // Killed once both sleeps run, so that "none left" has something to find.
    await eventually('both sleeps running', async () => (await sleeps()) === 2)
    h.kill()
    await h.wait()
    await eventually('no sleep of the command left', async () => (await sleeps()) === 0, 5000)
    await runtime.remove(id)
  })
})

describe("environmentMode 'replace'", () => {
  it('gives exactly the given environment (exec and execStream)', async () => {
    const id = await sandbox({ environment: { FROM_CONTAINER: 'x' } })
    const { stdout } = await runtime.exec(id, {
      command: ['/usr/bin/env'],
      environment: { ONLY: 'this', AND: 'that' },
      environmentMode: 'replace',
    })
    expect(stdout.split('\n').filter(Boolean).sort()).toEqual(['AND=that', 'ONLY=this'])
    const inherited = await runtime.exec(id, { command: ['/usr/bin/env'], environment: { ONLY: 'this' } })
    expect(inherited.stdout).toContain('FROM_CONTAINER=x')
    await runtime.remove(id)
  })

  it('without the agent, only the given environment and the exec marker', async () => {
    const id = await sandbox({ environment: { FROM_CONTAINER: 'x' } })
    const rt = new addon.DockerRuntime({ engine, agent: false })
    const { stdout } = await rt.exec(id, { command: ['/usr/bin/env'], environment: { ONLY: 'this' }, environmentMode: 'replace' })
    const names = stdout.split('\n').filter(Boolean).map((l) => l.split('=')[0]).sort()
    expect(names).toEqual(['CONTAINER_ISOLATION_EXEC', 'ONLY'])
    await runtime.remove(id)
  })
})

describe('daemonInspect and adopt', () => {
  it('daemonInspect is live, carries mounts and labels, and is null once the container is gone', async () => {
    const host = tempDir('daemon')
    const id = await sandbox({ mounts: [{ source: host.path, target: '/workspace', readonly: true }], labels: { role: 'box' } })
    const info = await runtime.daemonInspect(id)
    expect(info).toMatchObject({ id, state: 'running', labels: { role: 'box' } })
    expect(info!.mounts).toEqual([{ source: host.path, target: '/workspace', readonly: true }])
    await runtime.remove(id)
    expect(await runtime.daemonInspect(id)).toBeNull()
    host.cleanup()
  })

  it('adopts a session container after the process that created it exited', async () => {
    const host = tempDir('adopt')
    const name = `adopt-${process.pid}`
    const mounts = [{ source: host.path, target: '/workspace' }]
    const config = { name, image: IMAGES.debian, workingDirectory: '/workspace', mounts }
    const creator = String.raw`
      const { DockerRuntime } = require(${JSON.stringify(join(process.cwd(), 'lib/index.js'))})
      const rt = new DockerRuntime({ engine: ${JSON.stringify(engine)}, baseDir: ${JSON.stringify(baseDir)} })
      rt.create(${JSON.stringify(config)}).then((id) => rt.start(id)).then(() => process.exit(0), (e) => { console.error(e); process.exit(1) })`
    expect(spawnSync(process.execPath, ['-e', creator], { encoding: 'utf8' }).status).toBe(0)

    const fresh = new addon.DockerRuntime({ engine, baseDir })
    expect(() => fresh.translateToContainer(host.path, name)).toThrow()
    await fresh.adopt(config, 'running')
    expect(fresh.translateToContainer(host.path, name)).toBe('/workspace/')
    expect((await fresh.exec(name, { command: ['true'] })).exitCode).toBe(0)

    const moved = { ...config, mounts: [{ source: join(host.path, 'elsewhere'), target: '/workspace' }] }
    expect((await rejection(fresh.adopt(moved, 'running'))).code).toBe('INVALID_ARGUMENT')
    expect((await rejection(fresh.adopt({ ...config, name: 'no-such-container-x' }, 'running'))).code).toBe('CONTAINER_NOT_FOUND')
    expect((await rejection(fresh.adopt(config, 'sleeping' as never))).code).toBe('INVALID_ARGUMENT')
    await fresh.remove(name)
    host.cleanup()
  })

  it("refuses a 'process'-lifetime container whose creator is gone", async () => {
    const name = `adopt-orphan-${process.pid}`
    const config = { name, image: IMAGES.debian, workingDirectory: '/', mounts: [], lifetime: 'process' as const }
    const creator = String.raw`
      const { DockerRuntime } = require(${JSON.stringify(join(process.cwd(), 'lib/index.js'))})
      const rt = new DockerRuntime({ engine: ${JSON.stringify(engine)}, baseDir: ${JSON.stringify(baseDir)} })
      rt.create(${JSON.stringify(config)}).then(() => process.kill(process.pid, 'SIGKILL'))`
    spawnSync(process.execPath, ['-e', creator])
    const err = await rejection(runtime.adopt(config, 'created'))
    expect(err.code).toBe('INVALID_ARGUMENT')
    expect(err.message).toMatch(/lifetime 'process'/)
    await runtime.remove(name)
  })
})

describe('create: what Lace passes', () => {
  it('treats an empty id and name as absent', async () => {
    const id = await runtime.create({ id: '', name: '', workingDirectory: '/', mounts: [] })
    expect(id).toMatch(/^ci-[0-9a-f]{8}$/)
    await runtime.remove(id)
  })

  it('publishes ports on loopback, sets restart policy, sysctls, capabilities and labels', async () => {
    const id = await runtime.create({
      image: IMAGES.busybox,
      workingDirectory: '/',
      mounts: [],
      command: ['httpd', '-f', '-p', '8000', '-h', '/'],
      ports: [{ host: 0, container: 8000 }],
      restartPolicy: 'unless-stopped',
      sysctls: { 'net.ipv4.ip_unprivileged_port_start': '0' },
      capAdd: ['NET_ADMIN'],
      labels: { role: 'web' },
    })
    await runtime.start(id)
    const host = JSON.parse(engineCli('inspect', '-f', '{{json .HostConfig}}', id))
    expect(host.RestartPolicy.Name).toBe('unless-stopped')
    expect(host.PortBindings['8000/tcp'][0].HostIp).toBe('127.0.0.1')
    const inside = (path: string) => runtime.exec(id, { command: ['cat', path] }).then((r) => r.stdout.trim())
    expect(await inside('/proc/sys/net/ipv4/ip_unprivileged_port_start')).toBe('0')
    // CapEff: NET_ADMIN is bit 12.
    const status = await inside('/proc/1/status')
    const effective = BigInt(`0x${/CapEff:\s+([0-9a-f]+)/.exec(status)![1]}`)
    expect((effective >> 12n) & 1n).toBe(1n)
    expect((await runtime.inspect(id)).labels).toMatchObject({ role: 'web' })
    if (!isPodman) {
      const published = JSON.parse(engineCli('inspect', '-f', '{{json .NetworkSettings.Ports}}', id))
      const port = Number(published['8000/tcp'][0].HostPort)
      let answer: Response | undefined
      for (let i = 0; i < 50 && !answer; i++) {
        answer = await fetch(`http://127.0.0.1:${port}/`).catch(() => undefined)
        if (!answer) await new Promise((r) => setTimeout(r, 100))
      }
      expect(answer?.status).toBeGreaterThanOrEqual(200)
    }
    await runtime.remove(id)
  })

  it("rejects a restart policy on a 'process' container, bad ports and capabilities", async () => {
    const base = { workingDirectory: '/', mounts: [] }
    for (const bad of [
      { ...base, lifetime: 'process' as const, restartPolicy: 'always' as const },
      { ...base, restartPolicy: 'sometimes' as never },
      { ...base, ports: [{ host: 70000, container: 80 }] },
      { ...base, ports: [{ host: 1, container: 0 }] },
      { ...base, capAdd: ['net admin'] },
      { ...base, sysctls: { 'a=b': '1' } },
    ]) {
      expect((await rejection(runtime.create(bad))).code, JSON.stringify(bad)).toBe('INVALID_ARGUMENT')
    }
  })

  it('rejects a user or network that does not exist at create, leaving no container', async () => {
    const before = (await runtime.list()).length
    const user = await rejection(runtime.create({ workingDirectory: '/', mounts: [], user: 'nobody-here' }))
    expect(user.code).toBe('INVALID_ARGUMENT')
    expect(user.message).toMatch(/nobody-here/)
    const network = await rejection(runtime.create({ workingDirectory: '/', mounts: [], network: 'no-such-net' }))
    expect(network.code).toBe('INVALID_ARGUMENT')
    expect(network.message).toMatch(/no-such-net/)
    expect((await runtime.list()).length).toBe(before)
    const named = await runtime.create({ workingDirectory: '/', mounts: [], user: 'nobody' })
    const numeric = await runtime.create({ workingDirectory: '/', mounts: [], user: '4242:4242' })
    await runtime.remove(named)
    await runtime.remove(numeric)
  })
})

describe('environment names and values', () => {
  it('refuses A=B, empty names and NUL in exec, execStream, create and DockerShell', async () => {
    const id = await sandbox()
    for (const environment of [{ 'A=B': '1' }, { '': '1' }, { A: 'x\0y' }] as Record<string, string>[]) {
      expect((await rejection(runtime.exec(id, { command: ['true'], environment }))).code).toBe('INVALID_ARGUMENT')
      expect((await rejection(runtime.execStream(id, { command: ['true'], environment }))).code).toBe('INVALID_ARGUMENT')
      expect((await rejection(runtime.create({ workingDirectory: '/', mounts: [], environment }))).code).toBe('INVALID_ARGUMENT')
      expect(() => new addon.DockerShell({ container: id, cwd: '/', threadId: 't', env: environment })).toThrow(/environment/)
    }
    await runtime.remove(id)
  })
})

describe('path translation', () => {
  it('gives the mount root with a trailing slash, as Lace does', async () => {
    const host = tempDir('translate')
    const id = await runtime.create({ workingDirectory: '/', mounts: [{ source: host.path, target: '/workspace' }] })
    expect(runtime.translateToContainer(host.path, id)).toBe('/workspace/')
    expect(runtime.translateToContainer(join(host.path, 'a'), id)).toBe('/workspace/a')
    expect(runtime.translateToHost('/workspace', id)).toBe(host.path)
    await runtime.remove(id)
    host.cleanup()
  })
})
