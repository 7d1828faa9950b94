import { readdirSync, readFileSync, statSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { OutputLine } from '../index'
import { addon, engine, engineCli, eventually, IMAGES, isRemote, rejection, suiteRuntime, tempDir } from './helpers'

const { runtime, baseDir, cleanup } = suiteRuntime('runtime')
afterAll(cleanup)

const docker = engineCli

async function sandbox(extra: Partial<Parameters<typeof runtime.create>[0]> = {}) {
  const id = await runtime.create({ workingDirectory: '/', mounts: [], ...extra })
  await runtime.start(id)
  return id
}

/**
 * Whether the container's /pause has a handler for SIGTERM (bit 15 of SigCgt). Found on this
 * machine by the container's full id in its cgroup path, which holds for dockerd, Podman and the
 * remote rig's dockerd (whose pids are of its own namespace).
 */
function pauseCatchesTerm(containerId: string): boolean {
  const fullId = docker('inspect', '-f', '{{.Id}}', containerId)
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (!readFileSync(`/proc/${pid}/cgroup`, 'utf8').includes(fullId)) continue
      const status = readFileSync(`/proc/${pid}/status`, 'utf8')
      if (!/^Name:\s*pause$/m.test(status)) continue
      const caught = BigInt(`0x${/^SigCgt:\s*([0-9a-f]+)$/m.exec(status)?.[1] ?? '0'}`)
      return ((caught >> 14n) & 1n) === 1n
    } catch {
      // gone between the listing and the read
    }
  }
  return false
}

async function processes(id: string): Promise<string> {
  return (await runtime.exec(id, { command: ['ps', '-eo', 'pid,args'] })).stdout
}

