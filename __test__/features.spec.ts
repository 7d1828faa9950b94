// devcontainer Features on the real engine: local folders and OCI artifacts from a local
// registry installed in a derived image, in order, cached, labelled; escapes, wrong
// digests and oversized blobs refused.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addon, engine, engineCli, gitProject, IMAGES, isPodman, rejection, tempDir } from './helpers'
import { featureTar, type Registry, startRegistry } from './registry'

const base = tempDir('features-base')
const dirs: Array<{ cleanup: () => void }> = [base]
const workspaces = new addon.Workspaces({ baseDir: base.path, engine, image: IMAGES.debian })
const images = new Set<string>()
let registry: Registry

beforeAll(async () => {
  registry = await startRegistry()
})

afterAll(async () => {
  for (const ws of await workspaces.list()) await workspaces.destroy(ws.sessionId).catch(() => {})
  for (const image of images) {
    try {
      engineCli('rmi', '-f', image)
    } catch {
      // already gone
    }
  }
  await registry?.stop()
  dirs.forEach((d) => d.cleanup())
})

function project(files: Record<string, string> = {}): string {
  const d = gitProject('features-project', files)
  dirs.push(d)
  return d.path
}

let n = 0
const session = () => `feat${process.pid}x${++n}`

/** The image a session's container runs, remembered for removal. */
function containerImage(sessionId: string): { id: string; labels: Record<string, string> } {
  const id = engineCli('ps', '-aq', '--no-trunc', '--filter', `label=dev.container-isolation.session=${sessionId}`)
  const image = engineCli('inspect', '-f', '{{.Image}}', id)
  images.add(image)
  const labels = JSON.parse(engineCli('image', 'inspect', '-f', '{{json .Config.Labels}}', image)) ?? {}
  return { id: image, labels }
}

async function run(sessionId: string, command: string): Promise<string[]> {
  const env = await workspaces.environment(sessionId, 't')
  const r = await env.shell.execute(command, { toolRequestId: `t${++n}` })
  expect(r.exitCode, r.output.map((l) => l.text).join('\n')).toBe(0)
  return r.output.map((l) => l.text)
}

const HELLO = {
  '.devcontainer/features/hello/devcontainer-feature.json': JSON.stringify({
    id: 'hello',
    version: '1.0.0',
    options: { greeting: { type: 'string', default: 'hi' }, loud: { type: 'boolean', default: false } },
    containerEnv: { HELLO_HOME: '/opt/hello', PATH: '/opt/hello/bin:${PATH}', SPACED: 'two  words $HELLO_HOME' },
    postCreateCommand: 'hello > /tmp/feature-post-create',
  }),
  '.devcontainer/features/hello/install.sh': `#!/bin/sh
set -e
mkdir -p /opt/hello/bin
printf '#!/bin/sh\\necho "%s from hello"\\n' "$GREETING" > /opt/hello/bin/hello
chmod +x /opt/hello/bin/hello
echo "$LOUD $_REMOTE_USER $_REMOTE_USER_HOME $_CONTAINER_USER $_CONTAINER_USER_HOME $(id -u)" > /opt/hello/install-env
`,
  // Uses hello's file: it must be installed after it.
  '.devcontainer/features/world/devcontainer-feature.json': JSON.stringify({ id: 'world', installsAfter: ['hello'] }),
  '.devcontainer/features/world/install.sh': '#!/bin/sh\nset -e\n/opt/hello/bin/hello > /opt/world.txt\n',
  // This run's own features image: one left by a killed earlier run would be taken from the
  // cache and build nothing.
  '.devcontainer/features/hello/run': `${process.pid} ${Date.now()}\n`,
}

// What the host decides alone (order, paths, references, fetched bytes and credentials) runs on
// the dockerd pass only; the Podman pass keeps what the engine builds and runs.
const hostSide = it.skipIf(isPodman)

