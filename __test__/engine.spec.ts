import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { addon, engine, isPodman, rejection, withEnv } from './helpers'

/** A docker config folder with one context per name, each pointing at `host`. */
function configWithContexts(contexts: Record<string, string>, current?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'ci-ctx-'))
  for (const [name, host] of Object.entries(contexts)) {
    const meta = join(dir, 'contexts', 'meta', createHash('sha256').update(name).digest('hex'))
    mkdirSync(meta, { recursive: true })
    writeFileSync(join(meta, 'meta.json'), JSON.stringify({ Name: name, Metadata: {}, Endpoints: { docker: { Host: host, SkipTLSVerify: false } } }))
  }
  writeFileSync(join(dir, 'config.json'), JSON.stringify(current ? { currentContext: current } : {}))
  return dir
}

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

  it('finds out that the engine under test shares this machine (a volume whose folder is here)', async () => {
    const info = await addon.detectEngine(engine)
    expect(info.local).toBe(true)
  })

  it('reaches the engine through a docker context: the option, DOCKER_CONTEXT, the config\'s currentContext', async () => {
    const dir = configWithContexts({ mine: `unix://${engine.socketPath}`, dead: 'unix:///nonexistent/docker.sock' }, 'mine')
    try {
      await withEnv({ DOCKER_CONFIG: dir, DOCKER_HOST: undefined, DOCKER_CONTEXT: undefined }, async () => {
        expect((await addon.detectEngine({ context: 'mine' })).endpoint).toBe(`unix://${engine.socketPath}`)
        expect((await addon.detectEngine()).endpoint).toBe(`unix://${engine.socketPath}`)
        const dead = await rejection(addon.detectEngine({ context: 'dead' }))
        expect(dead.code).toBe('ENGINE_UNAVAILABLE')
        expect(dead.message).toContain('/nonexistent/docker.sock')
        const missing = await rejection(addon.detectEngine({ context: 'nope' }))
        expect(missing.code).toBe('INVALID_ARGUMENT')
        expect(missing.message).toContain("'nope'")
        await withEnv({ DOCKER_CONTEXT: 'gone' }, async () => {
          const err = await rejection(addon.detectEngine())
          expect(err.code).toBe('INVALID_ARGUMENT')
          expect(err.message).toContain("'gone'")
        })
      })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('rejects malformed options with INVALID_ARGUMENT', async () => {
    expect((await rejection(addon.detectEngine({ host: 'ftp://box' }))).code).toBe('INVALID_ARGUMENT')
    expect((await rejection(addon.detectEngine({ host: 'ssh://-oProxyCommand=x' }))).code).toBe('INVALID_ARGUMENT')
    expect((await rejection(addon.detectEngine({ host: 'ssh://me@box/path' }))).code).toBe('INVALID_ARGUMENT')
    expect((await rejection(addon.detectEngine({ tls: true }))).code).toBe('INVALID_ARGUMENT')
    expect((await rejection(addon.detectEngine({ host: `unix://${engine.socketPath}`, tls: true }))).code).toBe('INVALID_ARGUMENT')
    expect((await rejection(addon.detectEngine({ host: 'tcp://127.0.0.1:9', context: 'x' }))).code).toBe('INVALID_ARGUMENT')
    const missingCa = await rejection(addon.detectEngine({ host: 'tcp://127.0.0.1:9', tls: { ca: '/nonexistent/ca.pem' } }))
    expect(missingCa.code).toBe('INVALID_ARGUMENT')
    expect(missingCa.message).toContain('/nonexistent/ca.pem')
    expect((await rejection(addon.detectEngine({ kind: 'lxc' as never }))).code).toBe('INVALID_ARGUMENT')
    expect((await rejection(addon.detectEngine({ timeoutMs: -1 }))).code).toBe('INVALID_ARGUMENT')
  })
})

describe('computeContainerName', () => {
  it('is agentbox- and 12 hex digits of sha256(path)', () => {
    expect(addon.computeContainerName('/home/u/project')).toBe('agentbox-4eb6cd28fb98')
  })
})
