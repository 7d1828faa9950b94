// readComposeProject (docs/api.md, "Compose devcontainers"): what a compose devcontainer
// would run, read under the host's trust. No engine is involved; the rules themselves are
// src/compose's unit tests, this is the binding's shape and its errors.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { addon, rejection, tempDir } from './helpers'

const dirs: Array<{ cleanup: () => void }> = []
afterAll(() => dirs.forEach((d) => d.cleanup()))
function project(files: Record<string, string>): string {
  const d = tempDir('compose')
  dirs.push(d)
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(d.path, name, '..'), { recursive: true })
    writeFileSync(join(d.path, name), text)
  }
  return d.path
}

const COMPOSE = `
services:
  app:
    image: app:\${TAG:-1}
    command: sleep infinity
    volumes: ['..:/workspace:cached', 'cache:/cache']
    depends_on:
      db: { condition: service_healthy }
    environment: [FROM_HOST]
  db:
    image: postgres:16
    healthcheck: { test: [CMD, pg_isready], interval: 2s, retries: 5 }
    expose: [5432]
volumes:
  cache: {}
`

describe('readComposeProject', () => {
  it('lists the services in dependency order, each with what a session makes it from', async () => {
    const dir = project({
      '.devcontainer/devcontainer.json': '{ "dockerComposeFile": "compose.yml", "service": "app" }',
      '.devcontainer/compose.yml': COMPOSE,
    })
    process.env.CI_COMPOSE_FROM_HOST = 'unused'
    const plan = (await addon.readComposeProject(dir))!
    expect(plan.name).toBe('devcontainer')
    expect(plan.service).toBe('app')
    expect(plan.files).toEqual([join(dir, '.devcontainer', 'compose.yml')])
    expect(plan.services.map((s) => s.name)).toEqual(['db', 'app'])
    const [db, app] = plan.services
    expect(db.healthcheck).toEqual({ test: ['CMD', 'pg_isready'], intervalMs: 2000, retries: 5 })
    expect(db.ports).toEqual([{ containerPort: 5432, protocol: 'tcp', field: 'expose' }])
    expect(app.image).toBe('app:1')
    expect(app.command).toEqual(['sleep', 'infinity'])
    expect(app.dependsOn).toEqual([{ service: 'db', condition: 'service_healthy', required: true, restart: false }])
    expect(app.mounts).toEqual([
      { type: 'bind', source: dir, target: '/workspace', readonly: false, inProject: '' },
      { type: 'volume', source: 'cache', target: '/cache', readonly: false },
    ])
    expect(app.environment).toEqual({})
    expect(plan.volumes).toEqual([{ key: 'cache' }])
    expect(plan.warnings.some((w) => w.includes('environment.FROM_HOST'))).toBe(true)
    expect(plan.hostEnvNotRead).toEqual(['FROM_HOST', 'TAG'])
  })

  it('reads the host environment only as the trust grants it, and refuses what it does not grant', async () => {
    const dir = project({
      '.devcontainer/devcontainer.json': '{ "dockerComposeFile": "compose.yml", "service": "app" }',
      '.devcontainer/compose.yml': 'services:\n  app:\n    image: app\n    environment: { TAG: "${CI_COMPOSE_TAG}" }\n    privileged: true\n',
    })
    process.env.CI_COMPOSE_TAG = 'granted'
    const err = await rejection(addon.readComposeProject(dir))
    expect(err.code).toBe('DEVCONTAINER')
    expect((err as unknown as { refusals: Array<{ trust: unknown }> }).refusals.map((r) => r.trust)).toEqual([{ privileged: true }])
    const plan = (await addon.readComposeProject(dir, { trust: { privileged: true, localEnv: ['CI_COMPOSE_TAG'] } }))!
    expect(plan.services[0].environment).toEqual({ TAG: 'granted' })
    expect(plan.services[0].privileges.privileged).toBe(true)
    const ungranted = (await addon.readComposeProject(dir, { trust: { privileged: true } }))!
    expect(ungranted.services[0].environment).toEqual({ TAG: '' })
    expect(ungranted.hostEnvNotRead).toEqual(['CI_COMPOSE_TAG'])
  })

  it('is undefined without a compose config, and rejects an invalid one with DEVCONTAINER', async () => {
    expect(await addon.readComposeProject(project({ '.devcontainer/devcontainer.json': '{ "image": "x" }' }))).toBeUndefined()
    expect(await addon.readComposeProject(project({ 'README.md': 'no config' }))).toBeUndefined()
    const clash = project({
      '.devcontainer/devcontainer.json': '{ "dockerComposeFile": "compose.yml", "service": "a" }',
      '.devcontainer/compose.yml': 'services:\n  a: {image: a, expose: [80]}\n  b: {image: b, ports: ["8080:80"]}\n',
    })
    const err = await rejection(addon.readComposeProject(clash))
    expect(err.code).toBe('DEVCONTAINER')
    expect(err.message).toContain("services 'a' and 'b' both listen on container port 80/tcp")
  })
})