describe('local features', () => {
  it('are installed in order with their options, run in postCreateCommand, and the image is cached and labelled', async () => {
    const files = {
      ...HELLO,
      '.devcontainer/devcontainer.json': JSON.stringify({
        image: IMAGES.debian,
        remoteUser: 'agent',
        features: { './features/world': {}, './features/hello': { greeting: 'bonjour', loud: true } },
        postCreateCommand: 'hello > /tmp/post-create',
      }),
    }
    const proj = project(files)
    const config = await addon.readDevcontainerConfig(proj)
    expect(config?.features.map((f) => [f.reference, f.kind, f.options])).toEqual([
      ['./features/hello', 'local', { greeting: 'bonjour', loud: true }],
      ['./features/world', 'local', {}],
    ])
    expect(config?.warnings).toEqual([])
    const id = session()
    const events: Array<{ phase: string; detail: string }> = []
    await workspaces.create({ projectDir: proj, sessionId: id, onProgress: (e) => events.push(e) })
    await new Promise((resolve) => setTimeout(resolve, 100))
    // The build's lines as `features` events (throttled), one `lifecycle` event per step.
    const lines = events.filter((e) => e.phase === 'features').map((e) => e.detail)
    expect(lines[0]).toMatch(/^(Step|STEP) 1\/\d+ ?: (ARG|FROM) /)
    expect(events.filter((e) => e.phase === 'lifecycle').map((e) => e.detail)).toEqual(['postCreateCommand'])
    expect(
      await run(id, 'cat /tmp/post-create /opt/world.txt /opt/hello/install-env; echo "$HELLO_HOME|$SPACED"'),
    ).toEqual(['bonjour from hello', 'bonjour from hello', 'true agent /home/agent root /root 0', '/opt/hello|two  words /opt/hello'])
    expect(await run(id, 'id -un')).toEqual(['agent'])
    const first = containerImage(id)
    expect(engineCli('image', 'inspect', '-f', '{{.RepoTags}}', first.id)).toMatch(
      /container-isolation-features-[0-9a-f]{32}:latest/,
    )
    expect(first.labels).toMatchObject({
      'dev.container-isolation.managed': 'true',
      'dev.container-isolation.base-dir': base.path,
      'dev.container-isolation.image-kind': 'features',
    })
    const metadata = JSON.parse(first.labels['devcontainer.metadata'])
    expect(metadata).toEqual([
      {
        id: './features/hello',
        postCreateCommand: 'hello > /tmp/feature-post-create',
      },
      { id: './features/world' },
    ])
    const created = engineCli('image', 'inspect', '-f', '{{.Created}}', first.id)

    const again = session()
    const started = Date.now()
    await workspaces.create({ projectDir: proj, sessionId: again })
    const second = containerImage(again)
    expect(second.id).toBe(first.id)
    expect(engineCli('image', 'inspect', '-f', '{{.Created}}', second.id)).toBe(created)
    console.log(`second session with cached features image: ${Date.now() - started} ms`)
  })

  hostSide('overrideFeatureInstallOrder and installsAfter cannot break order: world still sees hello', async () => {
    const proj = project({
      ...HELLO,
      '.devcontainer/devcontainer.json': JSON.stringify({
        image: IMAGES.debian,
        features: { './features/hello': 'ignored-version', './features/world': true },
        overrideFeatureInstallOrder: ['./features/hello'],
      }),
    })
    const id = session()
    await workspaces.create({ projectDir: proj, sessionId: id })
    expect(await run(id, 'cat /opt/world.txt; cat /opt/hello/install-env')).toEqual([
      'hi from hello',
      'false root /root root /root 0',
    ])
    containerImage(id)
  })

  hostSide('a local feature outside the project, or reached through a symlink, is refused with DEVCONTAINER', async () => {
    const outside = project(HELLO)
    const escape = project({
      '.devcontainer/devcontainer.json': JSON.stringify({ image: IMAGES.debian, features: { '../../x': {} } }),
    })
    const err = await rejection(workspaces.create({ projectDir: escape, sessionId: session() }))
    expect(err.code).toBe('DEVCONTAINER')
    expect(err.message).toContain('outside the project')

    const linked = project({
      '.devcontainer/devcontainer.json': JSON.stringify({ image: IMAGES.debian, features: { './features/link': {} } }),
    })
    mkdirSync(join(linked, '.devcontainer/features'), { recursive: true })
    symlinkSync(join(outside, '.devcontainer/features/hello'), join(linked, '.devcontainer/features/link'))
    const err2 = await rejection(workspaces.create({ projectDir: linked, sessionId: session() }))
    expect(err2.code).toBe('DEVCONTAINER')
    expect(err2.message).toContain('is a symlink')
  })

  it('on an image built from the project, the label keeps the base image\'s metadata entries first', async () => {
    const proj = project({
      ...HELLO,
      '.devcontainer/devcontainer.json': JSON.stringify({
        build: { dockerfile: 'Dockerfile' },
        features: { './features/hello': { greeting: 'built' } },
      }),
      '.devcontainer/Dockerfile': `FROM ${IMAGES.debian}\nLABEL devcontainer.metadata='[{"remoteEnv":{"FROM_BASE":"1"}}]'\nUSER agent\n`,
    })
    const id = session()
    const info = await workspaces.create({ projectDir: proj, sessionId: id })
    images.add(info.image)
    const image = containerImage(id)
    expect(JSON.parse(image.labels['devcontainer.metadata'])).toEqual([
      { remoteEnv: { FROM_BASE: '1' } },
      expect.objectContaining({ id: './features/hello' }),
    ])
    // The base image's user is restored after the install ran as root.
    expect(engineCli('image', 'inspect', '-f', '{{.Config.User}}', image.id)).toBe('agent')
    expect(await run(id, 'hello; id -un')).toEqual(['built from hello', 'agent'])
  })

  it('a failing install.sh rejects DEVCONTAINER with its output and leaves no container or image behind', async () => {
    // The build's own step images carry this mark from its first step of the feature on;
    // other suites build images on the same engine meanwhile.
    const mark = `${process.pid}-${Date.now()}`
    const marked = () => {
      const ids = [...new Set(engineCli('images', '-aq', '--no-trunc').split('\n').filter(Boolean))]
      return inspectedEnvs(ids)
        .split('\n')
        .filter((line) => line.includes(`BROKEN_MARK=${mark}`))
    }
    const proj = project({
      '.devcontainer/features/broken/devcontainer-feature.json': JSON.stringify({
        id: 'broken',
        containerEnv: { BROKEN_MARK: mark },
      }),
      '.devcontainer/features/broken/install.sh': '#!/bin/sh\necho "broken feature $(id -u)" >&2\nexit 7\n',
      '.devcontainer/devcontainer.json': JSON.stringify({
        image: IMAGES.debian,
        features: { './features/broken': {} },
        containerEnv: { X: '1' },
      }),
    })
    const id = session()
    const err = await rejection(workspaces.create({ projectDir: proj, sessionId: id }))
    expect(err.code, err.message).toBe('DEVCONTAINER')
    expect(err.message).toContain('broken feature 0')
    expect(engineCli('ps', '-aq', '--filter', `label=dev.container-isolation.session=${id}`)).toBe('')
    expect(marked()).toEqual([])
  })

  it("runs a feature's entrypoint at every start of the container, before it idles", async () => {
    const proj = project({
      '.devcontainer/features/daemon/devcontainer-feature.json': JSON.stringify({
        id: 'daemon',
        entrypoint: '/usr/local/share/daemon-init.sh',
      }),
      // The entrypoint counts its runs and leaves a process in the background, as a
      // daemon-starting entrypoint does.
      '.devcontainer/features/daemon/install.sh': `#!/bin/sh
set -e
printf '#!/bin/sh\\necho run >> /tmp/entrypoint-runs\\nsleep 1000 &\\n' > /usr/local/share/daemon-init.sh
chmod +x /usr/local/share/daemon-init.sh
`,
      '.devcontainer/devcontainer.json': JSON.stringify({ image: IMAGES.debian, features: { './features/daemon': {} } }),
    })
    const id = session()
    const info = await workspaces.create({ projectDir: proj, sessionId: id })
    expect(info.warnings).toEqual([])
    const runs = async (count: number) => {
      const deadline = Date.now() + 5000
      let out: string[] = []
      while (Date.now() < deadline) {
        out = await run(id, 'cat /tmp/entrypoint-runs 2>/dev/null || true')
        if (out.length >= count) break
        await new Promise((r) => setTimeout(r, 100))
      }
      return out
    }
    expect(await runs(1)).toEqual(['run'])
    expect(await run(id, 'pgrep -c -x sleep || true')).not.toEqual(['0'])
    await workspaces.stop(id)
    await workspaces.create({ projectDir: proj, sessionId: id })
    expect(await runs(2)).toEqual(['run', 'run'])
  })

  hostSide('deprecated references are read with a warning, as the reference reads them, and a session refuses them', async () => {
    const proj = project({ '.devcontainer.json': JSON.stringify({ image: IMAGES.debian, features: { node: {} } }) })
    const config = (await addon.readDevcontainerConfig(proj))!
    expect(config.features).toEqual([{ reference: 'node', kind: 'unsupported', options: {} }])
    expect(config.warnings).toEqual([expect.stringContaining("'node': a bare feature id is a deprecated form")])
    const id = session()
    const err = await rejection(workspaces.create({ projectDir: proj, sessionId: id }))
    expect(err.code).toBe('DEVCONTAINER')
    expect(err.message).toContain('deprecated')
    expect(await workspaces.get(id)).toBeUndefined()
  })
})