describe('create', () => {
  it('names, labels and runs a sandbox under an init process, creating mount sources', async () => {
    const host = tempDir('mount')
    const source = join(host.path, 'not', 'yet')
    // A remote engine cannot bind-mount a folder of this machine: no mount there.
    const id = await runtime.create({
      id: 'sess1',
      workingDirectory: '/workspace',
      mounts: isRemote ? [] : [{ source, target: '/workspace' }],
      labels: { team: 'x', 'dev.container-isolation.managed': 'false' },
      environment: { GREETING: 'hello world' },
    })
    expect(id).toMatch(/^sess1-[0-9a-f]{8}$/)
    if (!isRemote) expect(statSync(source).isDirectory()).toBe(true)
    const labels = JSON.parse(docker('inspect', '-f', '{{json .Config.Labels}}', id))
    expect(labels).toMatchObject({
      team: 'x',
      'dev.container-isolation.managed': 'true',
      'dev.container-isolation.session': 'sess1',
      'dev.container-isolation.lifetime': 'session',
      'dev.container-isolation.owner-pid': String(process.pid),
      'dev.container-isolation.base-dir': baseDir,
    })
    for (const key of ['owner-start', 'owner-boot-id', 'owner-host', 'clone-path', 'project-dir', 'created-at']) {
      expect(labels).toHaveProperty(`dev.container-isolation.${key}`)
    }
    expect(docker('inspect', '-f', '{{.HostConfig.Init}}', id)).toBe('true')
    await runtime.start(id)
    const pid1 = await runtime.exec(id, { command: ['cat', '/proc/1/cmdline'] })
    expect(pid1.stdout.split('\0')[0]).toMatch(/init/)
    const env = await runtime.exec(id, { command: ['sh', '-c', 'echo "$GREETING"; pwd'] })
    expect(env.stdout).toBe('hello world\n/workspace\n')
    host.cleanup()
  })

  it('uses config.name as given and gives generated names a ci- prefix', async () => {
    const name = `named-${process.pid}`
    expect(await runtime.create({ name, workingDirectory: '/', mounts: [] })).toBe(name)
    expect(await runtime.create({ workingDirectory: '/', mounts: [] })).toMatch(/^ci-[0-9a-f]{8}$/)
    const again = await rejection(runtime.create({ name, workingDirectory: '/', mounts: [] }))
    expect(again.code).toBe('EEXIST')
  })

  it("rejects a missing image with IMAGE_NOT_FOUND under pull 'never'; a pull whose registry cannot be reached is not read as a missing image", async () => {
    const image = 'container-isolation-test:absent'
    const never = await rejection(runtime.create({ image, pull: 'never', workingDirectory: '/', mounts: [] }))
    expect(never.code).toBe('IMAGE_NOT_FOUND')
    expect(never.message).toContain(image)
    expect(never.message).toContain("pull is 'never'")
    // A loopback port nothing listens on: the engine's pull fails, and the registry asked
    // from this machine cannot be reached either. An engine on another machine has a
    // loopback of its own, which this machine cannot see: its failure stays the engine's.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number }
        server.close(() => resolve(port))
      })
    })
    const nowhere = `127.0.0.1:${port}/ci/absent:1`
    const pulled = await rejection(runtime.create({ image: nowhere, workingDirectory: '/', mounts: [] }))
    expect(pulled.code, pulled.message).toBe(isRemote ? 'ENGINE_ERROR' : 'REGISTRY_UNREACHABLE')
    expect(pulled.message).toContain(nowhere)
  })

  it('rejects malformed configs with INVALID_ARGUMENT before touching the engine', async () => {
    const cases = [
      { workingDirectory: 'relative', mounts: [] },
      { workingDirectory: '/', mounts: [{ source: 'rel', target: '/x' }] },
      { workingDirectory: '/', mounts: [], command: [] },
      { workingDirectory: '/', mounts: [], name: '../x' },
      { workingDirectory: '/', mounts: [], id: '$(id)' },
      { workingDirectory: '/', mounts: [], lifetime: 'forever' as never },
      { workingDirectory: '/', mounts: [], memory: -5 },
    ]
    for (const config of cases) {
      const err = await rejection(runtime.create(config))
      expect(err.code, JSON.stringify(config)).toBe('INVALID_ARGUMENT')
    }
  })

  it('runs images without a shell on their own default process', async () => {
    const id = await runtime.create({ image: IMAGES.noshell, workingDirectory: '/', mounts: [] })
    await runtime.start(id)
    expect((await runtime.inspect(id)).state).toBe('running')
    // A PID 1 ignores SIGTERM until it installs a handler: wait for /pause to have one, or a
    // stop under load races its start and ends in the grace period's SIGKILL.
    await eventually('/pause catches SIGTERM', () => pauseCatchesTerm(id))
    await runtime.stop(id)
    const stopped = await runtime.inspect(id)
    expect(stopped.state).toBe('stopped')
    // 0 is /pause's own answer to SIGTERM; a kill after the grace period would be 137.
    expect(stopped.exitCode).toBe(0)
  })

  it('applies memory, cpuShares, user and network', async () => {
    const id = await sandbox({ memory: 256 * 1024 * 1024, cpuShares: 512, user: 'agent', network: 'none' })
    expect(docker('inspect', '-f', '{{.HostConfig.Memory}} {{.HostConfig.CpuShares}} {{.HostConfig.NetworkMode}}', id)).toBe(
      `${256 * 1024 * 1024} 512 none`,
    )
    expect((await runtime.exec(id, { command: ['id', '-u'] })).stdout.trim()).toBe('1000')
  })
})

