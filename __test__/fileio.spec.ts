import { execFileSync } from 'node:child_process'
import { chmodSync, chownSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addon, engine, engineCli, IMAGES, isPodman, isRemote, rejection, suiteRuntime, tempDir } from './helpers'

const docker = engineCli
const PODMAN = isPodman

const { runtime, cleanup } = suiteRuntime('fileio')
const host = tempDir('fileio-host')
const outside = tempDir('fileio-outside')
const byCli: string[] = [] // containers made with the docker CLI (options DockerRuntime lacks)
afterAll(async () => {
  await cleanup()
  for (const id of byCli) docker('rm', '-f', '-v', id)
  host.cleanup()
  outside.cleanup()
})

const BYTES = Buffer.from([0, 1, 2, 0xff, 0xfe, 0x80, 0x0a, 0x00, 0xc3, 0x28, 0x41])

// On a remote engine a folder of this machine cannot be bind-mounted (the engine's machine has
// no such path): /workspace is then the container's own directory, and the checks of the
// host folder behind the mount are skipped (isRemote).
const WORKSPACE_MOUNT = isRemote ? [] : [{ source: host.path, target: '/workspace' }]

async function container(image: string, mounts = WORKSPACE_MOUNT) {
  const id = await runtime.create({ image, workingDirectory: '/workspace', mounts })
  await runtime.start(id)
  return id
}

async function inContainer(id: string, script: string) {
  return (await runtime.exec(id, { command: ['sh', '-c', script] })).stdout
}

