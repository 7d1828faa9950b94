// Images that arrive by themselves: pulls from a registry of the test's own (Debian's
// docker-registry on 127.0.0.1, basic auth) with credentials from a DOCKER_CONFIG the test
// writes (auths, credsStore and credHelpers helpers written as scripts on PATH), progress
// events, the policies, refused and stalled pulls bounded, and prune of derived images.
// Failures coded by the registry's answer: pull-answers.spec.ts; an engine that stops
// answering: engine-silence.spec.ts.
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addon, engine, engineCli, eventually, gitProject, IMAGES, isPodman, rejection, tempDir } from './helpers'
import { type Registry, pushRandomImage, startRegistry } from './registry'
import { startServedRegistry, startSilentRegistry } from './served-registry'

const auth = { user: 'ci-puller', password: `pw-${process.pid}-${Math.random().toString(36).slice(2)}` }
const LAYER_BYTES = 4 << 20
const dockerConfig = tempDir('pull-docker-config')
const bin = tempDir('pull-helpers')
const base = tempDir('pull-base')
const dirs: Array<{ cleanup: () => void }> = [dockerConfig, bin, base]
const saved = { DOCKER_CONFIG: process.env.DOCKER_CONFIG, PATH: process.env.PATH }
const workspaces = new addon.Workspaces({ baseDir: base.path, engine })
const runtime = new addon.DockerRuntime({ engine, baseDir: base.path })
let registry: Registry
let image: string

beforeAll(async () => {
  registry = await startRegistry(auth)
  image = pushRandomImage(registry, auth, 'ci/busy:1', LAYER_BYTES)
  process.env.DOCKER_CONFIG = dockerConfig.path
  process.env.PATH = `${bin.path}:${saved.PATH}`
}, 120_000)

afterAll(async () => {
  for (const ws of await workspaces.list()) await workspaces.destroy(ws.sessionId).catch(() => {})
  for (const c of await runtime.list()) await runtime.remove(c.id).catch(() => {})
  dropLocal(image)
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key]
    else process.env[key] = value
  }
  await registry?.stop()
  dirs.forEach((d) => d.cleanup())
})

function project(files: Record<string, string> = {}): string {
  const d = gitProject('pull-project', files)
  dirs.push(d)
  return d.path
}

let n = 0
const session = () => `pull${process.pid}x${++n}`
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const containersOf = (id: string) => engineCli('ps', '-aq', '--filter', `label=dev.container-isolation.session=${id}`)

const CLI = isPodman ? 'podman' : 'docker'

/** Removes the image's name from the engine (a container made from it keeps its layers). */
function dropLocal(reference: string | undefined) {
  if (reference) spawnSync(CLI, ['rmi', '-f', reference], { stdio: 'ignore' })
}

/** The live (not zombie) processes of a process group, waiting up to 2 s for them to go. */
async function liveInGroup(pgid: string): Promise<string> {
  let live = ''
  for (let i = 0; i < 20; i++) {
    const ps = spawnSync('ps', ['-o', 'pid=,stat=', '-g', pgid], { encoding: 'utf8' })
    live = ps.stdout
      .split('\n')
      .filter((l) => l.trim() && !l.trim().split(/\s+/)[1]?.startsWith('Z'))
      .join('\n')
    if (!live) return ''
    await sleep(100)
  }
  return live
}

function writeConfig(config: object) {
  writeFileSync(join(dockerConfig.path, 'config.json'), JSON.stringify(config))
}

const basic = (password = auth.password) => ({
  auths: { [registry.host]: { auth: Buffer.from(`${auth.user}:${password}`).toString('base64') } },
})

/** `docker-credential-<name>` on PATH, running `body`. */
function helper(name: string, body: string) {
  const path = join(bin.path, `docker-credential-${name}`)
  writeFileSync(path, `#!/bin/sh\n${body}\n`)
  chmodSync(path, 0o755)
}

const sandbox = (extra: Record<string, unknown> = {}) => ({ image, workingDirectory: '/', mounts: [], ...extra })