describe('start and stop', () => {
  it('start is a no-op on a running container', async () => {
    const id = await sandbox()
    await runtime.start(id)
    expect((await runtime.inspect(id)).state).toBe('running')
  })

  it('stop returns in under 1.5 s and the container is stopped with exit 0', async () => {
    const id = await sandbox()
    const started = Date.now()
    await runtime.stop(id)
    const elapsed = Date.now() - started
    expect(elapsed).toBeLessThan(1500)
    const info = await runtime.inspect(id)
    expect(info.state).toBe('stopped')
    expect(info.exitCode).toBe(0)
    expect(info.stoppedAt).toBeInstanceOf(Date)
    await runtime.stop(id) // stopping a stopped container is fine
  })

  it('stop of a busybox sandbox is fast too', async () => {
    const id = await sandbox({ image: IMAGES.busybox })
    const started = Date.now()
    await runtime.stop(id)
    expect(Date.now() - started).toBeLessThan(1500)
  })

  it('stop(timeout) SIGKILLs a main process that ignores SIGTERM; 137 counts as stopped', async () => {
    const id = await runtime.create({
      workingDirectory: '/',
      mounts: [],
      command: ['bash', '-c', "trap '' TERM; touch /tmp/trapped; while :; do sleep 0.1; done"],
    })
    await runtime.start(id)
    // A SIGTERM before the trap is set ends bash with 143: wait for it.
    await eventually('the trap set', async () => (await runtime.exec(id, { command: ['test', '-e', '/tmp/trapped'] })).exitCode === 0)
    const started = Date.now()
    await runtime.stop(id, 1000)
    expect(Date.now() - started).toBeLessThan(5000)
    const info = await runtime.inspect(id)
    expect(info.exitCode).toBe(137)
    expect(info.state).toBe('stopped')
  })

  it('unknown containers reject with CONTAINER_NOT_FOUND naming them', async () => {
    for (const call of [
      () => runtime.start('no-such-container-x'),
      () => runtime.stop('no-such-container-x'),
      () => runtime.remove('no-such-container-x'),
      () => runtime.inspect('no-such-container-x'),
      () => runtime.wait('no-such-container-x'),
      () => runtime.exec('no-such-container-x', { command: ['true'] }),
      () => runtime.logs('no-such-container-x'),
    ]) {
      const err = await rejection(call())
      expect(err.code).toBe('CONTAINER_NOT_FOUND')
      expect(err.message).toContain('no-such-container-x')
    }
  })
})

describe('remove', () => {
  it('stops a running container first and removes it', async () => {
    const id = await sandbox()
    await runtime.remove(id)
    expect((await rejection(runtime.inspect(id))).code).toBe('CONTAINER_NOT_FOUND')
    expect((await runtime.list()).map((c) => c.id)).not.toContain(id)
  })
})

describe('exec', () => {
  it('returns stdout, stderr and non-zero exit codes as results', async () => {
    const id = await sandbox()
    const result = await runtime.exec(id, { command: ['bash', '-c', 'echo out; echo err >&2; exit 42'] })
    expect(result).toEqual({ stdout: 'out\n', stderr: 'err\n', exitCode: 42 })
  })

  it('honours workingDirectory, environment, stdin and user', async () => {
    const id = await sandbox()
    const result = await runtime.exec(id, {
      command: ['bash', '-c', 'pwd; echo "$A"; cat; id -un'],
      workingDirectory: '/tmp',
      environment: { A: 'a b $c' },
      stdin: 'from stdin\n',
      user: 'agent',
    })
    expect(result.stdout).toBe('/tmp\na b $c\nfrom stdin\nagent\n')
  })

  it('passes argv as data, never through a shell', async () => {
    const id = await sandbox()
    const result = await runtime.exec(id, { command: ['echo', '$(id)', '; rm -rf /', '`x`'] })
    expect(result.stdout).toBe('$(id) ; rm -rf / `x`\n')
  })

  it('keeps binary-ish output and large output intact', async () => {
    const id = await sandbox()
    const result = await runtime.exec(id, { command: ['bash', '-c', 'head -c 3000000 /dev/zero | tr "\\0" a'] })
    expect(result.stdout.length).toBe(3_000_000)
  })

  it('timeout rejects with TIMEOUT in under 2 s and leaves no process behind', async () => {
    const id = await sandbox()
    const started = Date.now()
    const err = await rejection(runtime.exec(id, { command: ['sleep', '30'], timeout: 500 }))
    const elapsed = Date.now() - started
    expect(err.code).toBe('TIMEOUT')
    expect(err.message).toContain(id)
    expect(elapsed).toBeLessThan(2000)
    expect(await processes(id)).not.toContain('sleep 30')
  })

  it('timeout kills the whole tree, background children included', async () => {
    const id = await sandbox()
    const err = await rejection(
      runtime.exec(id, { command: ['bash', '-c', 'sleep 301 & setsid sleep 302 & sleep 303; wait'], timeout: 500 }),
    )
    expect(err.code).toBe('TIMEOUT')
    const ps = await processes(id)
    for (const leftover of ['sleep 301', 'sleep 302', 'sleep 303']) expect(ps).not.toContain(leftover)
  })

  it('timeout works on the busybox image', async () => {
    const id = await sandbox({ image: IMAGES.busybox })
    const err = await rejection(runtime.exec(id, { command: ['sleep', '30'], timeout: 300 }))
    expect(err.code).toBe('TIMEOUT')
    expect((await runtime.exec(id, { command: ['ps'] })).stdout).not.toContain('sleep 30')
  })

  it('rejects an empty command with INVALID_ARGUMENT and a stopped container with CONTAINER_NOT_RUNNING', async () => {
    const id = await sandbox()
    expect((await rejection(runtime.exec(id, { command: [] }))).code).toBe('INVALID_ARGUMENT')
    await runtime.stop(id)
    const err = await rejection(runtime.exec(id, { command: ['true'] }))
    expect(err.code).toBe('CONTAINER_NOT_RUNNING')
    expect(err.message).toContain(id)
  })
})

