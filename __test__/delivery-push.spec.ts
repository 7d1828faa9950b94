// Delivery, sending work out: `Workspaces.push` from the host to a real git server (`git
// http-backend` behind HTTPS with basic auth; sshd with a key), and sessions created from
// `repository.url`. The credential is searched for everywhere the session or a log could
// hold it: the container's environment and whole file system, the clone, the library's
// state, the command logs, every error message and the server's request log. On the
// engine under test (TEST_ENGINE_SOCKET).
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bareRepository, HttpsGitServer, remoteRef, SshGitServer, startHttpsGitServer, startSshGitServer } from './git-servers'
import { addon, engine, engineCli, git, gitProject, IMAGES, rejection, tempDir } from './helpers'

const TOKEN = `tok-${process.pid}-${Math.random().toString(36).slice(2)}-secret`
const USER = 'pusher'
const base = tempDir('push-base')
const dirs: Array<{ cleanup: () => void }> = [base]
const workspaces = new addon.Workspaces({ baseDir: base.path, engine, image: IMAGES.debian })
let https: HttpsGitServer
let sshd: SshGitServer

beforeAll(async () => {
  https = await startHttpsGitServer(USER, TOKEN)
  sshd = startSshGitServer()
})
afterAll(async () => {
  for (const ws of await workspaces.list()) await workspaces.destroy(ws.sessionId).catch(() => {})
  await https?.stop()
  sshd?.stop()
  dirs.forEach((d) => d.cleanup())
})

let n = 0
const session = () => `pu${process.pid}x${++n}`
const credentials = { username: USER, password: TOKEN }

function project(): string {
  const d = gitProject('push-project', { 'a.txt': 'a\n' })
  dirs.push(d)
  return d.path
}

async function agent(id: string, script: string): Promise<void> {
  const env = await workspaces.environment(id, 'agent')
  const r = await env.shell.execute(`set -e; git config user.name Agent; git config user.email agent@example.com; ${script}`, { toolRequestId: `agent-${Date.now()}` })
  expect(r.exitCode, r.output.map((l) => l.text).join('\n')).toBe(0)
}

/** Every file under `dir` (not following symlinks) whose bytes hold `needle`. */
function filesHolding(dir: string, needle: string): string[] {
  const found: string[] = []
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name)
      const st = statSync(p, { throwIfNoEntry: false })
      if (!st) continue
      if (st.isDirectory()) walk(p)
      else if (st.isFile() && readFileSync(p).includes(needle)) found.push(p)
    }
  }
  if (existsSync(dir)) walk(dir)
  return found
}

/** Where the token must not be, for a session: its container (environment, processes, file system), its clone, the library's state, the command logs. */
async function expectNoToken(id: string): Promise<void> {
  const info = (await workspaces.get(id))!
  const env = await workspaces.environment(id, 'scan')
  const r = await env.shell.execute('env; cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr "\\0" "\\n"', { toolRequestId: `scan-${Date.now()}` })
  expect(r.output.map((l) => l.text).join('\n')).not.toContain(TOKEN)
  const tar = join(base.path, '..', `${id}-fs.tar`)
  engineCli('export', '-o', tar, info.containerId)
  const exported = readFileSync(tar)
  rmSync(tar)
  expect(exported.length).toBeGreaterThan(1 << 20)
  expect(exported.includes(TOKEN), 'the container file system').toBe(false)
  expect(filesHolding(base.path, TOKEN), 'the clone, records, trash, staging').toEqual([])
  expect(filesHolding(join(tmpdir(), 'container-isolation'), TOKEN), 'the command logs').toEqual([])
}

