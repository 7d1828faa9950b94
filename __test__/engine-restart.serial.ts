import { execFileSync } from 'node:child_process'
import { afterAll, describe, expect, it } from 'vitest'
import { addon, rejection, suiteRuntime } from './helpers'

const engine = { socketPath: '/var/run/docker.sock', timeoutMs: 5000 }
const suite = suiteRuntime('restart')
afterAll(suite.cleanup)

const sh = (script: string) => execFileSync('bash', ['-c', script], { stdio: 'inherit' })
const stopDockerd = () => sh('kill $(pidof dockerd); while pidof dockerd >/dev/null; do sleep 0.1; done')
const startDockerd = () =>
  sh(
    'nohup setsid /usr/sbin/dockerd --live-restore >>/var/log/dockerd.log 2>&1 </dev/null & ' +
      'for i in $(seq 1 300); do curl -sf --unix-socket /var/run/docker.sock http://d/_ping >/dev/null && exit 0; sleep 0.1; done; exit 1',
  )

describe('engine restart', () => {
  it('calls reject ENGINE_UNAVAILABLE promptly while dockerd is down; the same runtime, FileIO and Shell work after', async () => {
    const runtime = new addon.DockerRuntime({ engine, image: 'container-isolation-test:debian', baseDir: suite.baseDir })
    const id = await runtime.create({ workingDirectory: '/', mounts: [] })
    await runtime.start(id)
    const shell = new addon.DockerShell({ container: id, cwd: '/', threadId: 'restart', engine })
    const fileIO = new addon.DockerFileIO({ container: id, engine })
    expect((await shell.execute('echo before', { toolRequestId: 'r1' })).output[0].text).toBe('before')
    await fileIO.writeFile('/tmp/before.txt', 'before')

    stopDockerd()
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
      startDockerd()
    }

    expect((await runtime.inspect(id)).state).toBe('running') // --live-restore kept it up
    expect((await shell.execute('echo after', { toolRequestId: 'r3' })).output[0].text).toBe('after')
    expect((await runtime.exec(id, { command: ['echo', 'exec-after'] })).stdout).toBe('exec-after\n')
    expect(await fileIO.readFile('/tmp/before.txt')).toBe('before')
  })
})