describe('inspect and list', () => {
  it('inspect reports state, dates, image and labels', async () => {
    const id = await runtime.create({ workingDirectory: '/', mounts: [], labels: { k: 'v' } })
    const created = await runtime.inspect(id)
    expect(created).toMatchObject({ id, name: id, state: 'created', image: IMAGES.debian })
    expect(created.startedAt).toBeUndefined()
    expect(created.labels?.k).toBe('v')
    await runtime.start(id)
    const running = await runtime.inspect(id)
    expect(running.state).toBe('running')
    expect(running.pid).toBeGreaterThan(0)
    expect(running.startedAt).toBeInstanceOf(Date)
    expect(Math.abs(running.startedAt!.getTime() - Date.now())).toBeLessThan(60_000)
  })

  it('list shows only containers this library created under this base directory', async () => {
    const ours = await runtime.create({ workingDirectory: '/', mounts: [] })
    const other = suiteRuntime('other-base')
    const theirs = await other.runtime.create({ workingDirectory: '/', mounts: [] })
    const foreign = docker('create', '--label', 'dev.container-isolation.session=fake', IMAGES.debian, 'true')
    try {
      const ids = (await runtime.list()).map((c) => c.id)
      expect(ids).toContain(ours)
      expect(ids).not.toContain(theirs)
      expect(ids.some((id) => foreign.startsWith(id) || id === foreign)).toBe(false)
      const entry = (await runtime.list()).find((c) => c.id === ours)!
      expect(entry.state).toBe('created')
      expect(entry.labels?.['dev.container-isolation.managed']).toBe('true')
    } finally {
      docker('rm', '-f', foreign)
      await other.cleanup()
    }
  })
})

