// An engine on "another machine" (the remote-engine rig, started by vitest.remote.config.ts):
// detected over TLS and ssh as not local, a wrong CA and a missing client certificate refused
// with codes, a Workspaces session over the pass's transport that leaves nothing on the rig,
// and DOCKER_HOST/DOCKER_TLS_VERIFY/DOCKER_CERT_PATH and a docker context reaching it from the CLI.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addon, engine, engineCli, gitProject, IMAGES, isRemote, rejection, remoteHost, tempDir } from './helpers'

const env = process.env
const tcpHost = env.TEST_ENGINE_TCP_HOST ?? ''
const sshHost = tcpHost.replace(/^tcp:\/\/([^:]+):\d+$/, 'ssh://root@$1')
const rigAddress = tcpHost.replace(/^tcp:\/\/([^:]+):\d+$/, '$1')
const tls = { ca: env.TEST_ENGINE_TLS_CA ?? '', cert: env.TEST_ENGINE_TLS_CERT ?? '', key: env.TEST_ENGINE_TLS_KEY ?? '' }
const ssh = { keyFile: env.TEST_ENGINE_SSH_KEY ?? '', knownHostsFile: env.TEST_ENGINE_SSH_KNOWN_HOSTS ?? '' }
const CLI = fileURLToPath(new URL('../bin/container-isolation.js', import.meta.url))

// Options the addon's EngineOptions gained for remote engines (tls, ssh), as plain objects.
type Remote = Parameters<typeof addon.detectEngine>[0] & Record<string, unknown>
const detect = (opts: Record<string, unknown>) => addon.detectEngine({ timeoutMs: 20_000, ...opts } as Remote)

describe.skipIf(!isRemote)('the remote engine', () => {
  it('answers detectEngine over TLS as not local', async () => {
    const info = await detect({ host: tcpHost, tls })
    expect(info).toMatchObject({ kind: 'docker', os: 'linux', local: false })
    expect(info.endpoint).toContain(rigAddress)
  })

  it('answers detectEngine over ssh as not local', async () => {
    const info = await detect({ host: sshHost, ssh })
    expect(info).toMatchObject({ kind: 'docker', os: 'linux', local: false })
  })

  it('refuses a server certificate from another CA with ENGINE_TLS', async () => {
    const wrongCa = tls.ca.replace(/client\/ca\.pem$/, 'wrong/ca.pem')
    const err = await rejection(detect({ host: tcpHost, tls: { ...tls, ca: wrongCa } }))
    expect(err.code).toBe('ENGINE_TLS')
  })

  it('fails with a code when no client certificate is given to a --tlsverify daemon', async () => {
    const err = await rejection(detect({ host: tcpHost, tls: { ca: tls.ca } }))
    expect(err.code).toMatch(/^ENGINE_(TLS|UNAVAILABLE)$/)
  })
})

describe.skipIf(!isRemote)(`a Workspaces session on the remote engine (${remoteHost?.split(':')[0]})`, () => {
  let base: ReturnType<typeof tempDir>
  let project: ReturnType<typeof gitProject>
  let workspaces: InstanceType<typeof addon.Workspaces>
  beforeAll(() => {
    base = tempDir('remote-ws')
    project = gitProject('remote-project', { 'src/a.txt': 'a\n' })
    workspaces = new addon.Workspaces({ baseDir: base.path, engine, image: IMAGES.debian })
  })
  afterAll(async () => {
    for (const ws of await workspaces.list()) await workspaces.destroy(ws.sessionId).catch(() => {})
    base.cleanup()
    project.cleanup()
  })

  it('creates, writes, reads, runs, commits in the container, reports changes; destroy leaves nothing', async () => {
    const id = `remote${process.pid}`
    const info = (await workspaces.create({ projectDir: project.path, sessionId: id })) as Awaited<
      ReturnType<typeof workspaces.create>
    > & { storage?: string; volume?: string }
    expect(info.state).toBe('running')
    expect(info.storage).toBe('volume')
    expect(info.volume).toBeTruthy()
    expect(engineCli('volume', 'ls', '-q').split('\n')).toContain(info.volume)

    const env = await workspaces.environment(id, 'thread-1')
    await env.fileIO.writeFile('src/b.txt', 'written remotely\n')
    expect(await env.fileIO.readFile('src/b.txt')).toBe('written remotely\n')
    expect(await env.fileIO.readFile('src/a.txt')).toBe('a\n')
    const r = await env.shell.execute(
      'cat src/b.txt && git add src/b.txt && git -c user.name=R -c user.email=r@e commit -qm "remote work" && git log --format=%s -1',
      { toolRequestId: 'commit-1' },
    )
    expect(r.exitCode).toBe(0)
    expect(r.output.map((l) => l.text)).toEqual(['written remotely', 'remote work'])
    await env.fileIO.writeFile('untracked.txt', 'u')

    const changes = await workspaces.changes(id)
    expect(changes.commits.map((c) => c.summary)).toEqual(['remote work'])
    expect(changes.files.map((f) => f.path)).toEqual(['src/b.txt'])
    expect(changes.uncommitted.map((f) => f.path)).toContain('untracked.txt')

    await workspaces.destroy(id)
    expect(engineCli('volume', 'ls', '-q').split('\n')).not.toContain(info.volume)
    expect(engineCli('ps', '-aq', '--no-trunc', '--filter', `name=${info.containerId}`)).toBe('')
  })
})