type Event = { sessionId: string; phase: string; detail: string; current?: number; total?: number; at: number }

// What the host decides alone (its credential helpers, its progress callback) runs on the
// dockerd pass only; the Podman pass keeps what the engine pulls.
const hostSide = it.skipIf(isPodman)

describe('pulling images', () => {
  it('a missing image is pulled on create, its pull events summing the layers up to current === total', async () => {
    writeConfig(basic())
    dropLocal(image)
    const events: Event[] = []
    const id = session()
    const started = Date.now()
    const info = await workspaces.create({
      projectDir: project(),
      sessionId: id,
      image,
      devcontainer: false,
      onProgress: (e) => events.push({ ...e, at: Date.now() }),
    })
    const ms = Date.now() - started
    await sleep(100)
    expect(info.state).toBe('running')
    expect(engineCli('image', 'inspect', '-f', '{{.Id}}', image)).toMatch(/^(sha256:)?[0-9a-f]{64}$/)
    const pulls = events.filter((e) => e.phase === 'pull')
    expect(pulls.every((e) => e.detail === image && e.sessionId === id)).toBe(true)
    const last = pulls.at(-1)!
    expect(last.current).toBe(last.total)
    // Podman reports a layer's bytes once a second while it downloads: none for this one.
    if (!isPodman) expect(last.total).toBeGreaterThanOrEqual(LAYER_BYTES)
    const currents = pulls.map((e) => e.current!)
    expect(currents).toEqual([...currents].sort((a, b) => a - b))
    const pullMs = last.at - pulls[0].at
    // At most ~10 a second, plus the first and the last.
    expect(pulls.length).toBeLessThanOrEqual(2 + 10 * Math.ceil(pullMs / 1000))
    const steps = events.filter((e) => e.phase === 'create').map((e) => e.detail)
    expect(steps).toEqual([`creating container ${info.containerId}`, `starting container ${info.containerId}`, `container ${info.containerId} ready`])
    expect(events.findIndex((e) => e.phase === 'create')).toBeGreaterThan(events.indexOf(last))
    console.log(`[pull] create with pull: ${ms} ms, ${pulls.length} pull events over ${pullMs} ms, ${last.total} bytes; ${events.length} events in all`)

    // Present: 'missing' pulls nothing, 'always' pulls again.
    const again: Event[] = []
    const onProgress = (e: Omit<Event, 'at'>) => again.push({ ...e, at: Date.now() })
    await workspaces.create({ projectDir: project(), sessionId: session(), image, devcontainer: false, onProgress })
    await workspaces.create({ projectDir: project(), sessionId: session(), image, devcontainer: false, onProgress, pull: 'always' })
    await sleep(100)
    const pulled = again.filter((e) => e.phase === 'pull')
    expect(new Set(pulled.map((e) => e.sessionId)).size).toBe(1)
    expect(pulled.at(-1)!.current).toBe(pulled.at(-1)!.total)
  })

  it('a slow layer is reported as its bytes arrive, throttled, up to current === total', async () => {
    writeConfig({})
    const own = pushRandomImage(registry, auth, 'ci/slow:1', LAYER_BYTES)
    const slow = await startServedRegistry(registry.host, auth, 'ci/slow', '1', { bytesPerSecond: 1 << 20 })
    const reference = `${slow.host}/ci/slow:1`
    const id = session()
    try {
      const events: Event[] = []
      const started = Date.now()
      await workspaces.create({ projectDir: project(), sessionId: id, image: reference, devcontainer: false, onProgress: (e) => events.push({ ...e, at: Date.now() }) })
      const ms = Date.now() - started
      await sleep(100)
      const pulls = events.filter((e) => e.phase === 'pull')
      const last = pulls.at(-1)!
      expect(last.current).toBe(last.total)
      expect(last.total).toBeGreaterThanOrEqual(LAYER_BYTES)
      const partial = pulls.filter((e) => e.current! > 0 && e.current! < LAYER_BYTES)
      expect(partial.length).toBeGreaterThanOrEqual(2)
      const currents = pulls.map((e) => e.current!)
      expect(currents).toEqual([...currents].sort((a, b) => a - b))
      const pullMs = last.at - pulls[0].at
      expect(pulls.length).toBeLessThanOrEqual(2 + 10 * Math.ceil(pullMs / 1000))
      console.log(`[pull] slow layer (1 MiB/s): create ${ms} ms, ${pulls.length} pull events over ${pullMs} ms (${partial.length} partial), ${last.total} bytes`)
    } finally {
      await workspaces.destroy(id).catch(() => {})
      await slow.stop()
      dropLocal(reference)
      dropLocal(own)
    }
  }, 120_000)

  it("a devcontainer build's FROM image (through a global ARG) is pulled first, and its features build on it", async () => {
    writeConfig(basic())
    dropLocal(image)
    const files = {
      '.devcontainer/devcontainer.json': JSON.stringify({
        build: { dockerfile: 'Dockerfile', args: { BASE: image } },
        features: { './tool': {} },
        postCreateCommand: 'test -f /blob',
      }),
      '.devcontainer/Dockerfile': `ARG BASE=nothing:here\nFROM \${BASE} AS base\nFROM base\nLABEL test.pull=${process.pid}\n`,
      '.devcontainer/tool/devcontainer-feature.json': JSON.stringify({ id: 'tool' }),
      '.devcontainer/tool/install.sh': '#!/bin/sh\necho tool > /tool\n',
    }
    const never = await rejection(workspaces.create({ projectDir: project(files), sessionId: session(), pull: 'never' }))
    expect(never.code).toBe('IMAGE_NOT_FOUND')
    expect(never.message).toContain(image)
    const events: Event[] = []
    const id = session()
    const info = await workspaces.create({ projectDir: project(files), sessionId: id, onProgress: (e) => events.push({ ...e, at: Date.now() }) })
    await sleep(100)
    expect(info.state).toBe('running')
    const phases = [...new Set(events.map((e) => e.phase))]
    expect(phases).toEqual(['pull', 'build', 'features', 'create', 'lifecycle'])
    const pulls = events.filter((e) => e.phase === 'pull')
    expect(pulls.at(-1)).toMatchObject({ detail: image })
    expect(pulls.at(-1)!.current).toBe(pulls.at(-1)!.total)
    expect(events.filter((e) => e.phase === 'lifecycle').map((e) => e.detail)).toEqual(['postCreateCommand'])
    console.log(`[pull] build from a pulled base: ${events.length} events, phases ${phases.join(' → ')}`)
    await workspaces.destroy(id)
    const derived = await workspaces.prune()
    expect(derived.imagesRemoved.some((i) => i.startsWith('container-isolation-features-'))).toBe(true)
    expect(derived.imagesRemoved.some((i) => i.startsWith('container-isolation-devcontainer-'))).toBe(true)
  }, 180_000)

  it("pull: 'never' keeps IMAGE_NOT_FOUND; an image the registry lacks is IMAGE_NOT_FOUND with its reason; neither leaves a container or a record", async () => {
    writeConfig(basic())
    dropLocal(image)
    const id = session()
    const never = await rejection(workspaces.create({ projectDir: project(), sessionId: id, image, devcontainer: false, pull: 'never' }))
    expect(never.code).toBe('IMAGE_NOT_FOUND')
    expect(never.message).toContain(image)
    expect(containersOf(id)).toBe('')
    expect(await workspaces.get(id)).toBeUndefined()
    expect((await rejection(runtime.create(sandbox({ pull: 'never' })))).code).toBe('IMAGE_NOT_FOUND')
    const offline = new addon.DockerRuntime({ engine, baseDir: base.path, pull: 'never' })
    expect((await rejection(offline.create(sandbox()))).code).toBe('IMAGE_NOT_FOUND')

    const unknown = `${registry.host}/ci/nope:1`
    const missing = await rejection(runtime.create(sandbox({ image: unknown })))
    expect(missing.code).toBe('IMAGE_NOT_FOUND')
    expect(missing.message).toContain(unknown)
    expect(missing.message).toContain('manifest unknown')
    expect(() => new addon.Workspaces({ baseDir: base.path, engine, pull: 'sometimes' as never })).toThrow(/not 'missing'/)
    expect((await rejection(runtime.create(sandbox({ pull: 'sometimes' as never })))).code).toBe('INVALID_ARGUMENT')
  })

  it('a wrong password, or none, rejects REGISTRY_AUTH naming the registry and the image, never the secret', async () => {
    dropLocal(image)
    const secret = `wrong-${auth.password}`
    writeConfig(basic(secret))
    const wrong = await rejection(runtime.create(sandbox()))
    expect(wrong.code).toBe('REGISTRY_AUTH')
    expect(wrong.message).toContain(registry.host)
    expect(wrong.message).toContain(image)
    expect(wrong.message).not.toContain(secret)
    expect(wrong.message).not.toContain(Buffer.from(`${auth.user}:${secret}`).toString('base64'))
    writeConfig({})
    const none = await rejection(runtime.create(sandbox()))
    expect(none.code).toBe('REGISTRY_AUTH')
    expect(none.message).toContain('has none for it')
    console.log(`[pull] wrong password: ${wrong.message}`)
  })

  it("an index without the platform runArgs --platform asks for is IMAGE_NOT_FOUND, naming the platforms it holds", async () => {
    writeConfig(basic())
    const own = process.arch === 'arm64' ? 'linux/arm64' : 'linux/amd64'
    const other = process.arch === 'arm64' ? 'linux/amd64' : 'linux/arm64'
    await registry.index('ci/busy', '1', 'own-only', own)
    const reference = `${registry.host}/ci/busy:own-only`
    const id = session()
    try {
      const files = { '.devcontainer.json': JSON.stringify({ image: reference, runArgs: [`--platform=${other}`] }) }
      const err = await rejection(workspaces.create({ projectDir: project(files), sessionId: id }))
      expect(err.code, err.message).toBe('IMAGE_NOT_FOUND')
      expect(err.message).toContain(`image '${reference}' for platform '${other}'`)
      expect(err.message).toContain(`its index holds no image for ${other}, only for ${own}`)
      expect(containersOf(id)).toBe('')
      console.log(`[pull] index without the platform: ${err.message}`)
    } finally {
      dropLocal(reference)
    }
  })

  it('credentials come from a credsStore helper, or the registry’s credHelpers entry over it', async () => {
    const seen = join(bin.path, 'seen-url')
    helper(
      'citest',
      `[ "$1" = get ] || exit 3\nread -r url\nprintf '%s' "$url" > ${JSON.stringify(seen)}\nprintf '{"ServerURL":"%s","Username":"%s","Secret":"%s"}' "$url" ${JSON.stringify(auth.user)} ${JSON.stringify(auth.password)}`,
    )
    writeConfig({ credsStore: 'citest' })
    dropLocal(image)
    await runtime.create(sandbox())
    expect(readFileSync(seen, 'utf8')).toBe(registry.host)
    for (const c of await runtime.list()) await runtime.remove(c.id)
    dropLocal(image)
    writeConfig({ credsStore: 'not-installed', credHelpers: { [registry.host]: 'citest' } })
    await runtime.create(sandbox())
  })

  hostSide('a helper that hangs is killed and rejects TIMEOUT after 10 s; one that prints garbage rejects REGISTRY_AUTH', async () => {
    dropLocal(image)
    const pidFile = join(bin.path, 'hang.pid')
    helper('cihang', `echo $$ > ${JSON.stringify(pidFile)}\nsleep 120 &\nsleep 120`)
    writeConfig({ credHelpers: { [registry.host]: 'cihang' } })
    const started = Date.now()
    const hung = await rejection(runtime.create(sandbox()))
    const ms = Date.now() - started
    expect(hung.code).toBe('TIMEOUT')
    expect(hung.message).toContain('docker-credential-cihang')
    expect(ms).toBeGreaterThanOrEqual(9_900)
    expect(ms).toBeLessThan(12_000)
    const pid = readFileSync(pidFile, 'utf8').trim()
    // The helper's whole process group (its background sleep too) is gone.
    expect(await liveInGroup(pid)).toBe('')

    helper('cigarbage', 'echo "not json at all: garbage-token-123"')
    writeConfig({ credsStore: 'cigarbage' })
    const garbage = await rejection(runtime.create(sandbox()))
    expect(garbage.code).toBe('REGISTRY_AUTH')
    expect(garbage.message).toContain('docker-credential-cigarbage')
    expect(garbage.message).toContain(registry.host)
    expect(garbage.message).not.toContain('garbage-token-123')
    console.log(`[pull] hanging helper settled in ${ms} ms`)
  }, 30_000)

  it('a registry that never answers settles TIMEOUT on the engine timeout', async () => {
    writeConfig({})
    const silent = await startSilentRegistry()
    try {
      const quick = new addon.DockerRuntime({ engine: { ...engine, timeoutMs: 3000 }, baseDir: base.path })
      // Connected first: a busy engine's ping may itself take the 3 s (ENGINE_UNAVAILABLE),
      // which is not what this test is about.
      await eventually('the engine answers within 3 s', () => quick.list().then(() => true, () => false), 60_000)
      const started = Date.now()
      const err = await rejection(quick.create(sandbox({ image: `${silent.host}/ci/busy:1` })))
      const ms = Date.now() - started
      expect(err.code).toBe('TIMEOUT')
      expect(err.message).toContain(silent.host)
      expect(ms).toBeLessThan(3000 + 2000)
      console.log(`[pull] silent registry settled in ${ms} ms (timeoutMs 3000): ${err.message}`)
    } finally {
      await silent.stop()
    }
  })

  it('a registry that stops mid-layer settles TIMEOUT after the bytes it sent were reported, creating nothing', async () => {
    writeConfig({})
    // Its own image: a layer the engine has (from an image a container still uses) would
    // not be downloaded at all.
    const own = pushRandomImage(registry, auth, 'ci/stall:1', LAYER_BYTES)
    const stall = await startServedRegistry(registry.host, auth, 'ci/stall', '1', { stall: true })
    const stalled = `${stall.host}/ci/stall:1`
    try {
      const quick = new addon.Workspaces({ baseDir: base.path, engine: { ...engine, timeoutMs: 4000 } })
      // Connected first: a busy engine's ping may itself take the 4 s (ENGINE_UNAVAILABLE),
      // which is not what this test is about.
      await eventually('the engine answers within 4 s', () => quick.list().then(() => true, () => false), 60_000)
      const events: Event[] = []
      const id = session()
      const err = await rejection(
        quick.create({ projectDir: project(), sessionId: id, image: stalled, devcontainer: false, onProgress: (e) => events.push({ ...e, at: Date.now() }) }),
      )
      const settled = Date.now()
      await sleep(100)
      expect(err.code, err.message).toBe('TIMEOUT')
      expect(err.message).toContain('no progress for 4000 ms')
      expect(stall.stalledAt()).toBeGreaterThan(0)
      const afterStall = settled - stall.stalledAt()
      expect(afterStall).toBeLessThan(4000 + 2000)
      const bytes = Math.max(0, ...events.filter((e) => e.phase === 'pull').map((e) => e.current ?? 0))
      if (!isPodman) expect(bytes).toBeGreaterThan(0)
      expect(containersOf(id)).toBe('')
      expect(await quick.get(id)).toBeUndefined()
      for (let i = 0; i < 30 && !stall.droppedAt(); i++) await sleep(100)
      const dropped = stall.droppedAt() ? `${stall.droppedAt() - settled} ms after` : 'not within 3 s of'
      console.log(`[pull] mid-layer stall settled ${afterStall} ms after the stall (timeoutMs 4000), ${bytes} bytes reported; the engine dropped the registry ${dropped} the rejection`)
    } finally {
      await stall.stop()
      dropLocal(stalled)
      dropLocal(own)
    }
  })

  it('prune removes an unused derived image, keeps one in use, one of another base directory and one built on ours', async () => {
    const prunes = tempDir('prune-base')
    dirs.push(prunes)
    const ws = new addon.Workspaces({ baseDir: prunes.path, engine })
    const built = (which: string) =>
      project({
        '.devcontainer/devcontainer.json': JSON.stringify({ build: { dockerfile: 'Dockerfile' } }),
        '.devcontainer/Dockerfile': `FROM ${IMAGES.busybox}\nLABEL test.which=${which}\n`,
      })
    const events: Event[] = []
    const [used, unused] = [session(), session()]
    const kept = await ws.create({ projectDir: built(`used-${process.pid}`), sessionId: used, onProgress: (e) => events.push({ ...e, at: Date.now() }) })
    const gone = await ws.create({ projectDir: built(`unused-${process.pid}`), sessionId: unused })
    await ws.destroy(unused)
    const buildLines = events.filter((e) => e.phase === 'build').map((e) => e.detail)
    expect(buildLines[0]).toMatch(/^(Step|STEP) 1\/\d+ ?: FROM /)
    const context = tempDir('prune-context')
    dirs.push(context)
    const foreign = `ci-foreign-${process.pid}:1`
    const inherits = `ci-inherits-${process.pid}:1`
    writeFileSync(join(context.path, 'Dockerfile'), `FROM ${kept.image}\nLABEL test.other=1\n`)
    const label = (k: string, v: string) => ['--label', `dev.container-isolation.${k}=${v}`]
    engineCli('build', '-q', '-t', inherits, context.path)
    engineCli('build', '-q', '-t', foreign, ...label('managed', 'true'), ...label('base-dir', '/elsewhere'), ...label('image-tag', foreign), context.path)
    const exists = (tag: string) => spawnSync(CLI, ['image', 'inspect', tag], { stdio: 'ignore' }).status === 0
    try {
      const dry = await ws.prune({ dryRun: true })
      expect(dry).toEqual({ imagesRemoved: [gone.image], kept: [kept.image] })
      expect(exists(gone.image)).toBe(true)
      const young = await ws.prune({ olderThanMs: 3_600_000 })
      expect(young.imagesRemoved).toEqual([])
      expect(young.kept.sort()).toEqual([gone.image, kept.image].sort())
      const report = await ws.prune()
      expect(report).toEqual({ imagesRemoved: [gone.image], kept: [kept.image] })
      expect([gone.image, kept.image, foreign, inherits].map(exists)).toEqual([false, true, true, true])
      console.log(`[pull] prune: ${JSON.stringify(report)}; ${buildLines.length} build events`)
    } finally {
      await ws.destroy(used).catch(() => {})
      for (const tag of [inherits, foreign, kept.image, gone.image]) dropLocal(tag)
    }
  })

  hostSide('a node process whose onProgress throws is not disturbed, and exits promptly after its last line', async () => {
    const script = `
const { Workspaces } = require(${JSON.stringify(join(__dirname, '..', 'lib', 'index.js'))})
;(async () => {
  let events = 0
  const onProgress = () => {
    events++
    throw new Error('a progress display failed')
  }
  const ws = new Workspaces({ baseDir: process.argv[1], engine: ${JSON.stringify(engine)}, onProgress })
  await ws.create({ projectDir: process.argv[2], sessionId: 'exit1', image: ${JSON.stringify(IMAGES.busybox)}, devcontainer: false })
  await ws.destroy('exit1')
  console.log('LAST ' + events)
})()
`
    const child = spawn(process.execPath, ['-e', script, join(base.path, 'exit-base'), project()], { stdio: ['ignore', 'pipe', 'inherit'] })
    let lastLineAt = 0
    let output = ''
    child.stdout.on('data', (chunk) => {
      output += chunk
      if (output.includes('LAST')) lastLineAt ||= Date.now()
    })
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
    expect(code).toBe(0)
    expect(output).toMatch(/LAST [1-9]/)
    expect(Date.now() - lastLineAt).toBeLessThan(1500)
    console.log(`[pull] onProgress process exited ${Date.now() - lastLineAt} ms after its last line (${output.trim()})`)
  })
})