// The same behaviour on every image, under a mount and outside it, on every path: answered
// from the container's root on the host (root's operations), by the session agent inside
// the container, and through the engine alone (where the agent cannot run).
const ACCESS = [
  ['host', { hostAccess: true, agent: true }],
  ['agent', { hostAccess: false, agent: true }],
  ['engine', { hostAccess: false, agent: false }],
] as const
// The whole matrix on the local dockerd. Elsewhere what differs is the engine (Podman) or the
// way bytes reach it (a remote engine), not the image: Podman runs the debian image every way,
// busybox and noshell through the engine (its archive endpoint) and noshell by the agent too
// (delivered through that endpoint); a remote engine (no host access there) the debian image by
// the agent and the engine, and noshell through the engine.
function runsHere(image: string, access: string): boolean {
  if (isRemote) return image === IMAGES.debian ? access !== 'host' : image === IMAGES.noshell && access === 'engine'
  if (isPodman) return image === IMAGES.debian || access === 'engine' || (image === IMAGES.noshell && access === 'agent')
  return true
}
const MATRIX = [IMAGES.debian, IMAGES.busybox, IMAGES.noshell].flatMap((i) => ACCESS.map((a) => [i, a] as const))
for (const [image, [access, paths]] of MATRIX.filter(([image, [access]]) => runsHere(image, access))) {
  describe(`DockerFileIO on ${image}, ${access} access`, () => {
    const tag = `${image.split(':')[1]}-${access}`
    let id = ''
    let io: InstanceType<typeof addon.DockerFileIO>
    beforeAll(async () => {
      id = await container(image)
      io = new addon.DockerFileIO({ engine, container: id, ...paths })
    })

    for (const base of ['/workspace', '/tmp']) {
      const where = base === '/workspace' ? 'under a bind mount' : 'in the container fs'
      const dir = `${base}/t-${tag}`

      it(`${where}: mkdir -p, write, read, stat, readdir, exists, isDirectory`, async () => {
        await io.mkdir(`${dir}/a/b`)
        await io.mkdir(`${dir}/a/b`) // again: fine
        expect(await io.isDirectory(`${dir}/a/b`)).toBe(true)
        await io.writeFile(`${dir}/a/text.txt`, 'héllo\nworld')
        expect(await io.readFile(`${dir}/a/text.txt`)).toBe('héllo\nworld')
        await io.writeFile(`${dir}/a/text.txt`, 'short') // overwrite
        expect(await io.readFile(`${dir}/a/text.txt`)).toBe('short')
        await io.writeFile(`${dir}/a/.hidden`, '')
        expect(await io.readdir(`${dir}/a`)).toEqual(['.hidden', 'b', 'text.txt'])
        expect(await io.fileExists(`${dir}/a/text.txt`)).toBe(true)
        expect(await io.fileExists(`${dir}/a`)).toBe(true)
        expect(await io.fileExists(`${dir}/nope`)).toBe(false)
        expect(await io.isDirectory(`${dir}/a/text.txt`)).toBe(false)
        expect(await io.isDirectory(`${dir}/nope`)).toBe(false)
        const st = await io.stat(`${dir}/a/text.txt`)
        expect(st?.size).toBe(5)
        expect(Math.abs(st!.mtimeMs - Date.now())).toBeLessThan(60_000)
        expect(await io.stat(`${dir}/nope`)).toBeUndefined()
      })

      it(`${where}: NUL bytes and invalid UTF-8 round-trip byte-exact`, async () => {
        await io.mkdir(dir)
        await io.writeFile(`${dir}/bin`, BYTES)
        expect(Buffer.compare(await io.readBinaryFile(`${dir}/bin`), BYTES)).toBe(0)
        expect(await io.readFile(`${dir}/bin`)).toBe(BYTES.toString('utf8'))
      })

      it(`${where}: errors have Node's codes and name the path`, async () => {
        await io.mkdir(`${dir}/e`)
        await io.writeFile(`${dir}/e/file`, 'x')
        const cases: Array<[() => Promise<unknown>, string]> = [
          [() => io.readFile(`${dir}/e/missing`), 'ENOENT'],
          [() => io.readBinaryFile(`${dir}/e/missing`), 'ENOENT'],
          [() => io.readFile(`${dir}/e`), 'EISDIR'],
          [() => io.readFile(`${dir}/e/file/below`), 'ENOTDIR'],
          [() => io.readdir(`${dir}/e/missing`), 'ENOENT'],
          [() => io.readdir(`${dir}/e/file`), 'ENOTDIR'],
          [() => io.writeFile(`${dir}/e/missing/x`, 'x'), 'ENOENT'],
          [() => io.writeFile(`${dir}/e`, 'x'), 'EISDIR'],
          [() => io.writeFile(`${dir}/e/file/x`, 'x'), 'ENOTDIR'],
          [() => io.mkdir(`${dir}/e/file`), 'EEXIST'],
          [() => io.mkdir(`${dir}/e/file/sub`), 'ENOTDIR'],
          [() => io.readFile(`${dir}/e/${'n'.repeat(256)}`), 'ENAMETOOLONG'],
          [() => io.writeFile(`${dir}/e/${'n'.repeat(300)}`, 'x'), 'ENAMETOOLONG'],
          [() => io.mkdir(`${dir}/e/${'n'.repeat(256)}`), 'ENAMETOOLONG'],
          [() => io.stat(`${dir}/e/${'n'.repeat(256)}`), 'ENAMETOOLONG'],
        ]
        for (const [call, code] of cases) {
          const err = await rejection(call())
          expect(err.code, err.message).toBe(code)
          expect(err.message).toContain(id)
          expect(err.message).toContain(`${dir}/e`)
        }
        expect(await io.stat(`${dir}/e/file/below`)).toBeUndefined()
        expect(await io.fileExists(`${dir}/e/file/below`)).toBe(false)
      })

      it(`${where}: a write to a missing parent leaves nothing behind`, async () => {
        await io.mkdir(`${dir}/clean`)
        await rejection(io.writeFile(`${dir}/clean/missing/x`, 'x'))
        expect(await io.readdir(`${dir}/clean`)).toEqual([])
      })

      it(`${where}: relative paths resolve against cwd`, async () => {
        const rel = new addon.DockerFileIO({ engine, container: id, cwd: base, ...paths })
        await rel.mkdir(`t-rel-${tag}/x`)
        await rel.writeFile(`t-rel-${tag}/x/../f.txt`, 'rel')
        expect(await io.readFile(`${base}/t-rel-${tag}/f.txt`)).toBe('rel')
      })
    }

    it('readdir of the root lists its first level only', async () => {
      const names = await io.readdir('/')
      expect(names).toEqual(expect.arrayContaining(['etc', 'tmp', 'workspace']))
      expect(names).not.toContain('hosts')
      expect(await io.readdir('/etc')).toEqual(expect.arrayContaining(['hosts', 'passwd']))
    })

    it('relative paths default to the container working directory', async () => {
      await io.writeFile(`wd-${tag}.txt`, 'wd')
      if (isRemote) expect(await io.readFile(`/workspace/wd-${tag}.txt`)).toBe('wd')
      else expect(readFileSync(join(host.path, `wd-${tag}.txt`), 'utf8')).toBe('wd')
    })

    // Remotely there is no host folder to hand to uid 1000 (the container's own /workspace
    // is root's): the ownership of the container's own files is checked everywhere else.
    it.skipIf(isRemote)("files written as user 'agent' are owned by uid 1000, under a mount and not", async () => {
      const agent = new addon.DockerFileIO({ engine, container: id, user: 'agent', ...paths })
      const name = tag
      const own = join(host.path, `agent-own-${name}`)
      mkdirSync(own)
      chownSync(own, 1000, 1000)
      chmodSync(host.path, 0o711) // the mount itself stays root's, but may be passed through
      await agent.writeFile(`/tmp/agent-${name}.txt`, 'a')
      await agent.writeFile(`/workspace/agent-own-${name}/agent.txt`, 'a')
      await agent.mkdir(`/tmp/agent-dir-${name}/sub`)
      expect(statSync(join(own, 'agent.txt')).uid).toBe(1000)
      // The container's own view; the noshell image has no `stat` to ask.
      if (image !== IMAGES.noshell) {
        const owners = await inContainer(id, `stat -c '%u %g' /tmp/agent-${name}.txt /workspace/agent-own-${name}/agent.txt /tmp/agent-dir-${name}/sub`)
        expect(owners.trim().split('\n')).toEqual(['1000 1000', '1000 1000', '1000 1000'])
      }
    })

    if (paths.agent) {
      it("user 'agent' gets EACCES where the container's kernel says so", async () => {
        const agent = new addon.DockerFileIO({ engine, container: id, user: 'agent', ...paths })
        await io.mkdir(`/tmp/locked-${tag}`) // root's, 0755
        await io.writeFile(`/tmp/locked-${tag}/file`, 'root')
        for (const call of [
          () => agent.writeFile(`/workspace/denied-${tag}.txt`, 'a'), // a root-owned 0700 mount
          () => agent.writeFile('/etc/denied.txt', 'a'),
          () => agent.writeFile(`/tmp/locked-${tag}/file`, 'a'),
          () => agent.mkdir(`/tmp/locked-${tag}/sub`),
          ...(image === IMAGES.noshell ? [] : [() => agent.readdir('/root')]),
        ]) {
          expect((await rejection(call())).code).toBe('EACCES')
        }
        expect(await io.fileExists(`/workspace/denied-${tag}.txt`)).toBe(false)
        expect(await io.readFile(`/tmp/locked-${tag}/file`)).toBe('root')
      })
    }
  })
}

