// The isolation boundary, tried as an attacker would: an agent inside the session container,
// or a repository with a hostile devcontainer.json. A canary directory outside every mount
// must never be read, written, listed or changed.
import { execFileSync } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addon, engine, engineCli, IMAGES, rejection, suiteRuntime, tempDir } from './helpers'

const { runtime, cleanup } = suiteRuntime('isolation')
const canary = tempDir('canary')
const SECRET = `canary secret ${process.pid}`
const dirs: Array<{ cleanup: () => void }> = [canary]
let canaryState = ''
const snapshot = () =>
  readdirSync(canary.path).map((n) => {
    const s = statSync(join(canary.path, n))
    return `${n}:${s.size}:${s.mtimeMs}:${s.uid}:${s.mode}`
  }).join('|')

beforeAll(() => {
  writeFileSync(join(canary.path, 'secret.txt'), SECRET)
  canaryState = snapshot()
})
afterAll(async () => {
  expect(snapshot(), 'the canary directory changed').toBe(canaryState)
  expect(readFileSync(join(canary.path, 'secret.txt'), 'utf8')).toBe(SECRET)
  await cleanup()
  dirs.forEach((d) => d.cleanup())
})

const dir = (prefix: string) => {
  const d = tempDir(prefix)
  dirs.push(d)
  return d.path
}
const sh = async (id: string, script: string) => {
  const r = await runtime.exec(id, { command: ['sh', '-c', script] })
  expect(r.exitCode, r.stderr).toBe(0)
  return r.stdout
}
async function container(mounts: Array<{ source: string; target: string }>, image: string = IMAGES.debian) {
  const id = await runtime.create({ image, workingDirectory: '/', mounts })
  await runtime.start(id)
  return id
}
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@e', ...args], { cwd, encoding: 'utf8' }).trim()
function project(files: Record<string, string> = {}): string {
  const d = dir('iso-project')
  writeFileSync(join(d, 'README.md'), '# p\n')
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(d, name, '..'), { recursive: true })
    writeFileSync(join(d, name), text)
  }
  git(d, 'init', '-q', '-b', 'main')
  git(d, 'add', '.')
  git(d, 'commit', '-q', '-m', 'init')
  return d
}
const base = dir('iso-base')
const workspaces = new addon.Workspaces({ baseDir: base, engine, image: IMAGES.debian })
afterAll(async () => {
  for (const ws of await workspaces.list()) await workspaces.destroy(ws.sessionId).catch(() => {})
})
let n = 0
const session = () => `iso${process.pid}x${++n}`

