// devcontainer.json for Workspaces on Kubernetes (docs/kubernetes.md, "devcontainer.json on a
// cluster"): the image, folder, users, variables and lifecycle steps a session Pod gets, a
// Compose config's services as containers of the Pod, and what needs an image build or a
// host refused by name before anything is made.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import type { ClusterDescription } from '../scripts/kube-cluster.mjs'
import { KubernetesRuntime, Workspaces } from '../lib/index.js'
import { git, project } from './kube-project'

const cluster: ClusterDescription = JSON.parse(readFileSync(process.env.TEST_KUBE_CLUSTER_JSON!, 'utf8'))
const kubernetes = { kubeconfig: cluster.kubeconfig.session, namespace: cluster.namespace }
const baseDir = mkdtempSync(join(tmpdir(), 'kube-dc-'))
const logDir = mkdtempSync(join(tmpdir(), 'kube-dc-logs-'))
const image = 'container-isolation-test:debian'
const workspaces = new Workspaces({ baseDir, engine: { kubernetes }, image, pull: 'never' })
const runtime = new KubernetesRuntime({ kubernetes, baseDir: join(baseDir, 'kubernetes') })
const made: string[] = []

afterAll(async () => {
  await Promise.all(made.map((id) => workspaces.destroy(id).catch(() => {})))
})

