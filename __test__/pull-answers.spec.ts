// Failed pulls coded by the registry's own answer, the same on dockerd and Podman: a
// registry of the suite's (answering-registry.ts: a token service, then 401, 404, 429 or
// 500 for a manifest, or a manifest the engine cannot read), an identity token exchanged
// as a refresh token, and registries that cannot be reached at all. On the engine under
// test (TEST_ENGINE_SOCKET).
import { writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addon, engine, engineCli, gitProject, rejection, tempDir } from './helpers'
import { ANSWERS, GARBLED, startAnsweringRegistry } from './answering-registry'

const dockerConfig = tempDir('answers-docker-config')
const base = tempDir('answers-base')
const dirs: Array<{ cleanup: () => void }> = [dockerConfig, base]
const saved = process.env.DOCKER_CONFIG
const workspaces = new addon.Workspaces({ baseDir: base.path, engine })
const runtime = new addon.DockerRuntime({ engine, baseDir: base.path })

beforeAll(() => {
  process.env.DOCKER_CONFIG = dockerConfig.path
})

afterAll(async () => {
  for (const ws of await workspaces.list()) await workspaces.destroy(ws.sessionId).catch(() => {})
  for (const c of await runtime.list()) await runtime.remove(c.id).catch(() => {})
  if (saved === undefined) delete process.env.DOCKER_CONFIG
  else process.env.DOCKER_CONFIG = saved
  dirs.forEach((d) => d.cleanup())
})

function project(): string {
  const d = gitProject('answers-project')
  dirs.push(d)
  return d.path
}

let n = 0
const session = () => `answer${process.pid}x${++n}`
const containersOf = (id: string) => engineCli('ps', '-aq', '--filter', `label=dev.container-isolation.session=${id}`)
const sandbox = (extra: Record<string, unknown>) => ({ workingDirectory: '/', mounts: [], ...extra })

function writeConfig(config: object) {
  writeFileSync(join(dockerConfig.path, 'config.json'), JSON.stringify(config))
}

/** A loopback port nothing listens on (one just closed). */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe('a failed pull is coded by what the registry answered', () => {
  it("each answer of the registry gives its own code, the same on dockerd and Podman: only the manifest's 404 is IMAGE_NOT_FOUND", async () => {
    writeConfig({})
    const answering = await startAnsweringRegistry()
    const expected: Record<keyof typeof ANSWERS, string> = {
      'ci/unauthorized': 'REGISTRY_AUTH',
      'ci/missing': 'IMAGE_NOT_FOUND',
      'ci/limited': 'REGISTRY_RATE_LIMITED',
      'ci/broken': 'REGISTRY_ERROR',
    }
    try {
      for (const [repository, code] of Object.entries(expected) as Array<[keyof typeof ANSWERS, string]>) {
        const reference = `${answering.host}/${repository}:1`
        const id = session()
        const started = Date.now()
        const err = await rejection(workspaces.create({ projectDir: project(), sessionId: id, image: reference, devcontainer: false }))
        const ms = Date.now() - started
        expect(err.code, err.message).toBe(code)
        expect(err.message).toContain(reference)
        expect(err.message).toContain(`registry ${answering.host}`)
        const answer = ANSWERS[repository]
        expect(err.message).toContain(`answered ${answer.status}`)
        expect(err.message).toContain(`${answer.code}: ${answer.message}`)
        expect(containersOf(id)).toBe('')
        expect(await workspaces.get(id)).toBeUndefined()
        console.log(`[pull] ${answer.status} for the manifest: ${err.code} in ${ms} ms: ${err.message}`)
      }
      // The manifest is there: the registry explains nothing, the failure is the engine's.
      const garbled = `${answering.host}/${GARBLED}:1`
      const engineSide = await rejection(runtime.create(sandbox({ image: garbled })))
      expect(engineSide.code, engineSide.message).toBe('ENGINE_ERROR')
      expect(engineSide.message).toContain(garbled)
      expect(engineSide.message).toContain('the manifest is there')
      console.log(`[pull] 200 for the manifest, unreadable: ${engineSide.code}: ${engineSide.message}`)
      // The host asked the registry itself, through its token handshake, before deciding.
      const probes = answering.requests().filter((r) => r.userAgent.includes('registry probe'))
      expect(probes.some((r) => r.path === '/token')).toBe(true)
      const manifests = probes.filter((r) => r.path.includes('/manifests/'))
      expect(manifests.length).toBeGreaterThanOrEqual(5)
      expect(manifests.every((r) => r.bearer)).toBe(true)
      expect(new Set(manifests.map((r) => r.method))).toEqual(new Set(['HEAD', 'GET']))
    } finally {
      await answering.stop()
    }
  }, 120_000)

  it('an identity token in the docker config is exchanged at the token service as a refresh token, by the engine and by the host alike', async () => {
    const answering = await startAnsweringRegistry()
    const refresh = `ci-refresh-${process.pid}-${Math.random().toString(36).slice(2)}`
    writeConfig({ auths: { [answering.host]: { identitytoken: refresh } } })
    try {
      const reference = `${answering.host}/ci/missing:1`
      const err = await rejection(runtime.create(sandbox({ image: reference })))
      expect(err.code, err.message).toBe('IMAGE_NOT_FOUND')
      expect(err.message).not.toContain(refresh)
      const posts = answering.requests().filter((r) => r.path === '/token' && r.method === 'POST')
      const probe = posts.find((r) => r.userAgent.includes('registry probe'))
      expect(probe?.form).toMatchObject({ grant_type: 'refresh_token', refresh_token: refresh, scope: 'repository:ci/missing:pull' })
      expect(posts.some((r) => !r.userAgent.includes('registry probe') && r.form?.refresh_token === refresh)).toBe(true)
    } finally {
      await answering.stop()
    }
  })

  it('a registry that cannot be reached is REGISTRY_UNREACHABLE: a name under .invalid, a loopback port nothing listens on', async () => {
    writeConfig({})
    const port = await closedPort()
    for (const reference of [`ci-nowhere-${process.pid}.invalid/ci/busy:1`, `127.0.0.1:${port}/ci/busy:1`]) {
      const started = Date.now()
      const err = await rejection(runtime.create(sandbox({ image: reference })))
      expect(err.code, err.message).toBe('REGISTRY_UNREACHABLE')
      expect(err.message).toContain(reference)
      expect(err.message).toContain('cannot be reached')
      console.log(`[pull] unreachable registry: ${err.code} in ${Date.now() - started} ms: ${err.message}`)
    }
  }, 60_000)
})