describe('a mount source swapped for a symlink', () => {
  async function swapped() {
    const w = dir('iso-w')
    mkdirSync(join(w, 'inner'))
    writeFileSync(join(w, 'inner', 'secret.txt'), 'the container\'s own')
    const id = await container([{ source: w, target: '/workspace' }, { source: join(w, 'inner'), target: '/inner' }])
    await sh(id, `mv /workspace/inner /workspace/inner.old && ln -s ${canary.path} /workspace/inner && ln -s /inner/secret.txt /tmp/via`)
    return { w, id }
  }

  it('reads and writes follow the container\'s view, never the host path', async () => {
    const { w, id } = await swapped()
    const io = new addon.DockerFileIO({ engine, container: id })
    expect(await io.readFile('/inner/secret.txt')).toBe('the container\'s own')
    expect(await io.readFile('/tmp/via')).toBe('the container\'s own')
    expect(await io.readdir('/inner')).toEqual(['secret.txt'])
    await io.writeFile('/inner/new.txt', 'written')
    await io.mkdir('/inner/made/deeper')
    expect(readFileSync(join(w, 'inner.old', 'new.txt'), 'utf8')).toBe('written')
    expect(existsSync(join(w, 'inner.old', 'made', 'deeper'))).toBe(true)
    expect(await sh(id, 'cat /inner/new.txt')).toBe('written')
  })

  it('the engine (which binds mount sources again by path) is never asked for such a container', async () => {
    const { id } = await swapped()
    // The engine path alone (the session agent answers from inside the container, safely).
    const io = new addon.DockerFileIO({ engine, container: id, hostAccess: false, agent: false })
    for (const call of [() => io.readFile('/inner/secret.txt'), () => io.readFile('/tmp/via'), () => io.stat('/etc/hostname'), () => io.writeFile('/inner/x', 'x')]) {
      const err = await rejection(call())
      expect(err.code).toBe('EACCES')
      expect(err.message).toContain('inside the container-writable mount /workspace')
    }
    const viaAgent = new addon.DockerFileIO({ engine, container: id, hostAccess: false })
    expect(await viaAgent.readFile('/inner/secret.txt')).toBe('the container\'s own')
    await runtime.stop(id, 0)
    const stopped = new addon.DockerFileIO({ engine, container: id })
    expect((await rejection(stopped.readFile('/inner/secret.txt'))).code).toBe('EACCES')
  })

  it('nor through a second container sharing the parent directory', async () => {
    const w = dir('iso-shared')
    mkdirSync(join(w, 'inner'))
    writeFileSync(join(w, 'inner', 'secret.txt'), 'b sees this')
    const a = await container([{ source: w, target: '/workspace' }])
    const b = await container([{ source: join(w, 'inner'), target: '/inner' }])
    await sh(a, `mv /workspace/inner /workspace/inner.old && ln -s ${canary.path} /workspace/inner`)
    const io = new addon.DockerFileIO({ engine, container: b })
    expect(await io.readFile('/inner/secret.txt')).toBe('b sees this')
    await io.writeFile('/inner/from-b.txt', 'b')
    expect(existsSync(join(w, 'inner.old', 'from-b.txt'))).toBe(true)
  })

  it('a race of symlink swaps (mount source and paths inside) while the host reads and writes finds nothing', async () => {
    const w = dir('iso-race')
    mkdirSync(join(w, 'inner'))
    writeFileSync(join(w, 'inner', 'file'), 'inside')
    const id = await container([{ source: w, target: '/workspace' }, { source: join(w, 'inner'), target: '/inner' }])
    const loop = `end=$(($(date +%s) + 30)); while [ $(date +%s) -lt $end ]; do
      mv /workspace/inner /workspace/inner.x; ln -s ${canary.path} /workspace/inner; rm /workspace/inner; mv /workspace/inner.x /workspace/inner
      ln -sfn ${canary.path}/secret.txt /inner/swap; rm -f /inner/swap; echo inside > /inner/swap
      ln -sfn ${canary.path} /inner/dir; rm -f /inner/dir; mkdir -p /inner/dir; rmdir /inner/dir
    done`
    void runtime.exec(id, { command: ['sh', '-c', loop], timeout: 35_000 }).catch(() => {})
    const io = new addon.DockerFileIO({ engine, container: id })
    const seen = new Set<string>()
    const until = Date.now() + 5_000
    let ops = 0
    while (Date.now() < until && ops < 20_000) {
      for (const path of ['/inner/file', '/inner/swap', '/workspace/inner/file', '/workspace/inner/swap']) {
        const got = await io.readFile(path).catch((e) => `error ${e.code}`)
        seen.add(got.startsWith('error') ? got : got === SECRET ? 'SECRET' : 'other')
        await io.writeFile(`/inner/dir/w${ops % 4}`, 'x').catch(() => {})
        await io.readdir('/inner/dir').catch(() => [])
        ops += 1
      }
    }
    await runtime.stop(id, 0)
    expect(seen.has('SECRET')).toBe(false)
    expect(ops).toBeGreaterThan(100)
  })
})

describe('device nodes, FIFOs and oversized account files', () => {
  it('a device node under a mount is never opened on the host', async () => {
    const w = dir('iso-dev')
    execFileSync('mknod', [join(w, 'zero'), 'c', '1', '5'])
    execFileSync('mkfifo', [join(w, 'fifo')])
    const id = await container([{ source: w, target: '/workspace' }])
    const io = new addon.DockerFileIO({ engine, container: id })
    const started = Date.now()
    for (const path of ['/workspace/zero', '/workspace/fifo']) {
      const err = await rejection(io.readFile(path))
      expect(err.message).toContain(path)
    }
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(await io.fileExists('/workspace/zero')).toBe(true)
  })

  for (const hostAccess of [true, false]) {
    it(`a 1 GiB /etc/passwd is refused EFBIG, read no further than the limit (${hostAccess ? 'host' : 'engine'} access)`, async () => {
      const id = await container([])
      await sh(id, 'truncate -s 1G /etc/passwd')
      const rss = process.memoryUsage().rss
      const io = new addon.DockerFileIO({ engine, container: id, user: 'agent', hostAccess })
      const err = await rejection(io.readFile('/etc/hostname'))
      expect(err.code).toBe('EFBIG')
      expect(err.message).toContain('/etc/passwd')
      expect(process.memoryUsage().rss - rss).toBeLessThan(200 * 1024 * 1024)
    })
  }
})

