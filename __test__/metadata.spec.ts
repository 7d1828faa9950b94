import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addon, engine, engineCli, git, gitProject, IMAGES, rejection, tempDir } from './helpers'

// Images built here from the Debian test image, each with a devcontainer.metadata label.
const TOOL_IMAGE = `container-isolation-test:metadata-${process.pid}`
const PRIVILEGED_IMAGE = `container-isolation-test:metadata-priv-${process.pid}`
const CAP_IMAGE = `container-isolation-test:metadata-cap-${process.pid}`

const base = tempDir('md-base')
const dirs: Array<{ cleanup: () => void }> = [base]
const workspaces = new addon.Workspaces({ baseDir: base.path, engine })

function buildImage(tag: string, metadata: unknown, dockerfile: string) {
  execFileSync('docker', ['build', '-q', '--label', `devcontainer.metadata=${JSON.stringify(metadata)}`, '-t', tag, '-'], {
    input: `FROM ${IMAGES.debian}\n${dockerfile}`,
    env: { ...process.env, DOCKER_HOST: `unix://${engine.socketPath}` },
  })
}

beforeAll(() => {
  buildImage(
    TOOL_IMAGE,
    [
      {
        id: 'tool-feature',
        remoteUser: 'agent',
        containerEnv: { FROM_IMAGE: 'yes' },
        postCreateCommand: 'id -un > /tmp/order && echo image >> /tmp/order',
      },
    ],
    [
      'RUN mkdir -p /opt/bin && printf "#!/bin/sh\\necho found-tool\\n" > /opt/bin/mytool && chmod +x /opt/bin/mytool',
      'RUN echo "export PROBED_VAR=from-profile" > /home/agent/.profile && chown agent:agent /home/agent/.profile',
      'CMD ["sleep", "infinity"]',
    ].join('\n'),
  )
  buildImage(PRIVILEGED_IMAGE, [{ privileged: true, capAdd: ['SYS_PTRACE'] }], '')
  buildImage(CAP_IMAGE, [{ capAdd: ['SYS_PTRACE'] }], '')
}, 120_000)

afterAll(async () => {
  for (const ws of await workspaces.list()) await workspaces.destroy(ws.sessionId).catch(() => {})
  engineCli('rmi', '-f', TOOL_IMAGE, PRIVILEGED_IMAGE, CAP_IMAGE)
  dirs.forEach((d) => d.cleanup())
})

function project(files: Record<string, string> = {}): string {
  const d = gitProject('md-project', files)
  dirs.push(d)
  return d.path
}

let n = 0
const session = () => `md${process.pid}x${++n}`

describe('readDevcontainerConfig', () => {
  it('reads the lifecycle-shaping fields and reports remoteEnv nulls as unset', async () => {
    const proj = project({
      '.devcontainer.json': JSON.stringify({
        image: 'x',
        remoteEnv: { A: 'a', B: null },
        init: false,
        overrideCommand: false,
        shutdownAction: 'none',
        updateRemoteUserUID: false,
        userEnvProbe: 'loginShell',
        waitFor: 'postCreateCommand',
      }),
    })
    expect(await addon.readDevcontainerConfig(proj)).toMatchObject({
      remoteEnv: { A: 'a' },
      remoteEnvUnset: ['B'],
      init: false,
      overrideCommand: false,
      shutdownAction: 'none',
      updateRemoteUserUID: false,
      userEnvProbe: 'loginShell',
      waitFor: 'postCreateCommand',
    })
    const bad = project({ '.devcontainer.json': JSON.stringify({ userEnvProbe: 'zsh' }) })
    expect((await rejection(addon.readDevcontainerConfig(bad))).code).toBe('DEVCONTAINER')
  })
})