describe.skipIf(!isRemote)('DOCKER_HOST and docker contexts reach the rig', () => {
  const dirs: Array<{ cleanup: () => void }> = []
  afterAll(() => dirs.forEach((d) => d.cleanup()))

  /** `container-isolation doctor --json` in a child process with only `extra` to find engines by. */
  function doctor(extra: Record<string, string>) {
    const childEnv: Record<string, string> = {}
    for (const [k, v] of Object.entries(process.env)) {
      if (v !== undefined && !/^(DOCKER_|CONTAINER_HOST$|TEST_ENGINE_)/.test(k)) childEnv[k] = v
    }
    const r = spawnSync(process.execPath, [CLI, 'doctor', '--json'], { encoding: 'utf8', env: { ...childEnv, ...extra }, timeout: 60_000 })
    expect(r.status, r.stderr).toBe(0)
    const found = JSON.parse(r.stdout) as Array<{ kind: string; endpoint?: string; local?: boolean }>
    return found.find((f) => f.kind === 'docker')
  }

  it('DOCKER_HOST, DOCKER_TLS_VERIFY and DOCKER_CERT_PATH', () => {
    const certs = tempDir('remote-certs')
    dirs.push(certs)
    copyFileSync(tls.ca, join(certs.path, 'ca.pem'))
    copyFileSync(tls.cert, join(certs.path, 'cert.pem'))
    copyFileSync(tls.key, join(certs.path, 'key.pem'))
    const docker = doctor({ DOCKER_HOST: tcpHost, DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: certs.path })
    expect(docker?.endpoint).toContain(rigAddress)
  })

  it('a docker context named by DOCKER_CONTEXT, and as the config\'s currentContext', () => {
    const config = tempDir('remote-docker-config')
    dirs.push(config)
    const name = 'rig'
    const digest = createHash('sha256').update(name).digest('hex')
    const meta = join(config.path, 'contexts', 'meta', digest)
    const tlsDir = join(config.path, 'contexts', 'tls', digest, 'docker')
    mkdirSync(meta, { recursive: true })
    mkdirSync(tlsDir, { recursive: true })
    writeFileSync(join(meta, 'meta.json'), JSON.stringify({
      Name: name, Metadata: { Description: 'the remote-engine rig' },
      Endpoints: { docker: { Host: tcpHost, SkipTLSVerify: false } },
    }))
    copyFileSync(tls.ca, join(tlsDir, 'ca.pem'))
    copyFileSync(tls.cert, join(tlsDir, 'cert.pem'))
    copyFileSync(tls.key, join(tlsDir, 'key.pem'))
    // The docker CLI itself reads the context this way.
    const cli = spawnSync('docker', ['--context', name, 'info', '--format', '{{.ID}}'], {
      encoding: 'utf8', env: { PATH: process.env.PATH ?? '', DOCKER_CONFIG: config.path },
    })
    expect(cli.status, cli.stderr).toBe(0)
    expect(cli.stdout.trim()).toBe(engineCli('info', '--format', '{{.ID}}'))

    expect(doctor({ DOCKER_CONFIG: config.path, DOCKER_CONTEXT: name })?.endpoint).toContain(rigAddress)
    writeFileSync(join(config.path, 'config.json'), JSON.stringify({ currentContext: name }))
    expect(doctor({ DOCKER_CONFIG: config.path })?.endpoint).toContain(rigAddress)
  })
})