describe('the user\'s repository', () => {
  it('shares no inode with the session: truncating packs and chown -R in the container leave the project intact', async () => {
    const proj = project({ 'src/main.rs': 'fn main() {}\n' })
    git(proj, 'repack', '-adq')
    const owners = () => execFileSync('stat', ['-c', '%u:%g %n', join(proj, 'README.md'), join(proj, '.git', 'objects', 'pack')], { encoding: 'utf8' })
    const before = owners()
    const info = await workspaces.create({ projectDir: proj, sessionId: session() })
    const env = await workspaces.environment(info.sessionId, 't')
    const r = await env.shell.execute(
      'for f in /workspace/.git/objects/pack/* $(find /workspace/.git/objects -type f); do : > "$f"; done; chown -R 1234:1234 /workspace; echo done',
      { toolRequestId: 'attack' },
    )
    expect(r.output.map((l) => l.text)).toContain('done')
    expect(git(proj, 'log', '--format=%s')).toBe('init')
    git(proj, 'fsck', '--strict')
    expect(owners()).toBe(before)
  })
})

describe('devcontainer.json', () => {
  it('an agent that rewrites its config and commits gets the first container\'s settings back on re-creation', async () => {
    const proj = project({ '.devcontainer/devcontainer.json': `{ "image": "${IMAGES.debian}" }` })
    const id = session()
    const info = await workspaces.create({ projectDir: proj, sessionId: id })
    const mounts = () => JSON.parse(engineCli('inspect', '-f', '{{json .Mounts}}', info.containerId))
      .map((m: { Source: string; Destination: string; RW: boolean }) => `${m.Source}:${m.Destination}:${m.RW}`).sort()
    const first = mounts()
    const env = await workspaces.environment(id, 't')
    const hostile = JSON.stringify({
      image: IMAGES.debian, mounts: ['source=/etc,target=/hostetc,type=bind', `source=${canary.path},target=/canary,type=bind`],
      privileged: true, runArgs: ['--pid=host'],
    })
    await env.fileIO.writeFile('/workspace/.devcontainer/devcontainer.json', hostile)
    const committed = await env.shell.execute('git -c user.name=a -c user.email=a@b commit -qam hostile && echo ok', { toolRequestId: 'c' })
    expect(committed.output.map((l) => l.text)).toEqual(['ok'])
    for (const recreate of [
      async () => engineCli('rm', '-f', info.containerId),
      async () => workspaces.stop(id),
    ]) {
      await recreate()
      await workspaces.create({ projectDir: proj, sessionId: id })
      expect(mounts()).toEqual(first)
      expect(engineCli('inspect', '-f', '{{.HostConfig.Privileged}}|{{.HostConfig.PidMode}}|', info.containerId)).toMatch(/^false\|(private)?\|$/)
      const again = await workspaces.environment(id, 't')
      expect(await again.fileIO.fileExists('/hostetc')).toBe(false)
    }
  })

  const hostile: Array<[string, string, string[]]> = [
    ['bind mount outside the clone (string)', '"mounts": ["source=/etc,target=/hostetc,type=bind"]', ['mounts[0]', 'trust.hostPaths: ["/etc"]']],
    ['bind mount outside the clone (object)', `"mounts": [{ "type": "bind", "source": "${'/'}", "target": "/host" }]`, ['mounts[0]', 'trust.hostPaths: ["/"]']],
    ['the engine socket', '"mounts": ["source=/var/run/docker.sock,target=/var/run/docker.sock,type=bind"]', ['trust.engineSocket: true']],
    ['privileged', '"privileged": true', ['privileged: privileged mode', 'trust.privileged: true']],
    ['capAdd', '"capAdd": ["SYS_ADMIN"]', ['capAdd', 'trust.capabilities: ["SYS_ADMIN"]']],
    ['securityOpt', '"securityOpt": ["apparmor=unconfined"]', ['trust.securityOptions: true']],
    ['runArgs privileges', '"runArgs": ["--cap-add=NET_ADMIN", "--device", "/dev/kvm", "--security-opt", "seccomp=unconfined"]', ['trust.capabilities: ["NET_ADMIN"]', 'trust.devices: true', 'trust.securityOptions: true']],
    ['host namespaces', '"runArgs": ["--network=host", "--pid", "host", "--ipc=host"]', ['network=host', 'pid=host', 'ipc=host', 'trust.hostNamespaces: true']],
    ['a host volume in runArgs', '"runArgs": ["-v", "/root:/r"]', ['trust.hostPaths: ["/root"]']],
    ['initializeCommand', `"initializeCommand": "touch ${join(canary.path, 'pwned')}"`, ['trust.hostCommands: true']],
    ['host environment', '"containerEnv": { "K": "${localEnv:HOME}" }', ['trust.localEnv: ["HOME"]']],
  ]
  for (const [what, field, named] of hostile) {
    it(`an untrusted repository's ${what} is refused, naming the option that allows it; no container is left`, async () => {
      const proj = project({ '.devcontainer/devcontainer.json': `{ "image": "${IMAGES.debian}", ${field} }` })
      const id = session()
      const err = await rejection(workspaces.create({ projectDir: proj, sessionId: id }))
      expect(err.code).toBe('DEVCONTAINER')
      for (const text of named) expect(err.message, err.message).toContain(text)
      expect(engineCli('ps', '-aq', '--filter', `label=dev.container-isolation.session=${id}`)).toBe('')
    })
  }

  it('a missing host path is never created; a build context or Dockerfile outside the project leaks nothing', async () => {
    const missing = join(dir('iso-missing'), 'not', 'there')
    const proj = project({ '.devcontainer/devcontainer.json': `{ "image": "${IMAGES.debian}", "mounts": ["source=${missing},target=/m,type=bind"] }` })
    const err = await rejection(workspaces.create({ projectDir: proj, sessionId: session(), trust: { hostPaths: ['/'] } }))
    expect(err.code).toBe('DEVCONTAINER')
    expect(existsSync(missing)).toBe(false)
    const leaky = project({ '.devcontainer/devcontainer.json': '{ "build": { "dockerfile": "Dockerfile" } }' })
    symlinkSync(join(canary.path, 'secret.txt'), join(leaky, '.devcontainer', 'Dockerfile'))
    const err2 = await rejection(workspaces.create({ projectDir: leaky, sessionId: session() }))
    expect(err2.message).toContain('build.dockerfile')
    expect(err2.message).not.toContain(SECRET)
    const outside = project({ '.devcontainer/devcontainer.json': `{ "build": { "dockerfile": "Dockerfile", "context": "${canary.path}" } }`, '.devcontainer/Dockerfile': `FROM ${IMAGES.debian}\nCOPY . /stolen\n` })
    const err3 = await rejection(workspaces.create({ projectDir: outside, sessionId: session() }))
    expect(err3.message).toContain(`build.context: ${canary.path} is outside the project`)
  })

  it('what the host trusts is applied: a host path mount and a capability', async () => {
    const shared = dir('iso-trusted')
    writeFileSync(join(shared, 'data.txt'), 'shared by the host')
    const proj = project({ '.devcontainer/devcontainer.json': `{ "image": "${IMAGES.debian}", "capAdd": ["SYS_PTRACE"], "mounts": ["source=${shared},target=/shared,type=bind,readonly"] }` })
    const id = session()
    await workspaces.create({ projectDir: proj, sessionId: id, trust: { hostPaths: [shared], capabilities: ['SYS_PTRACE'] } })
    const env = await workspaces.environment(id, 't')
    expect(await env.fileIO.readFile('/shared/data.txt')).toBe('shared by the host')
    const caps = await env.shell.execute('grep CapBnd /proc/self/status', { toolRequestId: 'caps' })
    expect(BigInt(`0x${caps.output[0].text.split(/\s+/)[1]}`) & (1n << 19n)).toBe(1n << 19n) // CAP_SYS_PTRACE
  })

  it('remoteUser, containerUser and remoteEnv apply to the environment\'s shell and FileIO', async () => {
    const proj = project({ '.devcontainer/devcontainer.json': `{ "image": "${IMAGES.debian}", "remoteUser": "agent", "remoteEnv": { "WHERE": "remote-env" } }` })
    const id = session()
    const info = await workspaces.create({ projectDir: proj, sessionId: id })
    chownSync(info.clonePath, 1000, 1000)
    const env = await workspaces.environment(id, 't')
    const r = await env.shell.execute('id -un; echo "$WHERE"; touch /workspace/by-shell', { toolRequestId: 'u' })
    expect(r.output.map((l) => l.text)).toEqual(['agent', 'remote-env'])
    await env.fileIO.writeFile('/workspace/by-fileio', 'x')
    for (const name of ['by-shell', 'by-fileio']) expect(statSync(join(info.clonePath, name)).uid).toBe(1000)
    expect(env.homeDir).toBe('/home/agent')
  })
})