describe('Workspaces.push', () => {
  it('pushes the session’s HEAD over HTTPS with a token that reaches no container, file, log or message', async () => {
    const remote = bareRepository(https.root, 'pushed.git')
    const id = session()
    await workspaces.create({ projectDir: project(), sessionId: id })
    await agent(id, `echo feature > f.txt; git add f.txt; git commit -qm feature`)
    const info = (await workspaces.get(id))!
    const head = git(info.clonePath, 'rev-parse', 'HEAD')

    const wrong = await rejection(workspaces.push(id, { url: https.url('pushed.git'), branch: 'feature', credentials: { username: USER, password: `${TOKEN}-wrong` }, caCertificate: https.ca }))
    expect(wrong.code).toBe('GIT_AUTH')
    const none = await rejection(workspaces.push(id, { url: https.url('pushed.git'), branch: 'feature', caCertificate: https.ca }))
    expect(none.code).toBe('GIT_AUTH')
    const untrusted = await rejection(workspaces.push(id, { url: https.url('pushed.git'), branch: 'feature', credentials }))
    expect(untrusted.code).toBe('GIT')
    const cleartext = await rejection(workspaces.push(id, { url: 'http://git.example.invalid/x.git', credentials }))
    expect(cleartext.code).toBe('INVALID_ARGUMENT')
    for (const err of [wrong, none, untrusted, cleartext]) expect(`${err.message} ${err.stack}`).not.toContain(TOKEN)

    const pushed = await workspaces.push(id, { url: https.url('pushed.git'), branch: 'feature', credentials, caCertificate: https.ca })
    expect(pushed).toMatchObject({ branch: 'feature', reference: 'refs/heads/feature', commit: head, head })
    expect(remoteRef(remote, 'refs/heads/feature')).toBe(head)
    expect(git(remote, 'log', '--format=%s', 'feature')).toBe(git(info.clonePath, 'log', '--format=%s', 'HEAD'))
    git(remote, 'fsck', '--strict', '--no-dangling')

    expect(readFileSync(join(info.clonePath, '.git', 'config'), 'utf8')).not.toContain('127.0.0.1')
    const log = readFileSync(https.requestsLog, 'utf8')
    expect(log).not.toContain(TOKEN)
    expect(log).not.toContain(Buffer.from(`${USER}:${TOKEN}`).toString('base64'))
    await expectNoToken(id)
  })

  it('pushes a snapshot of uncommitted work; a non-fast-forward is GIT_PUSH_REJECTED until force', async () => {
    const remote = bareRepository(https.root, 'ff.git')
    const id = session()
    await workspaces.create({ projectDir: project(), sessionId: id })
    await agent(id, `echo one > one.txt; git add one.txt; git commit -qm one; echo wip > wip.txt`)
    const opts = { url: https.url('ff.git'), branch: 'work', credentials, caCertificate: https.ca }
    const first = await workspaces.push(id, { ...opts, uncommitted: true, message: 'wip' })
    expect(first.snapshot).toBe(first.commit)
    expect(git(remote, 'show', 'work:wip.txt')).toBe('wip')
    expect(git(remote, 'log', '-1', '--format=%s', 'work')).toBe('wip')
    // HEAD alone is behind the snapshot: not a fast-forward.
    const behind = await rejection(workspaces.push(id, opts))
    expect(behind.code).toBe('GIT_PUSH_REJECTED')
    expect(remoteRef(remote, 'refs/heads/work')).toBe(first.commit)
    const forced = await workspaces.push(id, { ...opts, force: true })
    expect(remoteRef(remote, 'refs/heads/work')).toBe(forced.head)
  })

  it('reads nothing of the clone’s config: its remotes, pushurl, insteadOf, credential helper, sshCommand and hooks go unused', async () => {
    const remote = bareRepository(https.root, 'target.git')
    const decoy = bareRepository(https.root, 'decoy.git')
    const id = session()
    const info = await workspaces.create({ projectDir: project(), sessionId: id })
    const canary = `/tmp/ci-canary-${id}`
    await agent(
      id,
      `echo x > x.txt; git add x.txt; git commit -qm x
       git remote set-url origin ${https.url('decoy.git')}; git config remote.origin.pushurl ${https.url('decoy.git')}
       git config url.${https.url('decoy.git')}.insteadOf ${https.url('target.git')}
       git config credential.helper '!touch ${canary}-helper; echo password=stolen'
       git config core.sshCommand 'touch ${canary}-ssh'
       printf '#!/bin/sh\\ntouch ${canary}-pre-push\\n' > .git/hooks/pre-push; chmod +x .git/hooks/pre-push`,
    )
    await workspaces.push(id, { url: https.url('target.git'), branch: 'main', credentials, caCertificate: https.ca })
    expect(remoteRef(remote, 'refs/heads/main')).toBe(git(info.clonePath, 'rev-parse', 'HEAD'))
    expect(remoteRef(decoy, 'refs/heads/main')).toBe('')
    const ssh = await workspaces.push(id, { url: sshd.url(remote), branch: 'over-ssh', credentials: { sshKeyFile: sshd.keyFile, sshKnownHostsFile: sshd.knownHosts } })
    expect(remoteRef(remote, 'refs/heads/over-ssh')).toBe(ssh.commit)
    expect(readdirSync('/tmp').filter((f) => f.startsWith(`ci-canary-${id}`))).toEqual([])
  })

  it('pushes over SSH with a key file, and with the key only in an SSH agent', async () => {
    const root = tempDir('ssh-remotes')
    dirs.push(root)
    const remote = bareRepository(root.path, 'ssh.git')
    const id = session()
    await workspaces.create({ projectDir: project(), sessionId: id })
    await agent(id, `echo s > s.txt; git add s.txt; git commit -qm s`)
    const url = sshd.url(remote)
    const byKey = await workspaces.push(id, { url, branch: 'by-key', credentials: { sshKeyFile: sshd.keyFile, sshKnownHostsFile: sshd.knownHosts } })
    expect(remoteRef(remote, 'refs/heads/by-key')).toBe(byKey.commit)
    const agentDir = tempDir('ssh-agent')
    dirs.push(agentDir)
    writeFileSync(join(agentDir.path, 'empty_known_hosts'), '')
    const unknownHost = await rejection(workspaces.push(id, { url, branch: 'x', credentials: { sshKeyFile: sshd.keyFile, sshKnownHostsFile: join(agentDir.path, 'empty_known_hosts') } }))
    expect(unknownHost.code).toBe('GIT')
    expect(unknownHost.message).toMatch(/host key/i)
    const socket = join(agentDir.path, 'agent.sock')
    const agentPid = execFileSync('sh', ['-c', 'ssh-agent -a "$1" | sed -n "s/SSH_AGENT_PID=\\([0-9]*\\).*/\\1/p"', 'sh', socket], { encoding: 'utf8' }).trim()
    const saved = process.env.SSH_AUTH_SOCK
    try {
      execFileSync('ssh-add', ['-q', sshd.keyFile], { env: { ...process.env, SSH_AUTH_SOCK: socket }, stdio: 'ignore' })
      process.env.SSH_AUTH_SOCK = socket
      const byAgent = await workspaces.push(id, { url, branch: 'by-agent', credentials: { sshKnownHostsFile: sshd.knownHosts } })
      expect(remoteRef(remote, 'refs/heads/by-agent')).toBe(byAgent.commit)
    } finally {
      if (saved === undefined) delete process.env.SSH_AUTH_SOCK
      else process.env.SSH_AUTH_SOCK = saved
      process.kill(Number(agentPid))
    }
  })
})