describe('OCI features from a local registry', () => {
  const trusted = () => ({ featureRegistries: [registry.host] })
  const common = () =>
    featureTar({
      'devcontainer-feature.json': JSON.stringify({
        id: 'common',
        options: { prefix: { type: 'string', default: '>>' } },
      }),
      'install.sh': '#!/bin/sh\nset -e\nmkdir -p /opt/common\necho "$PREFIX" > /opt/common/prefix\n',
    })

  it('is fetched with what it depends on, installed first, and its tool runs in postCreateCommand', async () => {
    const ns = `t${process.pid}x${++n}`
    await registry.publish(`${ns}/common`, '1', common())
    await registry.publish(
      `${ns}/greet`,
      'latest',
      featureTar({
        'devcontainer-feature.json': JSON.stringify({
          id: 'greet',
          dependsOn: { [`${registry.host}/${ns}/common:1`]: { prefix: '##' } },
          options: { name: { type: 'string', default: 'world' } },
        }),
        'install.sh': `#!/bin/sh
set -e
printf '#!/bin/sh\\necho "%s hello %s"\\n' "$(cat /opt/common/prefix)" "$NAME" > /usr/local/bin/greet
chmod +x /usr/local/bin/greet
`,
      }),
    )
    const proj = project({
      ...HELLO,
      '.devcontainer/devcontainer.json': JSON.stringify({
        image: IMAGES.debian,
        features: { [`${registry.host}/${ns}/greet`]: { name: 'oci' }, './features/hello': {} },
        postCreateCommand: 'greet > /tmp/post-create; hello >> /tmp/post-create',
      }),
    })
    const untrusted = await rejection(workspaces.create({ projectDir: proj, sessionId: session() }))
    expect(untrusted.code).toBe('DEVCONTAINER')
    expect(untrusted.message).toContain(`allow with trust.featureRegistries: ["${registry.host}"]`)
    const id = session()
    await workspaces.create({ projectDir: proj, sessionId: id, trust: trusted() })
    expect(await run(id, 'cat /tmp/post-create')).toEqual(['## hello oci', 'hi from hello'])
    const metadata = JSON.parse(containerImage(id).labels['devcontainer.metadata'])
    expect(metadata.map((e: { id: string }) => e.id)).toEqual([
      './features/hello',
      `${registry.host}/${ns}/common:1`,
      `${registry.host}/${ns}/greet`,
    ])
  })

  hostSide('a reference pinned by digest is fetched when it matches, and dependsOn cycles are refused', async () => {
    const ns = `t${process.pid}x${++n}`
    const { manifest } = await registry.publish(`${ns}/common`, '1', common())
    const proj = project({
      '.devcontainer.json': JSON.stringify({
        image: IMAGES.debian,
        features: { [`${registry.host}/${ns}/common@${manifest}`]: { prefix: 'pinned' } },
      }),
    })
    const id = session()
    await workspaces.create({ projectDir: proj, sessionId: id, trust: trusted() })
    expect(await run(id, 'cat /opt/common/prefix')).toEqual(['pinned'])
    containerImage(id)

    const cyclic = (other: string) =>
      featureTar({
        'devcontainer-feature.json': JSON.stringify({ id: 'x', dependsOn: { [`${registry.host}/${ns}/${other}:1`]: {} } }),
        'install.sh': '#!/bin/sh\n',
      })
    await registry.publish(`${ns}/a`, '1', cyclic('b'))
    await registry.publish(`${ns}/b`, '1', cyclic('a'))
    const loop = project({
      '.devcontainer.json': JSON.stringify({ image: IMAGES.debian, features: { [`${registry.host}/${ns}/a:1`]: {} } }),
    })
    const err = await rejection(workspaces.create({ projectDir: loop, sessionId: session(), trust: trusted() }))
    expect(err.code).toBe('DEVCONTAINER')
    expect(err.message).toContain('cycle')
  })

  hostSide('a blob whose content does not match its digest is refused', async () => {
    const ns = `t${process.pid}x${++n}`
    const layer = common()
    const digest = (await registry.publish(`${ns}/common`, '1', layer)).layer
    const tampered = Buffer.from(layer)
    tampered[tampered.length - 1] ^= 0xff
    tampered.write('tampered', 600)
    writeFileSync(registry.blobPath(digest), tampered)
    const proj = project({
      '.devcontainer.json': JSON.stringify({ image: IMAGES.debian, features: { [`${registry.host}/${ns}/common:1`]: {} } }),
    })
    const id = session()
    const err = await rejection(workspaces.create({ projectDir: proj, sessionId: id, trust: trusted() }))
    expect(err.code).toBe('DEVCONTAINER')
    expect(err.message).toContain(`feature ${registry.host}/${ns}/common:1: its layer`)
    expect(err.message).toMatch(/digest/i)
    expect(engineCli('ps', '-aq', '--filter', `label=dev.container-isolation.session=${id}`)).toBe('')
  })

  hostSide('a layer larger than the limit is refused, declared or served', async () => {
    const ns = `t${process.pid}x${++n}`
    const big = featureTar({
      'devcontainer-feature.json': JSON.stringify({ id: 'big' }),
      'install.sh': '#!/bin/sh\n',
      'blob.bin': Buffer.alloc((64 << 20) + 1),
    })
    await registry.publish(`${ns}/big`, '1', big)
    const proj = project({
      '.devcontainer.json': JSON.stringify({ image: IMAGES.debian, features: { [`${registry.host}/${ns}/big:1`]: {} } }),
    })
    const err = await rejection(workspaces.create({ projectDir: proj, sessionId: session(), trust: trusted() }))
    expect(err.code).toBe('DEVCONTAINER')
    expect(err.message).toContain('larger than')

    // A small declared size, a large blob served under it.
    const small = common()
    const digest = (await registry.publish(`${ns}/liar`, '1', small)).layer
    writeFileSync(registry.blobPath(digest), Buffer.concat([small, Buffer.alloc(1 << 20)]))
    const liar = project({
      '.devcontainer.json': JSON.stringify({ image: IMAGES.debian, features: { [`${registry.host}/${ns}/liar:1`]: {} } }),
    })
    const err2 = await rejection(workspaces.create({ projectDir: liar, sessionId: session(), trust: trusted() }))
    expect(err2.code).toBe('DEVCONTAINER')
    expect(err2.message).toMatch(/larger than the \d+ bytes its manifest declares/)
  })

  hostSide('a registry that asks for credentials gets the ones in $DOCKER_CONFIG: auths, or a credential helper', async () => {
    const auth = { user: 'feature-user', password: `pw-${process.pid}` }
    const secured = await startRegistry(auth)
    const dockerConfig = tempDir('docker-config')
    dirs.push(dockerConfig)
    const saved = process.env.DOCKER_CONFIG
    const savedPath = process.env.PATH
    try {
      await secured.publish('ns/common', '1', common())
      const proj = project({
        '.devcontainer.json': JSON.stringify({ image: IMAGES.debian, features: { [`${secured.host}/ns/common:1`]: {} } }),
      })
      const trust = { featureRegistries: [secured.host] }
      process.env.DOCKER_CONFIG = dockerConfig.path
      const err = await rejection(workspaces.create({ projectDir: proj, sessionId: session(), trust }))
      expect(err.code).toBe('DEVCONTAINER')
      expect(err.message).toContain('401')
      const token = Buffer.from(`${auth.user}:${auth.password}`).toString('base64')
      writeFileSync(join(dockerConfig.path, 'config.json'), JSON.stringify({ auths: { [secured.host]: { auth: token } } }))
      const id = session()
      await workspaces.create({ projectDir: proj, sessionId: id, trust })
      expect(await run(id, 'cat /opt/common/prefix')).toEqual(['>>'])
      containerImage(id)

      // The same credentials from a credential helper (`credsStore`) instead, as docker runs it.
      const bin = tempDir('credential-helper')
      dirs.push(bin)
      const helper = join(bin.path, 'docker-credential-featuretest')
      writeFileSync(
        helper,
        `#!/bin/sh\nread -r url\n[ "$url" = ${JSON.stringify(secured.host)} ] || exit 1\nprintf '{"ServerURL":"%s","Username":"%s","Secret":"%s"}' "$url" ${JSON.stringify(auth.user)} ${JSON.stringify(auth.password)}\n`,
        { mode: 0o755 },
      )
      writeFileSync(join(dockerConfig.path, 'config.json'), JSON.stringify({ credsStore: 'featuretest' }))
      process.env.PATH = `${bin.path}:${savedPath}`
      const byHelper = session()
      await workspaces.create({ projectDir: proj, sessionId: byHelper, trust })
      expect(await run(byHelper, 'cat /opt/common/prefix')).toEqual(['>>'])
    } finally {
      if (saved === undefined) delete process.env.DOCKER_CONFIG
      else process.env.DOCKER_CONFIG = saved
      process.env.PATH = savedPath
      await secured.stop()
    }
  })
})

/** `image inspect` of images that may be removed meanwhile by another file's build: what is left. */
function inspectedEnvs(ids: string[]): string {
  try {
    return engineCli('image', 'inspect', '-f', '{{.Id}} {{json .Config.Env}}', ...ids)
  } catch (err) {
    return String((err as { stdout?: string }).stdout ?? '')
  }
}
