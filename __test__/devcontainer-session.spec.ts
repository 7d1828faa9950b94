// Sessions from devcontainer.json files: volumes and tmpfs as docker reads mount strings;
// `runArgs --platform`, `--hostname` and `--workdir` reach the container (compose configs:
// compose.spec.ts). Docker only (platform matching is the engine's).
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { addon, engine, engineCli, gitProject, IMAGES, rejection, tempDir } from './helpers'

const base = tempDir('dcs-base')
const dirs: Array<{ cleanup: () => void }> = [base]
const images: string[] = []
const workspaces = new addon.Workspaces({ baseDir: base.path, engine, image: IMAGES.debian })
afterAll(async () => {
  for (const ws of await workspaces.list()) await workspaces.destroy(ws.sessionId).catch(() => {})
  dirs.forEach((d) => d.cleanup())
  for (const image of images) engineCli('rmi', image)
})

function project(files: Record<string, string> = {}): string {
  const d = gitProject('dcs-project', files)
  dirs.push(d)
  return d.path
}

let n = 0
const session = () => `dcs${process.pid}x${++n}`
const containersOf = (id: string) => engineCli('ps', '-aq', '--filter', `label=dev.container-isolation.session=${id}`)

describe('Workspaces and what devcontainer.json asks of the container', () => {
  it('mounts volumes as docker reads mount strings: a named volume outlives the container, anonymous volumes and tmpfs too', async () => {
    const volume = `ci-vol-${process.pid}-${n}`
    const proj = project({
      '.devcontainer.json': JSON.stringify({
        image: IMAGES.debian,
        mounts: [
          `source=${volume},target=/data`, // no type: a volume, as docker reads it
          { target: '/anon', type: 'volume' }, // no source: an anonymous volume
          'type=tmpfs,target=/scratch,tmpfs-size=1048576',
          `type=volume,source=${volume},target=/again,readonly=0`,
        ],
      }),
    })
    const id = session()
    try {
      const info = await workspaces.create({ projectDir: proj, sessionId: id })
      const run = async (script: string) => {
        const env = await workspaces.environment(id, 't')
        const r = await env.shell.execute(script, { toolRequestId: 'v' })
        return r.output.map((l) => l.text).join('\n')
      }
      expect(await run('echo kept > /data/x && echo anon > /anon/y && echo t > /scratch/z && cat /again/x && stat -f -c %T /scratch')).toBe('kept\ntmpfs')
      engineCli('rm', '-f', '-v', info.containerId)
      expect((await workspaces.get(id))?.state).toBe('missing')
      await workspaces.create({ projectDir: proj, sessionId: id })
      expect(await run('cat /data/x; find /anon /scratch -type f | wc -l')).toBe('kept\n0')
    } finally {
      await workspaces.destroy(id).catch(() => {})
      engineCli('volume', 'rm', '-f', volume)
    }
  })

  it('applies runArgs --hostname and --workdir to the container; what it does not honour is in warnings', async () => {
    const proj = project({
      '.devcontainer.json': `{ "image": "${IMAGES.debian}", "runArgs": ["--hostname", "box-1", "--workdir=/tmp"], "hostRequirements": { "cpus": 1 } }`,
    })
    const id = session()
    const info = await workspaces.create({ projectDir: proj, sessionId: id })
    // hostRequirements that fit (1 CPU) give no warning.
    expect(info.warnings).toEqual([])
    const container = containersOf(id)
    expect(engineCli('inspect', '--format', '{{.Config.Hostname}} {{.Config.WorkingDir}}', container)).toBe('box-1 /tmp')
    const env = await workspaces.environment(id, 't')
    const r = await env.shell.execute('uname -n; readlink /proc/1/cwd', { toolRequestId: 'h' })
    expect(r.output.map((l) => l.text)).toEqual(['box-1', '/tmp'])
  })

  // The devcontainer spec's own example, on an image that sets PATH and on one whose
  // Config.Env has none (an imported file system; the engine then gives its processes a
  // default PATH).
  const withoutPath = () => {
    const tag = `ci-dcs-nopath:${process.pid}`
    const tar = join(base.path, 'rootfs.tar')
    const from = engineCli('create', IMAGES.debian)
    engineCli('export', '-o', tar, from)
    engineCli('rm', from)
    engineCli('import', tar, tag)
    images.push(tag)
    expect(engineCli('image', 'inspect', '-f', '{{json .Config.Env}}', tag)).toBe('null')
    return tag
  }
  for (const [kind, image] of [
    ['an image that sets PATH', () => IMAGES.debian],
    ['an image that sets no PATH', withoutPath],
  ] as const) {
    it(`resolves \${containerEnv:PATH} in remoteEnv before postCreateCommand runs, on ${kind}`, async () => {
      const proj = project({
        '.devcontainer/devcontainer.json': JSON.stringify({
          image: image(),
          remoteEnv: { PATH: '${containerEnv:PATH}:/opt/tool/bin' },
          postCreateCommand: 'git --version',
        }),
      })
      const id = session()
      await workspaces.create({ projectDir: proj, sessionId: id })
      const env = await workspaces.environment(id, 't')
      const r = await env.shell.execute('echo "$PATH"; git --version', { toolRequestId: 'p' })
      const [path, version] = r.output.map((l) => l.text)
      expect(path.split(':')).toContain('/usr/bin')
      expect(path.endsWith(':/opt/tool/bin')).toBe(true)
      expect(version).toMatch(/^git version /)
    }, 180_000)
  }

  it('creates from the image for runArgs --platform; another platform is refused, nothing left behind', async () => {
    const own = process.arch === 'arm64' ? 'linux/arm64' : 'linux/amd64'
    const other = process.arch === 'arm64' ? 'linux/amd64' : 'linux/arm64'
    const ok = project({ '.devcontainer.json': `{ "image": "${IMAGES.debian}", "runArgs": ["--platform", "${own}"] }` })
    const id = session()
    const info = await workspaces.create({ projectDir: ok, sessionId: id })
    expect(info.state).toBe('running')
    expect(engineCli('inspect', '--format', '{{.Platform}}', containersOf(id))).toBe('linux')

    const wrong = project({ '.devcontainer.json': `{ "image": "${IMAGES.debian}", "runArgs": ["--platform=${other}"] }` })
    const refused = session()
    // Without pulls: the test images are in no registry, and what a pull for the other
    // platform rejects with is the registry's answer (pull.spec.ts: an index without it).
    const err = await rejection(workspaces.create({ projectDir: wrong, sessionId: refused, pull: 'never' }))
    expect(err.code).toBe('IMAGE_NOT_FOUND')
    expect(err.message).toContain(`for platform '${other}'`)
    expect(containersOf(refused)).toBe('')
    expect(existsSync(join(base.path, 'sessions', `session-${refused}`))).toBe(true)
  })

  it('builds for runArgs --platform', async () => {
    const own = process.arch === 'arm64' ? 'linux/arm64' : 'linux/amd64'
    const proj = project({
      '.devcontainer/devcontainer.json': `{ "build": { "dockerfile": "Dockerfile" }, "runArgs": ["--platform=${own}"] }`,
      '.devcontainer/Dockerfile': `FROM ${IMAGES.debian}\nRUN uname -m > /built-for\n`,
    })
    const id = session()
    const info = await workspaces.create({ projectDir: proj, sessionId: id })
    try {
      expect(engineCli('image', 'inspect', '--format', '{{.Os}}/{{.Architecture}}', info.image)).toBe(own)
      const env = await workspaces.environment(id, 't')
      expect((await env.fileIO.readFile('/built-for')).trim()).toBe(process.arch === 'arm64' ? 'aarch64' : 'x86_64')
    } finally {
      await workspaces.destroy(id)
      engineCli('rmi', info.image)
    }
  })
})