// The links are made in a folder of this machine and bind-mounted: a remote engine cannot
// mount it. (The escapes they test are of the host fast path, which is off remotely.)
describe.skipIf(isRemote)('DockerFileIO symlinks', () => {
  let id = ''
  let io: InstanceType<typeof addon.DockerFileIO>
  beforeAll(async () => {
    writeFileSync(join(outside.path, 'secret'), 'HOST SECRET')
    const mount = join(host.path, 'links')
    mkdirSync(mount, { recursive: true })
    writeFileSync(join(mount, 'real.txt'), 'real')
    symlinkSync(join(outside.path, 'secret'), join(mount, 'abs-escape')) // a host path
    symlinkSync('/etc/hostname', join(mount, 'abs-container')) // a container path
    symlinkSync('../../../../../../../..' + join(outside.path, 'secret'), join(mount, 'dotdot-escape'))
    symlinkSync(outside.path, join(mount, 'dir-escape'))
    symlinkSync('real.txt', join(mount, 'inside'))
    symlinkSync('loop', join(mount, 'loop'))
    // `sym/..` is the parent of where sym points (deep), not the mount: deep/t.txt.
    mkdirSync(join(mount, 'deep/inner'), { recursive: true })
    writeFileSync(join(mount, 'deep/t.txt'), 'deep')
    writeFileSync(join(mount, 't.txt'), 'top')
    symlinkSync('deep/inner', join(mount, 'sym'))
    symlinkSync('sym/../t.txt', join(mount, 'tricky'))
    execFileSync('mkfifo', [join(mount, 'fifo')])
    id = await container(IMAGES.debian, [{ source: mount, target: '/workspace' }])
    io = new addon.DockerFileIO({ engine, container: id })
  })

  it('links inside the mount resolve on the fast path', async () => {
    expect(await io.readFile('/workspace/inside')).toBe('real')
  })

  it('absolute and .. links resolve as the container resolves them, never to host files', async () => {
    const hostname = (await runtime.exec(id, { command: ['cat', '/etc/hostname'] })).stdout
    expect(await io.readFile('/workspace/abs-container')).toBe(hostname)
    for (const link of ['abs-escape', 'dotdot-escape']) {
      const err = await rejection(io.readFile(`/workspace/${link}`))
      expect(err.code).toBe('ENOENT') // that path does not exist inside the container
    }
    expect(await io.fileExists('/workspace/dir-escape/secret')).toBe(false)
    expect(await io.stat('/workspace/abs-escape')).toBeUndefined()
    expect((await rejection(io.readdir('/workspace/dir-escape'))).code).toBe('ENOENT')
  })

  it('a write through an escaping link never touches the host file', async () => {
    await io.mkdir('/tmp/escape-target').catch(() => {})
    await rejection(io.writeFile('/workspace/dir-escape/secret', 'overwritten')).catch(() => {})
    expect(readFileSync(join(outside.path, 'secret'), 'utf8')).toBe('HOST SECRET')
    expect(readdirSync(outside.path)).toEqual(['secret'])
  })

  it('a link loop is ELOOP', async () => {
    expect((await rejection(io.readFile('/workspace/loop'))).code).toBe('ELOOP')
  })

  it('`..` after a symlink in a link target is applied where the link led, as the kernel does', async () => {
    const cat = (await runtime.exec(id, { command: ['cat', '/workspace/tricky'] })).stdout
    expect(cat).toBe('deep')
    expect(await io.readFile('/workspace/tricky')).toBe(cat)
  })

  it('a FIFO in the mount never blocks a read', async () => {
    const err = await rejection(io.readFile('/workspace/fifo'))
    expect(err.message).toContain('/workspace/fifo')
    expect(await io.fileExists('/workspace/fifo')).toBe(true)
  })

  it('in the container fs: loops are ELOOP, dangling links are written through, never replaced', async () => {
    const sh = (script: string) => runtime.exec(id, { command: ['sh', '-c', script] })
    await sh('mkdir -p /tmp/l && cd /tmp/l && ln -s loop loop && ln -s /nonexistent/x nowhere && ln -s made target && ln -s /tmp/l ring')
    expect((await rejection(io.readFile('/tmp/l/loop'))).code).toBe('ELOOP')
    expect((await rejection(io.readFile('/tmp/l/loop/x'))).code).toBe('ELOOP')
    expect((await rejection(io.stat('/tmp/l/loop'))).code).toBe('ELOOP')
    expect(await io.readdir('/tmp/l/ring')).toEqual(['loop', 'nowhere', 'ring', 'target'])
    // Podman's archive HEAD answers a dangling link with a bare 404, like a missing path.
    if (PODMAN) return
    const err = await rejection(io.writeFile('/tmp/l/nowhere', 'x'))
    expect(err.code).toBe('ENOENT')
    expect(err.message).not.toContain('/var/lib/docker')
    await io.writeFile('/tmp/l/target', 'through the link')
    expect((await sh('cd /tmp/l && readlink nowhere target && cat made')).stdout).toBe('/nonexistent/x\nmade\nthrough the link')
  })
})

