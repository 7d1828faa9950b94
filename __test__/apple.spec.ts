import { describe, expect, it } from 'vitest'
import { addon, rejection } from './helpers'

// Apple's `container` CLI exists only on macOS; on Linux the runtime can show how it fails
// when its CLI is missing. Its argv building and output parsing are unit-tested in Rust
// (src/apple) against the CLI's documented 0.x and 1.x JSON shapes.
describe('AppleContainerRuntime without its CLI', () => {
  it('rejects ENGINE_UNAVAILABLE naming the executable', async () => {
    const runtime = new addon.AppleContainerRuntime({ program: '/nonexistent/container' })
    for (const call of [() => runtime.inspect('x'), () => runtime.list(), () => runtime.create({ image: 'i', workingDirectory: '/', mounts: [] })]) {
      const err = await rejection(call())
      expect(err.code).toBe('ENGINE_UNAVAILABLE')
      expect(err.message).toContain('/nonexistent/container')
    }
  })

  it('translates through the mounts it knows and throws CONTAINER_NOT_FOUND otherwise', () => {
    const runtime = new addon.AppleContainerRuntime()
    expect(() => runtime.translateToHost('/workspace', 'unknown')).toThrow(expect.objectContaining({ code: 'CONTAINER_NOT_FOUND' }))
  })
})
