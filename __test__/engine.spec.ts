import { describe, expect, it } from 'vitest'
import { addon, engine, isPodman, rejection } from './helpers'

describe('detectEngine', () => {
  it('finds the engine under test and reports its kind and versions', async () => {
    const info = await addon.detectEngine(engine)
    expect(info.kind).toBe(isPodman ? 'podman' : 'docker')
    expect(info.endpoint).toBe(`unix://${engine.socketPath}`)
    expect(info.version).toMatch(/^\d+\.\d+/)
    expect(info.apiVersion).toMatch(/^1\.\d+$/)
    expect(info.os).toBe('linux')
  })

  it('auto-detects without options', async () => {
    const info = await addon.detectEngine()
    expect(['docker', 'podman']).toContain(info.kind)
  })

  it('rejects ENGINE_UNAVAILABLE naming a missing socket path', async () => {
    const err = await rejection(addon.detectEngine({ socketPath: '/nonexistent/dir/docker.sock' }))
    expect(err.code).toBe('ENGINE_UNAVAILABLE')
    expect(err.message).toContain('/nonexistent/dir/docker.sock')
    expect(err).toBeInstanceOf(Error)
  })

  it('rejects an engine of the other family when a kind is asked for', async () => {
    const [actual, other] = isPodman ? ['podman', 'docker'] : ['docker', 'podman']
    const err = await rejection(addon.detectEngine({ ...engine, kind: other as 'docker' | 'podman' }))
    expect(err.code).toBe('ENGINE_UNAVAILABLE')
    expect(err.message).toContain(`answers as ${actual}, but kind '${other}' was asked for`)
  })

  it('rejects a closed tcp endpoint with the reason', async () => {
    const err = await rejection(addon.detectEngine({ host: 'tcp://127.0.0.1:9', timeoutMs: 2000 }))
    expect(err.code).toBe('ENGINE_UNAVAILABLE')
    expect(err.message).toContain('http://127.0.0.1:9')
  })

  it('rejects malformed options with INVALID_ARGUMENT', async () => {
    expect((await rejection(addon.detectEngine({ host: 'ssh://me@box' }))).code).toBe('INVALID_ARGUMENT')
    expect((await rejection(addon.detectEngine({ kind: 'lxc' as never }))).code).toBe('INVALID_ARGUMENT')
    expect((await rejection(addon.detectEngine({ timeoutMs: -1 }))).code).toBe('INVALID_ARGUMENT')
  })
})

describe('computeContainerName', () => {
  it('is agentbox- and 12 hex digits of sha256(path)', () => {
    expect(addon.computeContainerName('/home/u/project')).toBe('agentbox-4eb6cd28fb98')
  })
})