describe('devcontainer.json on Kubernetes', () => {
  it("devcontainer.json on a cluster: image, folder, users, variables and every lifecycle step, in each fresh Pod", async () => {
    const config = {
      image,
      workspaceFolder: '/work/app',
      containerEnv: { FROM_CONTAINER: 'c-env' },
      remoteEnv: { FROM_REMOTE: '${containerEnv:FROM_CONTAINER}-r' },
      remoteUser: 'agent',
      initializeCommand: ['touch', 'initialized-on-host'],
      onCreateCommand: 'echo on-create >> /tmp/steps',
      updateContentCommand: ['sh', '-c', 'echo update-content >> /tmp/steps'],
      postCreateCommand: { mark: 'echo post-create >> /tmp/steps; id -un > made-by.txt' },
      postStartCommand: 'echo post-start >> /tmp/steps',
      postAttachCommand: 'echo post-attach >> /tmp/steps',
    }
    const dir = project({ 'README.md': 'x\n', '.devcontainer/devcontainer.json': JSON.stringify(config) })
    made.push('kube-dc')
    await expect(workspaces.create({ projectDir: dir, sessionId: 'kube-dc' })).rejects.toMatchObject({
      code: 'DEVCONTAINER',
      message: expect.stringContaining('hostCommands'),
    })
    const steps: string[] = []
    const info = await workspaces.create({
      projectDir: dir,
      sessionId: 'kube-dc',
      trust: { hostCommands: true },
      onProgress: (p) => p.phase === 'lifecycle' && steps.push(p.detail),
    })
    expect(info.containerMountPath).toBe('/work/app')
    expect(info.image).toBe(image)
    expect(info.warnings.join('\n')).toContain('devcontainer.metadata label is not read on Kubernetes')
    expect(existsSync(join(dir, 'initialized-on-host'))).toBe(true)
    await sleep(100)
    expect([steps[0], steps.at(-1)]).toEqual(['onCreateCommand', 'postStartCommand'])

    const env = await workspaces.environment('kube-dc', 't1', { logDir })
    expect(env.cwd).toBe('/work/app')
    const seen = await env.shell.execute('id -un; echo "$FROM_CONTAINER $FROM_REMOTE"; cat made-by.txt; cat /tmp/steps | tr "\\n" " "', { toolRequestId: 'd1' })
    expect(seen.output.map((l) => l.text)).toEqual(['agent', 'c-env c-env-r', 'agent', 'on-create update-content post-create post-start post-attach '])
    await env.fileIO.writeFile('by-agent.txt', 'mine\n')
    const owner = await env.shell.execute('stat -c %U by-agent.txt README.md', { toolRequestId: 'd2' })
    expect(owner.output.map((l) => l.text)).toEqual(['agent', 'agent'])

    // A stopped session's next Pod is a fresh container: the creation steps run again in it,
    // with the work read back at the stop.
    await workspaces.stop('kube-dc')
    const again = await workspaces.environment('kube-dc', 't2', { logDir })
    const after = await again.shell.execute('cat by-agent.txt; cat /tmp/steps | tr "\\n" " "', { toolRequestId: 'd3' })
    expect(after.output.map((l) => l.text)).toEqual(['mine', 'on-create update-content post-create post-start post-attach '])
  })

  it("a Compose devcontainer's services as containers of the session's Pod: in dependency order, on its loopback by name, sharing named volumes", async () => {
    const compose = {
      services: {
        app: { image, command: ['sleep', 'infinity'], depends_on: { web: { condition: 'service_healthy' } } },
        seed: { image: 'container-isolation-test:busybox', command: ['sh', '-c', 'echo seeded > /data/index.html'], volumes: ['shared:/data'] },
        web: {
          image: 'container-isolation-test:busybox',
          command: ['httpd', '-f', '-p', '8080', '-h', '/data'],
          depends_on: { seed: { condition: 'service_completed_successfully' } },
          healthcheck: { test: ['CMD', 'wget', '-q', '-O', '/dev/null', 'http://127.0.0.1:8080/'], interval: '1s', retries: 30 },
          volumes: ['shared:/data'],
        },
      },
      volumes: { shared: {} },
    }
    const dir = project({
      'README.md': 'x\n',
      '.devcontainer/devcontainer.json': JSON.stringify({ dockerComposeFile: 'compose.json', service: 'app', workspaceFolder: '/workspace' }),
      '.devcontainer/compose.json': JSON.stringify(compose),
    })
    made.push('kube-compose')
    const info = await workspaces.create({ projectDir: dir, sessionId: 'kube-compose' })
    expect(info.state).toBe('running')
    const env = await workspaces.environment('kube-compose', 't1', { logDir })
    const got = await env.shell.execute('exec 3<>/dev/tcp/web/8080; printf "GET / HTTP/1.0\\r\\n\\r\\n" >&3; tail -n 1 <&3; echo "$NO_PROXY" | tr , "\\n" | grep -x web', { toolRequestId: 'k1' })
    expect(got.output.map((l) => l.text)).toEqual(['seeded', 'web'])
    // A stopped session's Pod is made again with its services.
    await workspaces.stop('kube-compose')
    const again = await workspaces.environment('kube-compose', 't2', { logDir })
    const back = await again.shell.execute('exec 3<>/dev/tcp/web/8080; printf "GET / HTTP/1.0\\r\\n\\r\\n" >&3; tail -n 1 <&3', { toolRequestId: 'k2' })
    expect(back.output.map((l) => l.text)).toEqual(['seeded'])

    const bound = project({
      'README.md': 'x\n',
      '.devcontainer/devcontainer.json': JSON.stringify({ dockerComposeFile: 'compose.json', service: 'app' }),
      '.devcontainer/compose.json': JSON.stringify({ services: { app: { image }, db: { image, volumes: ['./data:/data'] } } }),
    })
    await expect(workspaces.create({ projectDir: bound, sessionId: 'kube-compose-bind' })).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      message: expect.stringContaining("compose service 'db': the bind mount of '/data'"),
    })
    expect(await workspaces.get('kube-compose-bind')).toBeUndefined()
  })

  it('a lifecycle step that fails fails the create, and leaves no Pod and no session', async () => {
    const dir = project({ 'README.md': 'x\n', '.devcontainer/devcontainer.json': JSON.stringify({ image, postCreateCommand: 'echo broken >&2; exit 3' }) })
    made.push('kube-dc-fail')
    await expect(workspaces.create({ projectDir: dir, sessionId: 'kube-dc-fail' })).rejects.toMatchObject({
      code: 'DEVCONTAINER',
      message: expect.stringMatching(/postCreateCommand exited 3 .*broken/s),
    })
    expect(await workspaces.get('kube-dc-fail')).toBeUndefined()
    expect((await runtime.list()).filter((c) => c.name?.includes('kube-dc-fail'))).toEqual([])
  })

  it('what a cluster session cannot have is refused by name, before anything is made', async () => {
    const feature = {
      '.devcontainer/local-feature/devcontainer-feature.json': JSON.stringify({ id: 'local-feature', version: '1.0.0' }),
      '.devcontainer/local-feature/install.sh': '#!/bin/sh\n',
      '.devcontainer/Dockerfile': `FROM ${image}\n`,
    }
    const refused = async (sessionId: string, config: object, field: string) => {
      const dir = project({ 'README.md': 'x\n', '.devcontainer/devcontainer.json': JSON.stringify(config), ...feature })
      await expect(workspaces.create({ projectDir: dir, sessionId })).rejects.toMatchObject({
        code: 'UNSUPPORTED',
        message: expect.stringContaining(field),
      })
      expect(await workspaces.get(sessionId)).toBeUndefined()
    }
    await refused('kube-build', { build: { dockerfile: 'Dockerfile' } }, 'build (a Dockerfile)')
    await refused('kube-features', { image, features: { './local-feature': {} } }, 'features')
    await refused('kube-cpu', { image, runArgs: ['--cpu-shares', '512'] }, 'cpuShares')
    const dir = project()
    await expect(workspaces.create({ projectDir: dir, sessionId: 'kube-net', devcontainer: false, network: 'bridge' })).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      message: expect.stringContaining("create's network"),
    })
    expect(() => new Workspaces({ baseDir, engine: { kubernetes, socketPath: '/x' } })).toThrow(/no other engine field/)
    await expect(workspaces.containerAccess('kube-net')).rejects.toMatchObject({ code: 'UNSUPPORTED' })
    expect(workspaces.poolStatus()).toBeUndefined()
  })
})