describe('DockerFileIO mtimes', () => {
  it('keep sub-millisecond precision, and writes through the engine get a nanosecond mtime', async () => {
    const id = await container(IMAGES.debian)
    // The engine path (the agent writes two files within one tick of the kernel's clock).
    const io = new addon.DockerFileIO({ engine, container: id, hostAccess: false, agent: false })
    await io.writeFile('/tmp/m1', 'one')
    await io.writeFile('/tmp/m2', 'two')
    await io.writeFile('/workspace/m3', 'three')
    const out = await inContainer(id, 'stat -c %.9Y /tmp/m1 /tmp/m2 /workspace/m3')
    const [m1, m2, m3] = out.trim().split('\n').map((t) => {
      const [sec, ns] = t.split('.')
      return Number(sec) * 1000 + Number(ns) / 1e6
    })
    expect(Number.isInteger(m1) && Number.isInteger(m2)).toBe(false)
    expect(m2).toBeGreaterThan(m1)
    for (const [path, expected] of [['/tmp/m1', m1], ['/tmp/m2', m2], ['/workspace/m3', m3]] as const) {
      expect(Math.abs((await io.stat(path))!.mtimeMs - expected), path).toBeLessThan(0.001)
    }
    if (!isRemote) expect((await io.stat('/workspace/m3'))!.mtimeMs).toBe(statSync(join(host.path, 'm3')).mtimeMs)
  })
})