describe('jobs: wait and logs', () => {
  const job = ['sh', '-c', 'for i in 1 2 3; do echo "{\\"i\\":$i}"; sleep 0.3; done; exit 7']

  it('wait resolves with the exit code and logs delivers every line', async () => {
    const id = await runtime.create({ workingDirectory: '/', mounts: [], command: job })
    await runtime.start(id)
    const lines: OutputLine[] = []
    const [, code] = await Promise.all([
      runtime.logs(id, { follow: true, onLine: (l) => lines.push(l) }),
      runtime.wait(id),
    ])
    expect(code).toBe(7)
    expect(lines.map((l) => JSON.parse(l.text).i)).toEqual([1, 2, 3])
    expect(lines.every((l) => l.stream === 'stdout')).toBe(true)
    const info = await runtime.inspect(id)
    expect(info).toMatchObject({ state: 'failed', exitCode: 7 })
    expect(await runtime.wait(id)).toBe(7) // already exited
  })

  // Live, not at the end: each line arrives before the program prints the next one, a second
  // later. How soon within that second is the bench's business: Podman's logs endpoint polls
  // its log file every 250 ms (its attach would be faster but loses, doubles and mislabels
  // replayed lines), a remote engine adds its transport, and npm test runs every pass at once.
  it('follows the log live: each line arrives before the next is printed', async () => {
    const stamped = [
      'bash',
      '-c',
      'for i in 1 2 3; do echo "{\\"i\\":$i,\\"t\\":$(date +%s%3N)}"; echo "e$i" >&2; sleep 1; done; exit 7',
    ]
    const id = await runtime.create({ workingDirectory: '/', mounts: [], command: stamped })
    await runtime.start(id)
    const arrivals: { printed: number; arrived: number }[] = []
    const errors: string[] = []
    await runtime.logs(id, {
      follow: true,
      onLine: (line) => {
        if (line.stream === 'stderr') return errors.push(line.text)
        arrivals.push({ printed: JSON.parse(line.text).t, arrived: Date.now() })
      },
    })
    expect(arrivals).toHaveLength(3)
    for (let i = 0; i + 1 < arrivals.length; i++) expect(arrivals[i].arrived).toBeLessThan(arrivals[i + 1].printed)
    expect(errors).toEqual(['e1', 'e2', 'e3'])
    expect(await runtime.wait(id)).toBe(7)
  })

  it('logs without follow returns what is there; since filters by time', async () => {
    const id = await runtime.create({
      workingDirectory: '/',
      mounts: [],
      command: ['bash', '-c', 'echo early; sleep 2.5; echo late'],
    })
    await runtime.start(id)
    await runtime.wait(id)
    const all: string[] = []
    await runtime.logs(id, { onLine: (l) => all.push(l.text) })
    expect(all).toEqual(['early', 'late'])
    const started = (await runtime.inspect(id)).startedAt!.getTime()
    const late: string[] = []
    // 1.5 s: past the whole second Podman stamps `early` with, before `late`.
    await runtime.logs(id, { since: started + 1500, onLine: (l) => late.push(l.text) })
    expect(late).toEqual(['late'])
  })
})

describe('path translation', () => {
  // Between this machine's folders and their bind mounts: a remote engine cannot mount them.
  it.skipIf(isRemote)('translates by segments, longest mount first, and leaves other paths alone', async () => {
    const a = tempDir('ta')
    const b = tempDir('tb')
    const id = await runtime.create({
      workingDirectory: '/workspace',
      mounts: [
        { source: a.path, target: '/workspace' },
        { source: b.path, target: '/workspace/cache', readonly: true },
      ],
    })
    expect(runtime.translateToContainer(join(a.path, 'src/x.ts'), id)).toBe('/workspace/src/x.ts')
    expect(runtime.translateToContainer(join(b.path, 'y'), id)).toBe('/workspace/cache/y')
    expect(runtime.translateToHost('/workspace/cache/y', id)).toBe(join(b.path, 'y'))
    expect(runtime.translateToHost('/workspace', id)).toBe(a.path)
    expect(runtime.translateToHost('/workspace2/x', id)).toBe('/workspace2/x')
    expect(runtime.translateToHost('/etc/passwd', id)).toBe('/etc/passwd')
    // A fresh runtime learns the mounts from inspect.
    const fresh = new addon.DockerRuntime({ engine, baseDir })
    await fresh.inspect(id)
    expect(fresh.translateToHost('/workspace/z', id)).toBe(join(a.path, 'z'))
    a.cleanup()
    b.cleanup()
  })

  it('throws CONTAINER_NOT_FOUND for a container it does not know', () => {
    let caught: (Error & { code?: string }) | undefined
    try {
      runtime.translateToHost('/workspace', 'never-created')
    } catch (err) {
      caught = err as Error & { code?: string }
    }
    expect(caught?.code).toBe('CONTAINER_NOT_FOUND')
    expect(caught?.message).toContain('never-created')
  })
})