describe('image metadata, users, container variables', () => {
  const config = {
    image: TOOL_IMAGE,
    containerEnv: { GONE: 'here' },
    remoteEnv: { PATH: '${containerEnv:PATH}:/opt/bin', GONE: null, EXTRA: 'x-${containerEnv:FROM_IMAGE}' },
    postCreateCommand: 'echo config-${containerEnv:FROM_IMAGE} >> /tmp/order && mytool >> /tmp/order',
    postAttachCommand: 'echo attached >> /tmp/attached',
  }

  it('the label sets remoteUser and runs its command first; remoteEnv extends PATH and unsets; the profile is probed', async () => {
    const proj = project({ '.devcontainer.json': JSON.stringify(config) })
    const id = session()
    const info = await workspaces.create({ projectDir: proj, sessionId: id })
    expect(info.state).toBe('running')
    expect(info.warnings).toEqual([])
    const env = await workspaces.environment(id, 't')
    const run = async (command: string) => {
      const r = await env.shell.execute(command, { toolRequestId: `r${++n}` })
      expect(r.exitCode, r.output.map((l) => l.text).join('\n')).toBe(0)
      return r.output.map((l) => l.text)
    }
    expect(await run('cat /tmp/order')).toEqual(['agent', 'image', 'config-yes', 'found-tool'])
    expect(await run('whoami; echo "$FROM_IMAGE $EXTRA ${GONE-unset} $PROBED_VAR"; mytool')).toEqual([
      'agent',
      'yes x-yes unset from-profile',
      'found-tool',
    ])
    // postAttachCommand: once per environment()
    expect(await run('cat /tmp/attached')).toEqual(['attached'])
    await workspaces.environment(id, 't2')
    expect(await run('cat /tmp/attached')).toEqual(['attached', 'attached'])
  })

  it('a uid-1000 remoteUser writes its clone; the project is untouched', async () => {
    const proj = project({ '.devcontainer.json': JSON.stringify({ image: TOOL_IMAGE }) })
    const before = readdirSync(proj).sort()
    const id = session()
    const info = await workspaces.create({ projectDir: proj, sessionId: id })
    const env = await workspaces.environment(id, 't')
    const r = await env.shell.execute(
      'id -u && echo work > new.txt && git add new.txt && git -c user.name=A -c user.email=a@b commit -qm work && git log --format=%s -1',
      { toolRequestId: 'w' },
    )
    expect(r.exitCode, r.output.map((l) => l.text).join('\n')).toBe(0)
    expect(r.output.map((l) => l.text)).toEqual(['1000', 'work'])
    expect(git(info.clonePath, 'log', '--format=%s', '-1')).toBe('work')
    expect(readdirSync(proj).sort()).toEqual(before)
    expect(statSync(proj).uid).toBe(process.getuid!())
    expect(statSync(join(proj, 'README.md')).uid).toBe(process.getuid!())
    expect(existsSync(join(proj, 'new.txt'))).toBe(false)
    await workspaces.destroy(id)
    expect(existsSync(info.clonePath)).toBe(false)
  })

  it('updateRemoteUserUID: false leaves the clone to the host user', async () => {
    const proj = project({ '.devcontainer.json': JSON.stringify({ image: TOOL_IMAGE, updateRemoteUserUID: false }) })
    const info = await workspaces.create({ projectDir: proj, sessionId: session() })
    expect(statSync(info.clonePath).uid).toBe(process.getuid!())
  })

  it('overrideCommand false runs the image command, init false drops the init, shutdownAction none outlives the idle stop', async () => {
    const idle = new addon.Workspaces({ baseDir: base.path, engine, idleTimeoutMs: 500 })
    const proj = project({
      '.devcontainer.json': JSON.stringify({ image: TOOL_IMAGE, overrideCommand: false, init: false, shutdownAction: 'none' }),
    })
    const id = session()
    const info = await idle.create({ projectDir: proj, sessionId: id })
    const inspected = JSON.parse(engineCli('inspect', '--format', '{{json .}}', info.containerId))
    expect(inspected.Config.Cmd).toEqual(['sleep', 'infinity'])
    expect(inspected.HostConfig.Init).toBe(false)
    await new Promise((r) => setTimeout(r, 3000))
    expect((await idle.get(id))?.state).toBe('running')
    await idle.destroy(id)
  })

  it('metadata asking privileged or capAdd is refused unless trusted, and leaves no container', async () => {
    const proj = project({ '.devcontainer.json': JSON.stringify({ image: PRIVILEGED_IMAGE }) })
    const id = session()
    const err = await rejection(workspaces.create({ projectDir: proj, sessionId: id }))
    expect(err.code).toBe('DEVCONTAINER')
    expect(err.message).toContain(`image ${PRIVILEGED_IMAGE} (label devcontainer.metadata)`)
    expect(err.message).toContain('image metadata[0].privileged: privileged mode; allow with trust.privileged: true')
    expect(err.message).toContain('image metadata[0].capAdd: capabilities SYS_PTRACE; allow with trust.capabilities: ["SYS_PTRACE"]')
    expect(await workspaces.get(id)).toBeUndefined()
    // This machine's engine cannot run privileged containers: the grant is shown with capAdd.
    const capProject = project({ '.devcontainer.json': JSON.stringify({ image: CAP_IMAGE }) })
    const capRefused = await rejection(workspaces.create({ projectDir: capProject, sessionId: session() }))
    expect(capRefused.code).toBe('DEVCONTAINER')
    const trusted = await workspaces.create({
      projectDir: capProject,
      sessionId: session(),
      trust: { capabilities: ['SYS_PTRACE'] },
    })
    const host = JSON.parse(engineCli('inspect', '--format', '{{json .HostConfig}}', trusted.containerId))
    expect(host.CapAdd).toEqual(['SYS_PTRACE'])
  })
})