describe('DockerFileIO large files', () => {
  it('reads and writes a 100 MB file byte-exact, in the container fs and under a mount', async () => {
    const id = await container(IMAGES.debian)
    const io = new addon.DockerFileIO({ engine, container: id })
    const big = Buffer.alloc(100 * 1024 * 1024)
    for (let i = 0; i < big.length; i += 4096) big[i] = i % 251
    for (const path of ['/tmp/big.bin', '/workspace/big.bin']) {
      await io.writeFile(path, big)
      expect((await io.stat(path))?.size).toBe(big.length)
      const back = await io.readBinaryFile(path)
      expect(back.length).toBe(big.length)
      expect(Buffer.compare(back, big)).toBe(0)
    }
  })
})

describe('DockerFileIO errors of the container itself', () => {
  it('unknown container → CONTAINER_NOT_FOUND; malformed options → INVALID_ARGUMENT', async () => {
    const io = new addon.DockerFileIO({ engine, container: 'no-such-container-z' })
    const err = await rejection(io.readFile('/etc/passwd'))
    expect(err.code).toBe('CONTAINER_NOT_FOUND')
    expect(err.message).toContain('no-such-container-z')
    expect(() => new addon.DockerFileIO({ engine, container: 'x', cwd: 'relative' })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    )
  })

  it('CONTAINER_NOT_FOUND at once after the container is removed, on every path, running or stopped', async () => {
    for (const [access, paths] of ACCESS) {
      for (const running of [true, false]) {
        const id = await runtime.create({ image: IMAGES.debian, workingDirectory: '/', mounts: [] })
        if (running) await runtime.start(id)
        const io = new addon.DockerFileIO({ engine, container: id, ...paths })
        expect(await io.fileExists('/etc/passwd')).toBe(true)
        await runtime.remove(id)
        const what = `${access}, ${running ? 'running' : 'stopped'}`
        for (const op of [
          () => io.readFile('/etc/passwd'),
          () => io.stat('/etc/passwd'),
          () => io.stat('/missing'),
          () => io.fileExists('/missing'),
          () => io.readdir('/etc'),
          () => io.writeFile('/tmp/x', 'x'),
        ]) {
          expect((await rejection(op())).code, what).toBe('CONTAINER_NOT_FOUND')
        }
      }
    }
  })

  // A bind mount of a folder of this machine: a remote engine has no such path.
  it.skipIf(isRemote)('a read-only mount rejects writes with EACCES', async () => {
    const ro = tempDir('fileio-ro')
    const id = await runtime.create({
      image: IMAGES.debian,
      workingDirectory: '/',
      mounts: [{ source: ro.path, target: '/ro', readonly: true }],
    })
    await runtime.start(id)
    const io = new addon.DockerFileIO({ engine, container: id })
    expect((await rejection(io.writeFile('/ro/x', 'x'))).code).toBe('EACCES')
    expect(readdirSync(ro.path)).toEqual([])
    ro.cleanup()
  })
})