describe('Workspaces.create from a repository URL', () => {
  it('clones on the host with the token, at a ref, and the token is written nowhere', async () => {
    const remote = bareRepository(https.root, 'source.git')
    const seed = gitProject('push-seed', { 'src.txt': 'from the remote\n' })
    dirs.push(seed)
    git(seed.path, 'checkout', '-q', '-b', 'release')
    git(seed.path, 'commit', '-q', '--allow-empty', '-m', 'release commit')
    git(seed.path, 'push', '-q', remote, 'main', 'release')
    const repository = { url: https.url('source.git'), credentials, caCertificate: https.ca }

    const refused = session()
    const err = await rejection(workspaces.create({ sessionId: refused, repository: { ...repository, credentials: { username: USER, password: 'nope' } } }))
    expect(err.code).toBe('GIT_AUTH')
    expect(await workspaces.get(refused)).toBeUndefined()
    expect(existsSync(join(base.path, 'repositories', `session-${refused}`))).toBe(false)
    expect(engineCli('ps', '-aq', '--filter', `label=dev.container-isolation.session=${refused}`)).toBe('')

    const id = session()
    const info = await workspaces.create({ sessionId: id, repository, ref: 'release' })
    expect(info.repositoryUrl).toBe(https.url('source.git'))
    expect(info.baseCommit).toBe(remoteRef(remote, 'refs/heads/release'))
    expect(git(info.clonePath, 'log', '-1', '--format=%s')).toBe('release commit')
    expect(readFileSync(join(info.projectDir, '.git', 'config'), 'utf8')).not.toContain(TOKEN)
    await agent(id, `echo reply > reply.txt; git add reply.txt; git commit -qm reply`)
    const changes = await workspaces.changes(id)
    expect(changes.commits.map((c) => c.summary)).toEqual(['reply'])
    const pushed = await workspaces.push(id, { ...repository, branch: 'agent-reply' })
    expect(remoteRef(remote, 'refs/heads/agent-reply')).toBe(pushed.commit)
    await expectNoToken(id)
    await workspaces.destroy(id)
    expect(existsSync(info.projectDir)).toBe(false)
    expect(filesHolding(base.path, TOKEN)).toEqual([])
  })
})
