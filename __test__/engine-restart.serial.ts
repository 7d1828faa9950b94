// Engine restart: while dockerd is down every call rejects ENGINE_UNAVAILABLE promptly, and the
// same objects work again once it is back. The dockerd stopped and restarted here is a private
// one (private-dockerd.ts), never the machine's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addon, IMAGES, rejection, tempDir } from './helpers'
import { PrivateDockerd } from './private-dockerd'

const dockerd = new PrivateDockerd()
const engine = { socketPath: dockerd.socketPath, timeoutMs: 5000 }
const base = tempDir('restart')

beforeAll(async () => {
  await dockerd.start()
  dockerd.loadImage(IMAGES.busybox)
})
afterAll(async () => {
  try {
    await dockerd.cleanup()
  } finally {
    base.cleanup()
  }
})

describe('engine restart', () => {
  it('calls reject ENGINE_UNAVAILABLE promptly while dockerd is down; the same runtime, FileIO and Shell work after', async () => {
    const runtime = new addon.DockerRuntime({ engine, image: IMAGES.busybox, baseDir: base.path })
    // The private dockerd has no default bridge.
    const id = await runtime.create({ workingDirectory: '/', mounts: [], network: 'none' })
    await runtime.start(id)
    const shell = new addon.DockerShell({ container: id, cwd: '/', threadId: 'restart', engine })
    // Engine only: from the host, a running container's files stay readable without the
    // engine for as long as its facts are fresh (2 s), which would make this test a race.
    const fileIO = new addon.DockerFileIO({ container: id, engine, hostAccess: false })
    expect((await shell.execute('echo before', { toolRequestId: 'r1' })).output[0].text).toBe('before')
    await fileIO.writeFile('/tmp/before.txt', 'before')

    await dockerd.stop()
    try {
      for (const call of [
        () => runtime.inspect(id),
        () => runtime.exec(id, { command: ['true'] }),
        () => shell.execute('echo during', { toolRequestId: 'r2' }),
        () => fileIO.readFile('/tmp/before.txt'),
        () => fileIO.stat('/tmp/before.txt'),
        () => addon.detectEngine(engine),
      ]) {
        const started = Date.now()
        const err = await rejection(call())
        expect(err.code).toBe('ENGINE_UNAVAILABLE')
        expect(Date.now() - started).toBeLessThan(engine.timeoutMs)
      }
    } finally {
      await dockerd.start()
    }

    expect((await runtime.inspect(id)).state).toBe('running') // --live-restore kept it up
    expect((await shell.execute('echo after', { toolRequestId: 'r3' })).output[0].text).toBe('after')
    expect((await runtime.exec(id, { command: ['echo', 'exec-after'] })).stdout).toBe('exec-after\n')
    expect(await fileIO.readFile('/tmp/before.txt')).toBe('before')
  })
})
