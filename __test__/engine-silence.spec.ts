// An engine that does not answer is never read as "the image is absent": an image inspect
// cut off or never answered (a proxy in front of the engine's socket, faulty-engine.ts)
// rejects with the engine's failure, and nothing is pulled, built or created. On the
// engine under test (TEST_ENGINE_SOCKET).
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addon, engine, gitProject, IMAGES, rejection, tempDir } from './helpers'
import { startFaultyEngine } from './faulty-engine'

const dockerConfig = tempDir('silence-docker-config')
const base = tempDir('silence-base')
const dirs: Array<{ cleanup: () => void }> = [dockerConfig, base]
const saved = process.env.DOCKER_CONFIG
const workspaces = new addon.Workspaces({ baseDir: base.path, engine })

beforeAll(() => {
  writeFileSync(join(dockerConfig.path, 'config.json'), '{}')
  process.env.DOCKER_CONFIG = dockerConfig.path
})

afterAll(async () => {
  for (const ws of await workspaces.list()) await workspaces.destroy(ws.sessionId).catch(() => {})
  if (saved === undefined) delete process.env.DOCKER_CONFIG
  else process.env.DOCKER_CONFIG = saved
  dirs.forEach((d) => d.cleanup())
})

function project(files: Record<string, string> = {}): string {
  const d = gitProject('silence-project', files)
  dirs.push(d)
  return d.path
}

let n = 0
const session = () => `silent${process.pid}x${++n}`
const sandbox = (extra: Record<string, unknown> = {}) => ({ workingDirectory: '/', mounts: [], ...extra })

describe('an engine that does not answer is never read as "image absent"', () => {
  const named = /^container-isolation-test:busybox$/
  const made = (requests: string[]) =>
    requests.filter((r) => ['POST /images/create', 'POST /build', 'POST /containers/create'].some((call) => r.startsWith(call)))

  it('an image inspect cut off rejects ENGINE_UNAVAILABLE, pulling and creating nothing (Workspaces and DockerRuntime)', async () => {
    const cut = await startFaultyEngine(engine.socketPath, { inspect: named, how: 'close' })
    try {
      const through = { socketPath: cut.socketPath }
      const ws = new addon.Workspaces({ baseDir: base.path, engine: through })
      const id = session()
      const err = await rejection(ws.create({ projectDir: project(), sessionId: id, image: IMAGES.busybox, devcontainer: false }))
      expect(err.code, err.message).toBe('ENGINE_UNAVAILABLE')
      expect(err.message).toContain(IMAGES.busybox)
      expect(await workspaces.get(id)).toBeUndefined()
      const rt = new addon.DockerRuntime({ engine: through, baseDir: base.path })
      const direct = await rejection(rt.create(sandbox({ image: IMAGES.busybox })))
      expect(direct.code, direct.message).toBe('ENGINE_UNAVAILABLE')
      const seen = cut.requests()
      expect(seen.filter((r) => r === `GET /images/${IMAGES.busybox}/json`).length).toBeGreaterThanOrEqual(2)
      expect(made(seen)).toEqual([])
      console.log(`[pull] inspect cut off: ${err.message}`)
    } finally {
      await cut.stop()
    }
  })

  it('an image inspect never answered rejects TIMEOUT on the engine timeout, pulling nothing', async () => {
    const silent = await startFaultyEngine(engine.socketPath, { inspect: named, how: 'silent' })
    try {
      const ws = new addon.Workspaces({ baseDir: base.path, engine: { socketPath: silent.socketPath, timeoutMs: 2000 } })
      const started = Date.now()
      const err = await rejection(ws.create({ projectDir: project(), sessionId: session(), image: IMAGES.busybox, devcontainer: false }))
      const ms = Date.now() - started
      expect(err.code, err.message).toBe('TIMEOUT')
      expect(err.message).toContain(IMAGES.busybox)
      expect(made(silent.requests())).toEqual([])
      console.log(`[pull] inspect never answered: TIMEOUT after ${ms} ms (timeoutMs 2000)`)
    } finally {
      await silent.stop()
    }
  })

  it("the features image's inspect cut off rejects ENGINE_UNAVAILABLE instead of building it again", async () => {
    const cut = await startFaultyEngine(engine.socketPath, { inspect: /^container-isolation-features-/, how: 'close' })
    try {
      const ws = new addon.Workspaces({ baseDir: base.path, engine: { socketPath: cut.socketPath } })
      const files = {
        '.devcontainer/devcontainer.json': JSON.stringify({ image: IMAGES.busybox, features: { './tool': {} } }),
        '.devcontainer/tool/devcontainer-feature.json': JSON.stringify({ id: 'tool' }),
        '.devcontainer/tool/install.sh': '#!/bin/sh\necho tool > /tool\n',
      }
      const id = session()
      const err = await rejection(ws.create({ projectDir: project(files), sessionId: id }))
      expect(err.code, err.message).toBe('ENGINE_UNAVAILABLE')
      expect(err.message).toContain('container-isolation-features-')
      const seen = cut.requests()
      expect(seen.some((r) => /^GET \/images\/container-isolation-features-[0-9a-f]+:latest\/json$/.test(r))).toBe(true)
      expect(made(seen)).toEqual([])
      expect(await workspaces.get(id)).toBeUndefined()
    } finally {
      await cut.stop()
    }
  })
})