describe('DockerFileIO and the container\'s other mounts', () => {
  // These three bind-mount files and folders made on this machine: a remote engine has no such paths.
  it.skipIf(isRemote)('a volume under a bind mount is answered by the container, not the host folder beneath it', async () => {
    const dir = tempDir('fileio-layers')
    writeFileSync(join(dir.path, 'plain.txt'), 'host')
    mkdirSync(join(dir.path, 'vol'))
    writeFileSync(join(dir.path, 'vol', 'hidden.txt'), 'shadowed by the volume')
    const id = docker('run', '-d', '--init', '-v', `${dir.path}:/workspace`, '-v', '/workspace/vol',
      IMAGES.debian, 'sleep', 'infinity')
    byCli.push(id)
    const io = new addon.DockerFileIO({ engine, container: id })
    expect(await io.readFile('/workspace/plain.txt')).toBe('host')
    expect(await io.readdir('/workspace/vol')).toEqual([])
    expect(await io.fileExists('/workspace/vol/hidden.txt')).toBe(false)
    await io.writeFile('/workspace/vol/v.txt', 'in the volume')
    await io.mkdir('/workspace/vol/d')
    const seen = await runtime.exec(id, { command: ['ls', '-A', '/workspace/vol'] })
    expect(seen.stdout.split('\n').filter(Boolean)).toEqual(['d', 'v.txt'])
    expect(readdirSync(join(dir.path, 'vol'))).toEqual(['hidden.txt'])
    dir.cleanup()
  })

  it.skipIf(isRemote)('a single-file bind mount reads as the container sees it', async () => {
    const dir = tempDir('fileio-filemount')
    writeFileSync(join(dir.path, 'app.conf'), 'setting=1\n')
    const id = await runtime.create({
      image: IMAGES.debian,
      workingDirectory: '/',
      mounts: [{ source: join(dir.path, 'app.conf'), target: '/etc/app.conf' }],
    })
    await runtime.start(id)
    const io = new addon.DockerFileIO({ engine, container: id })
    expect(await io.readFile('/etc/app.conf')).toBe('setting=1\n')
    expect((await io.stat('/etc/app.conf'))?.size).toBe(10)
    expect((await rejection(io.readFile('/etc/app.conf/x'))).code).toBe('ENOTDIR')
    dir.cleanup()
  })

  it.skipIf(isRemote)('a container recreated under the same name is seen with its new mounts at once', async () => {
    const [a, b] = [tempDir('fileio-recreate-a'), tempDir('fileio-recreate-b')]
    writeFileSync(join(a.path, 'which.txt'), 'a')
    writeFileSync(join(b.path, 'which.txt'), 'b')
    const name = `ci-fileio-recreate-${process.pid}`
    const make = async (source: string) => {
      const id = await runtime.create({ name, image: IMAGES.debian, workingDirectory: '/', mounts: [{ source, target: '/workspace' }] })
      await runtime.start(id)
    }
    await make(a.path)
    const io = new addon.DockerFileIO({ engine, container: name })
    expect(await io.readFile('/workspace/which.txt')).toBe('a')
    await runtime.remove(name)
    await make(b.path)
    expect(await io.readFile('/workspace/which.txt')).toBe('b')
    await io.writeFile('/workspace/new.txt', 'to b')
    expect(readdirSync(a.path)).toEqual(['which.txt'])
    expect(readFileSync(join(b.path, 'new.txt'), 'utf8')).toBe('to b')
    a.cleanup()
    b.cleanup()
  })

  it('a stopped container is served by the engine alone, mounts included', async () => {
    const id = await container(IMAGES.debian)
    const io = new addon.DockerFileIO({ engine, container: id })
    await io.mkdir('/workspace/stopped/sub')
    await io.writeFile('/workspace/stopped/f.txt', 'before')
    await io.writeFile('/tmp/f.txt', 'tmp')
    await runtime.stop(id, 1000)
    const later = new addon.DockerFileIO({ engine, container: id, user: 'agent' })
    expect(await later.readFile('/workspace/stopped/f.txt')).toBe('before')
    expect(await later.readdir('/workspace/stopped')).toEqual(['f.txt', 'sub'])
    expect(await later.readdir('/tmp')).toContain('f.txt')
    await later.writeFile('/workspace/stopped/g.txt', 'while stopped')
    if (isRemote) {
      expect(await later.readFile('/workspace/stopped/g.txt')).toBe('while stopped')
      return
    }
    expect(readFileSync(join(host.path, 'stopped', 'g.txt'), 'utf8')).toBe('while stopped')
    expect(statSync(join(host.path, 'stopped', 'g.txt')).uid).toBe(1000)
  })
})

describe('createDockerEnvironment', () => {
  it('returns FileIO and Shell bound to the container, its cwd and the user home', async () => {
    const id = await container(IMAGES.debian)
    const env = await addon.createDockerEnvironment({ engine, container: id, threadId: 'env-thread' })
    expect(env.cwd).toBe('/workspace')
    expect(env.homeDir).toBe('/root')
    expect([...env.availableCapabilities]).toEqual(['file-io', 'shell', 'threads'])
    expect(env.environmentConfig).toEqual({ type: 'docker', container: id, cwd: '/workspace' })
    await env.fileIO.writeFile('env.txt', 'from fileIO\n')
    const r = await env.shell.execute('cat env.txt; pwd', { toolRequestId: 'env-1' })
    expect(r.output.map((l) => l.text)).toEqual(['from fileIO', '/workspace'])
    const custom = await addon.createDockerEnvironment({ engine, container: id, threadId: 't', cwd: '/tmp' })
    expect(custom.cwd).toBe('/tmp')
  })
})
