import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { addon, rejection, tempDir } from './helpers'

const dirs: Array<{ cleanup: () => void }> = []
afterAll(() => dirs.forEach((d) => d.cleanup()))
function project(files: Record<string, string>): string {
  const d = tempDir('dc')
  dirs.push(d)
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(d.path, name, '..'), { recursive: true })
    writeFileSync(join(d.path, name), text)
  }
  return d.path
}

describe('readDevcontainerConfig', () => {
  it('reads JSONC with comments and trailing commas, and substitutes variables', async () => {
    process.env.CI_TEST_GREETING = 'hello'
    const dir = project({
      '.devcontainer/devcontainer.json': `{
        // the image
        "image": "container-isolation-test:debian", /* inline */
        "containerEnv": {
          "GREETING": "\${localEnv:CI_TEST_GREETING}",
          "MISSING": "\${localEnv:CI_TEST_NOPE:fallback}",
          "WHERE": "\${containerWorkspaceFolder}/\${localWorkspaceFolderBasename}",
          "LATER": "\${containerEnv:PATH}",
          "ODD": "\${notAVariable}",
        },
        "postCreateCommand": ["touch", "/tmp/created"],
        "postStartCommand": { "a": "echo a", "b": ["echo", "b"], },
        "features": {},
        "forwardPorts": [3000],
      }`,
    })
    const config = (await addon.readDevcontainerConfig(dir))!
    expect(config.configPath).toBe(join(dir, '.devcontainer', 'devcontainer.json'))
    expect(config.image).toBe('container-isolation-test:debian')
    expect(config.containerEnv).toEqual({
      GREETING: 'hello',
      MISSING: 'fallback',
      WHERE: `/workspace/${dir.split('/').pop()}`,
      LATER: '${containerEnv:PATH}',
      ODD: '${notAVariable}',
    })
    expect(config.workspaceFolder).toBe('/workspace')
    expect(config.postCreateCommand).toEqual(['touch', '/tmp/created'])
    expect(config.postStartCommand).toEqual({ a: 'echo a', b: ['echo', 'b'] })
    expect(config.features).toEqual([])
    expect(config.ports).toEqual([{ containerPort: 3000, field: 'forwardPorts' }])
    expect(config.warnings).toEqual([])
  })

  it('looks in .devcontainer/, then .devcontainer.json, then one subfolder', async () => {
    expect(await addon.readDevcontainerConfig(project({ 'x.txt': '' }))).toBeUndefined()
    const root = project({ '.devcontainer.json': '{"name": "root"}' })
    expect((await addon.readDevcontainerConfig(root))?.name).toBe('root')
    const both = project({ '.devcontainer.json': '{"name": "root"}', '.devcontainer/devcontainer.json': '{"name": "dir"}' })
    expect((await addon.readDevcontainerConfig(both))?.name).toBe('dir')
    const one = project({ '.devcontainer/python/devcontainer.json': '{"name": "py"}' })
    expect((await addon.readDevcontainerConfig(one))?.name).toBe('py')
    const two = project({
      '.devcontainer/a/devcontainer.json': '{"name": "a"}',
      '.devcontainer/b/devcontainer.json': '{"name": "b"}',
    })
    expect(await addon.readDevcontainerConfig(two)).toBeUndefined()
  })

  it('resolves build paths against the config folder and parses mounts', async () => {
    const dir = project({
      '.devcontainer/devcontainer.json': `{
        "build": { "dockerfile": "Dockerfile", "context": "..", "args": { "V": "1" } },
        "mounts": ["type=bind,source=/tmp,target=/host-tmp,readonly", { "type": "volume", "source": "cache", "target": "/cache" }],
        "workspaceMount": "source=\${localWorkspaceFolder},target=/src,type=bind",
        "workspaceFolder": "/src",
        "runArgs": ["--memory=512m", "-e", "A=1", "--network", "none", "--init"],
        "postCreateCommand": { "install": "npm ci", "build": ["make", "all"] },
        "remoteUser": "agent"
      }`,
      '.devcontainer/Dockerfile': 'FROM container-isolation-test:debian\n',
    })
    const config = (await addon.readDevcontainerConfig(dir))!
    expect(config.build).toEqual({ dockerfile: join(dir, '.devcontainer', 'Dockerfile'), context: dir, args: { V: '1' } })
    expect(config.mounts).toEqual([
      { type: 'bind', source: '/tmp', target: '/host-tmp', readonly: true },
      { type: 'volume', source: 'cache', target: '/cache', readonly: false },
    ])
    expect(config.workspaceMount).toEqual({ type: 'bind', source: dir, target: '/src', readonly: false })
    expect(config.workspaceFolder).toBe('/src')
    expect(config.remoteUser).toBe('agent')
    expect(config.runArgs).toEqual(['--memory=512m', '-e', 'A=1', '--network', 'none', '--init'])
    expect(config.runOptions).toEqual({
      env: { A: '1' }, labels: {}, memory: 512 * 1024 * 1024, network: 'none',
      privileged: false, capAdd: [], capDrop: [], securityOpt: [], devices: [], namespaces: {}, mounts: [],
    })
    expect(config.postCreateCommand).toEqual({ install: 'npm ci', build: ['make', 'all'] })
    expect(config.warnings).toEqual([])
  })

  it('reads forwardPorts and appPort as ports; warns about every field the reference honours and this library does not, and unknown ones', async () => {
    const dir = project({
      '.devcontainer/devcontainer.json': `{
        "build": { "dockerfile": "Dockerfile", "options": ["--add-host=a:127.0.0.1"], "cacheFrom": ["cache:1"] },
        "forwardPorts": [3000, "db:5432"], "appPort": [8080], "portsAttributes": { "3000": { "label": "app" } },
        "otherPortsAttributes": { "onAutoForward": "silent" }, "hostRequirements": { "cpus": 2 },
        "postCreateComand": "typo", "customizations": { "vscode": { "extensions": [] } },
        "features": {}, "overrideCommand": false, "shutdownAction": "none", "init": true, "waitFor": "onCreateCommand",
        "userEnvProbe": "none", "updateRemoteUserUID": false, "overrideFeatureInstallOrder": [], "postAttachCommand": "true"
      }`,
    })
    const config = (await addon.readDevcontainerConfig(dir))!
    expect(config.hostRequirements).toEqual({ cpus: 2 })
    expect(config.ports).toEqual([
      { containerPort: 3000, field: 'forwardPorts' },
      { containerPort: 8080, hostPort: 8080, field: 'appPort' },
    ])
    expect(config.warnings).toEqual([
      'portsAttributes is not supported and was ignored: ports are forwarded without their attributes',
      'otherPortsAttributes is not supported and was ignored: ports are forwarded without their attributes',
      'build.options is not supported and was ignored: no extra docker build option is passed',
      "build.cacheFrom is not supported and was ignored: the build uses only the engine's own cache of this project's earlier builds",
      'postCreateComand is not a devcontainer.json property and was ignored',
      'forwardPorts entry "db:5432" was ignored: a port of another container (Docker Compose), which a session does not run',
    ])
  })

  it('reads a Docker Compose config with a warning (Workspaces.create refuses it)', async () => {
    const dir = project({
      '.devcontainer/devcontainer.json': `{
        "name": "compose", "dockerComposeFile": ["../docker-compose.yml", "docker-compose.extend.yml"],
        "service": "app", "runServices": ["app", "db"], "workspaceFolder": "/workspaces/\${localWorkspaceFolderBasename}"
      }`,
      '.devcontainer/docker-compose.extend.yml': 'services:\n  app:\n    image: x\n',
    })
    const config = (await addon.readDevcontainerConfig(dir))!
    expect(config).toMatchObject({
      name: 'compose',
      dockerComposeFile: ['../docker-compose.yml', 'docker-compose.extend.yml'],
      service: 'app',
      runServices: ['app', 'db'],
      workspaceFolder: `/workspaces/${dir.split('/').pop()}`,
    })
    expect(config.image).toBeUndefined()
    expect(config.warnings).toEqual([])
    const single = project({ '.devcontainer.json': '{ "dockerComposeFile": "compose.yml", "service": "s" }' })
    expect((await addon.readDevcontainerConfig(single))?.dockerComposeFile).toEqual(['compose.yml'])
  })

  it('reads --platform, --hostname and --workdir from runArgs', async () => {
    const dir = project({
      '.devcontainer.json': '{ "runArgs": ["--platform", "linux/arm64", "--hostname=box", "-w", "/src"] }',
    })
    const config = (await addon.readDevcontainerConfig(dir))!
    expect(config.runOptions).toMatchObject({ platform: 'linux/arm64', hostname: 'box', workdir: '/src' })
    const inline = project({ '.devcontainer.json': '{ "runArgs": ["--platform=linux/amd64"] }' })
    expect((await addon.readDevcontainerConfig(inline))?.runOptions.platform).toBe('linux/amd64')
  })

  it('rejects invalid files with DEVCONTAINER, the file, line and column', async () => {
    const dir = project({ '.devcontainer/devcontainer.json': '{\n  "image": "x",\n  "name": oops\n}' })
    const err = await rejection(addon.readDevcontainerConfig(dir))
    expect(err.code).toBe('DEVCONTAINER')
    expect(err.message).toBe(`${join(dir, '.devcontainer', 'devcontainer.json')}: line 3 column 11: expected value`)
  })

  it('rejects a missing project directory with ENOENT', async () => {
    expect((await rejection(addon.readDevcontainerConfig('/nonexistent/project'))).code).toBe('ENOENT')
  })

  it('reads what reaches the host without judging it (Workspaces does, under its trust)', async () => {
    const dir = project({
      '.devcontainer.json': `{
        "privileged": true, "capAdd": ["SYS_PTRACE"], "securityOpt": ["seccomp=unconfined"],
        "runArgs": ["--privileged", "--cap-add=SYS_ADMIN", "--device", "/dev/kvm", "--pid=host", "--network=host",
                    "-v", "/:/host:ro", "--mount", "type=tmpfs,target=/t", "--security-opt", "apparmor=unconfined"]
      }`,
    })
    const config = (await addon.readDevcontainerConfig(dir))!
    expect(config).toMatchObject({ privileged: true, capAdd: ['SYS_PTRACE'], securityOpt: ['seccomp=unconfined'] })
    expect(config.runOptions).toMatchObject({
      privileged: true, capAdd: ['SYS_ADMIN'], devices: ['/dev/kvm'], namespaces: { pid: 'host' }, network: 'host',
      securityOpt: ['apparmor=unconfined'],
      mounts: [
        { type: 'bind', source: '/', target: '/host', readonly: true },
        { type: 'tmpfs', source: '', target: '/t', readonly: false },
      ],
    })
  })

  it('refuses what it does not understand, and invalid lifecycle commands', async () => {
    const cases: Array<[string, string]> = [
      ['"runArgs": ["--env-file", "/etc/shadow"]', "runArgs '--env-file'"],
      ['"runArgs": ["--rm"]', "runArgs '--rm'"],
      ['"runArgs": ["-v", "./rel:/x"]', 'relative host path'],
      ['"mounts": ["type=volume,source=v,target=/v,volume-opt=device=/etc"]', 'volume-opt'],
      ['"postCreateCommand": 42', 'postCreateCommand'],
    ]
    for (const [bad, named] of cases) {
      const dir = project({ '.devcontainer.json': `{ ${bad} }` })
      const err = await rejection(addon.readDevcontainerConfig(dir))
      expect(err.code, bad).toBe('DEVCONTAINER')
      expect(err.message, bad).toContain(join(dir, '.devcontainer.json'))
      expect(err.message, bad).toContain(named)
    }
  })
})
