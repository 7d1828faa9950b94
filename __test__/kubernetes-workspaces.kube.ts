// Workspaces on a Kubernetes cluster (docs/kubernetes.md): `new Workspaces({ engine: {
// kubernetes } })` — the session's clone on the host copied into its Pod, the environment's
// FileIO, Shell and git client through the Pod's agent, the work read back for `changes` and
// `export` and before `stop`, a stopped session started again from its clone (and an idle one
// by its next use), `destroy` leaving no Pod; what a cluster session cannot have yet refused by name.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import type { ClusterDescription } from '../scripts/kube-cluster.mjs'
import { KubernetesRuntime, reapOrphans, Workspaces } from '../lib/index.js'
import { git, project } from './kube-project'
import { closeServers, startServer, text } from './mcp-harness'

const cluster: ClusterDescription = JSON.parse(readFileSync(process.env.TEST_KUBE_CLUSTER_JSON!, 'utf8'))
const kubernetes = { kubeconfig: cluster.kubeconfig.session, namespace: cluster.namespace }
const baseDir = mkdtempSync(join(tmpdir(), 'kube-ws-'))
const logDir = mkdtempSync(join(tmpdir(), 'kube-ws-logs-'))
const image = 'container-isolation-test:debian'
const workspaces = new Workspaces({ baseDir, engine: { kubernetes }, image, pull: 'never' })
const runtime = new KubernetesRuntime({ kubernetes, baseDir: join(baseDir, 'kubernetes') })
const made: string[] = []
const CLI = join(__dirname, '..', 'bin', 'container-isolation.js')

async function create(sessionId: string, dir: string, extra: Record<string, unknown> = {}) {
  made.push(sessionId)
  return workspaces.create({ projectDir: dir, sessionId, devcontainer: false, ...extra })
}

afterAll(async () => {
  await Promise.all(made.map((id) => workspaces.destroy(id).catch(() => {})))
})

describe('Workspaces on Kubernetes', () => {
  it("a session: its clone in the Pod, Magenta's environment on it, its work read back, exported, kept across stop", async () => {
    const dir = project({ 'README.md': '# project\n', 'src/main.txt': 'main\n' })
    const info = await create('kube-one', dir, { env: { GREETING: 'hello' } })
    expect(info.state).toBe('running')
    expect(info.storage).toBe('pod')
    expect(info.containerId).toMatch(/^cis-kube-one-[0-9a-f]{8}$/)
    expect(info.containerMountPath).toBe('/workspace')

    const env = await workspaces.environment('kube-one', 't1', { logDir })
    expect(env.cwd).toBe('/workspace')
    expect(await env.fileIO.readFile('src/main.txt')).toBe('main\n')
    const branch = await env.shell.execute('git branch --show-current; echo "$GREETING"', { toolRequestId: 'r1' })
    expect(branch.output.map((l) => l.text)).toEqual(['session-kube-one', 'hello'])
    await env.fileIO.writeFile('added.txt', 'from the agent\n')
    await env.shell.execute('git -c user.name=a -c user.email=a@a commit -q -m agent --allow-empty && echo more >> README.md', { toolRequestId: 'r2' })
    const state = await env.gitClient.getState()
    expect(state?.branch).toBe('session-kube-one')
    expect(state?.headSubject).toBe('agent')

    const changes = await workspaces.changes('kube-one')
    expect(changes.commits.map((c) => c.summary)).toEqual(['agent'])
    expect(changes.uncommitted.map((f) => f.path).sort()).toEqual(['README.md', 'added.txt'])

    const exported = await workspaces.export('kube-one', { uncommitted: true })
    expect(exported.branch).toBe('session/kube-one')
    expect(git(dir, 'show', `${exported.commit}:added.txt`)).toBe('from the agent')
    expect(git(dir, 'fsck', '--strict')).toBe('')

    // Stop reads the work back; the next start gives the fresh Pod the clone again.
    await env.fileIO.writeFile('late.txt', 'before the stop\n')
    await workspaces.stop('kube-one')
    expect((await workspaces.get('kube-one'))?.state).toBe('stopped')
    const again = await workspaces.create({ projectDir: dir, sessionId: 'kube-one', devcontainer: false })
    expect(again.state).toBe('running')
    const after = await workspaces.environment('kube-one', 't2', { logDir })
    expect(await after.fileIO.readFile('late.txt')).toBe('before the stop\n')
    expect((await after.shell.execute('git log -1 --format=%s', { toolRequestId: 'r3' })).output[0].text).toBe('agent')

    // A terminal in the session's Pod, in its workspace folder.
    const terminal = await workspaces.terminal('kube-one', { cols: 90, rows: 20, command: ['bash', '--norc', '-i'] })
    let seen = ''
    terminal.onData((chunk) => (seen += chunk.toString('utf8')))
    await terminal.write('stty size; pwd; cat late.txt\n')
    await expect.poll(() => seen, { timeout: 10_000 }).toMatch(/20 90[\s\S]*\/workspace[\s\S]*before the stop/)
    await terminal.write('exit 5\n')
    expect(await terminal.wait()).toMatchObject({ exitCode: 5 })

    expect((await workspaces.list()).map((w) => w.sessionId)).toContain('kube-one')
    await workspaces.destroy('kube-one')
    expect(await workspaces.get('kube-one')).toBeUndefined()
    await expect(runtime.inspect(info.containerId)).rejects.toMatchObject({ code: 'CONTAINER_NOT_FOUND' })
  })

  it('what the session writes is hostile input: a symlink out of the workspace comes back as a link, nothing is written outside the clone', async () => {
    const dir = project()
    const info = await create('kube-hostile', dir, { egress: 'none' })
    const env = await workspaces.environment('kube-hostile', 't1', { logDir })
    const outside = join(baseDir, 'outside-canary')
    await env.shell.execute(`ln -s ${outside} escape && mkdir -p d && ln -s / d/root`, { toolRequestId: 'r1' })
    const changes = await workspaces.changes('kube-hostile')
    // An untracked folder is one entry, as git status shows it.
    expect(changes.uncommitted.map((f) => f.path).sort()).toEqual(['d/', 'escape'])
    expect(readlinkSync(join(info.clonePath, 'escape'))).toBe(outside)
    expect(readlinkSync(join(info.clonePath, 'd', 'root'))).toBe('/')
    expect(existsSync(outside)).toBe(false)
  })

  it('the CLI: up, exec, diff, export, ls, down and reap with --kubernetes', async () => {
    const dir = project()
    const cluster = ['--kubernetes', '--kubeconfig', kubernetes.kubeconfig, '--namespace', kubernetes.namespace, '--base-dir', baseDir]
    const cli = (command: string, ...args: string[]) => execFileSync(process.execPath, [CLI, command, ...cluster, ...args], { encoding: 'utf8' })
    made.push('kube-cli')
    expect(cli('up', dir, '--session', 'kube-cli', '--image', image, '--no-devcontainer')).toMatch(/^kube-cli: running, cis-kube-cli-[0-9a-f]{8} /)
    expect(cli('exec', 'kube-cli', '--', 'sh', '-c', 'echo made > made.txt && cat README.md')).toBe('# project\n')
    expect(cli('diff', 'kube-cli', '--stat')).toContain('made.txt')
    cli('export', 'kube-cli', '--uncommitted')
    expect(git(dir, 'show', 'session/kube-cli:made.txt')).toBe('made')
    expect(JSON.parse(cli('ls', '--json')).map((s: { sessionId: string }) => s.sessionId)).toContain('kube-cli')
    cli('down', 'kube-cli')
    expect(await workspaces.get('kube-cli')).toBeUndefined()
    expect(JSON.parse(cli('reap', '--dry-run', '--json'))).toMatchObject({ containersRemoved: [], clonesTrashed: [] })
  })

  it('the MCP server with --kubernetes: a session opened by a tool call, its files, commands and search in the Pod, exported, gone at the end', async () => {
    const dir = project({ 'README.md': '# project\n', 'src/app.txt': 'needle here\n' })
    const server = await startServer(dir, ['--kubernetes', '--kubeconfig', kubernetes.kubeconfig, '--namespace', kubernetes.namespace, '--image', image, '--auto-session'])
    expect((await server.call('write_file', { path: 'notes.txt', content: 'from mcp\n' })).isError).toBeFalsy()
    const ran = await server.call('run_command', { command: 'cat notes.txt && git branch --show-current' })
    expect(ran.structuredContent.output.map((l: { text: string }) => l.text)).toEqual(['from mcp', expect.stringMatching(/^session-/)])
    expect(text(await server.call('find_files', { pattern: '**/*.txt' }))).toContain('src/app.txt')
    expect(text(await server.call('search_text', { pattern: 'needle' }))).toContain('src/app.txt')
    expect(text(await server.call('session_changes', {}))).toContain('notes.txt')
    expect((await server.call('session_export', {})).isError).toBeFalsy()
    expect(git(dir, 'log', '--all', '--format=%s', '-1')).toContain('Uncommitted work of session')
    // A checkpoint of the repository only, as the tool's description says there.
    const tools = (await server.client.listTools()).tools
    expect(tools.find((t) => t.name === 'session_checkpoint')?.description).toContain('only that: these sessions run on a cluster')
    const made = await server.call('session_checkpoint', { label: 'notes' })
    expect(made.isError, text(made)).toBeFalsy()
    expect((await server.call('write_file', { path: 'later.txt', content: 'later\n' })).isError).toBeFalsy()
    const restored = await server.call('session_restore', { checkpoint: made.structuredContent.checkpoint.id })
    expect(restored.isError, text(restored)).toBeFalsy()
    expect((await server.call('read_file', { path: 'later.txt' })).isError).toBe(true)
    expect((await server.call('read_file', { path: 'notes.txt' })).structuredContent.content).toContain('from mcp')
    await closeServers()
    expect(await new Workspaces({ baseDir: server.base, engine: { kubernetes } }).list()).toEqual([])
  })

  it("reapOrphans with engine.kubernetes: a 'process' session of a SIGKILLed host loses its Pod, clone and record; another's stays", async () => {
    const dir = project()
    const base = mkdtempSync(join(tmpdir(), 'kube-reap-'))
    const lib = join(__dirname, '..', 'lib', 'index.js')
    // A host process that makes a 'process' session, says so, and waits to be killed.
    const script = `const { Workspaces } = require(${JSON.stringify(lib)})
      new Workspaces(${JSON.stringify({ baseDir: base, engine: { kubernetes }, image, pull: 'never' })})
        .create({ projectDir: ${JSON.stringify(dir)}, sessionId: 'kube-orphan', devcontainer: false, egress: 'none', lifetime: 'process' })
        .then((info) => { console.log(JSON.stringify(info)); setInterval(() => {}, 1000) }, (err) => { console.error(err); process.exit(1) })`
    const host = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
    const info = await new Promise<{ containerId: string; clonePath: string }>((resolve, reject) => {
      host.stdout.once('data', (d: Buffer) => resolve(JSON.parse(d.toString())))
      host.once('exit', (code) => reject(new Error(`the host exited ${code}`)))
    })
    const kept = new Workspaces({ baseDir: base, engine: { kubernetes }, image, pull: 'never' })
    made.push('kube-kept')
    await kept.create({ projectDir: project(), sessionId: 'kube-kept', devcontainer: false, lifetime: 'process' })
    host.kill('SIGKILL')
    await new Promise((resolve) => host.once('exit', resolve))

    const dry = await reapOrphans({ baseDir: base, engine: { kubernetes }, dryRun: true })
    expect(dry.containersRemoved).toEqual([info.containerId])
    expect(existsSync(info.clonePath)).toBe(true)
    const report = await reapOrphans({ baseDir: base, engine: { kubernetes } })
    expect(report.containersRemoved).toEqual([info.containerId])
    expect(report.clonesTrashed).toHaveLength(1)
    expect(report.kept).toEqual([expect.stringMatching(/^cis-kube-kept-/)])
    expect(existsSync(info.clonePath)).toBe(false)
    await expect(runtime.inspect(info.containerId)).rejects.toMatchObject({ code: 'CONTAINER_NOT_FOUND' })
    expect((await kept.list()).map((s) => s.sessionId)).toEqual(['kube-kept'])
    await kept.destroy('kube-kept')
  })

  it("the constructor's resources are a session's limits, under create's own field by field; the Pod gets them", async () => {
    const limited = new Workspaces({ baseDir, engine: { kubernetes }, image, pull: 'never', egress: 'none', resources: { memory: 256 * 1024 * 1024, cpus: 1 } })
    made.push('kube-limits')
    const info = await limited.create({ projectDir: project(), sessionId: 'kube-limits', devcontainer: false, resources: { cpus: 0.5 } })
    expect(info.resources).toEqual({ memory: 256 * 1024 * 1024, cpus: 0.5 })
    const limits = execFileSync(cluster.kubectl, ['--kubeconfig', cluster.kubeconfig.admin, '-n', cluster.namespace, 'get', 'pod', info.containerId,
      '-o', 'jsonpath={.spec.containers[0].resources.limits}'], { encoding: 'utf8' })
    expect(JSON.parse(limits)).toMatchObject({ memory: '268435456', cpu: '500m' })
    await expect(limited.create({ projectDir: project(), sessionId: 'kube-pids', devcontainer: false, resources: { pids: 64 } })).rejects.toMatchObject({ code: 'UNSUPPORTED', message: expect.stringContaining('resources.pids') })
    expect(await limited.get('kube-pids')).toBeUndefined()
  })

  it("onProgress tells create's steps; idleTimeoutMs: an unused session has its work read back and its Pod stopped, its next file read starts it again with that work", async () => {
    const events: { sessionId: string; phase: string; detail: string }[] = []
    const idle = new Workspaces({ baseDir, engine: { kubernetes }, image, pull: 'never', egress: 'none', idleTimeoutMs: 1500, onProgress: (e) => events.push(e) })
    made.push('kube-idle')
    const info = await idle.create({ projectDir: project(), sessionId: 'kube-idle', devcontainer: false })
    await sleep(100)
    expect(events.map((e) => [e.sessionId, e.phase, e.detail])).toEqual([
      ['kube-idle', 'create', `creating Pod ${info.containerId}`],
      ['kube-idle', 'create', 'copying the repository into the Pod'],
      ['kube-idle', 'create', `Pod ${info.containerId} ready`],
    ])
    const env = await idle.environment('kube-idle', 't1', { logDir })
    await env.fileIO.writeFile('kept.txt', 'before the idle stop\n')
    // A command in flight holds the session past the timeout: it ends as it would have.
    const held = await env.shell.execute('sleep 3; echo held', { toolRequestId: 'i1' })
    expect(held.output.map((l) => l.text)).toEqual(['held'])
    let state = 'running'
    for (const until = Date.now() + 60_000; state === 'running' && Date.now() < until; ) {
      await sleep(250)
      state = (await idle.get('kube-idle'))!.state
    }
    expect(state).not.toBe('running')
    expect((await idle.changes('kube-idle')).uncommitted.map((f) => f.path)).toEqual(['kept.txt'])
    expect(await env.fileIO.readFile('kept.txt')).toBe('before the idle stop\n')
    expect((await idle.get('kube-idle'))!.state).toBe('running')
    const again = await env.shell.execute('cat kept.txt', { toolRequestId: 'i2' })
    expect(again.output.map((l) => l.text)).toEqual(['before the idle stop'])
  })

  it('checkpoints of the repository: restore puts the clone back in a new Pod of the image, fork makes a second session from one', async () => {
    await create('kube-ckpt', project())
    const env = await workspaces.environment('kube-ckpt', 't1', { logDir })
    await env.fileIO.writeFile('kept.txt', 'kept\n')
    await env.shell.execute('git add kept.txt && touch /tmp/outside', { toolRequestId: 'c1' })
    const first = await workspaces.checkpoint('kube-ckpt', { label: 'one file' })
    expect(first).toMatchObject({ label: 'one file', branch: 'refs/heads/session-kube-ckpt' })
    expect(first.image).toBeUndefined()
    await env.fileIO.writeFile('later.txt', 'later\n')
    const restored = await workspaces.restore('kube-ckpt', first.id)
    expect(restored.state).toBe('running')
    const after = await workspaces.environment('kube-ckpt', 't2', { logDir })
    expect(await after.fileIO.readFile('kept.txt')).toBe('kept\n')
    expect(await after.fileIO.fileExists('later.txt')).toBe(false)
    // Staged as it was; what lay outside the workspace is the image's again.
    const status = await after.shell.execute('git status --porcelain; ls /tmp/outside 2>&1 || true', { toolRequestId: 'c2' })
    expect(status.output.map((l) => l.text)).toEqual(['A  kept.txt', expect.stringContaining('No such file')])

    made.push('kube-fork')
    const forked = await workspaces.fork('kube-ckpt', { sessionId: 'kube-fork', checkpoint: first.id })
    expect(forked.containerId).not.toBe(restored.containerId)
    const other = await workspaces.environment('kube-fork', 't3', { logDir })
    const seen = await other.shell.execute('git branch --show-current; cat kept.txt', { toolRequestId: 'c3' })
    expect(seen.output.map((l) => l.text)).toEqual(['session-kube-fork', 'kept'])
    expect((await workspaces.checkpoints('kube-ckpt')).map((c) => c.id)).toEqual([first.id])
    expect(await workspaces.deleteCheckpoint('kube-ckpt', first.id)).toBe(true)
    expect(await workspaces.checkpoints('kube-ckpt')).toEqual([])
  })

  it('a warm pool of Pods: a session of the same settings claims a ready Pod, relabelled as its own, and the pool refills', async () => {
    const poolBase = mkdtempSync(join(tmpdir(), 'kube-pool-'))
    const pooled = new Workspaces({ baseDir: poolBase, engine: { kubernetes }, image, pull: 'never', egress: 'none', pool: { size: 1 } })
    const pods = new KubernetesRuntime({ kubernetes, baseDir: join(poolBase, 'kubernetes') })
    const ids = ['kube-pool-a', 'kube-pool-b']
    try {
      expect(pooled.poolStatus()).toMatchObject({ size: 1, ready: 0 })
      const first = await pooled.create({ projectDir: project(), sessionId: ids[0], devcontainer: false })
      expect(first.containerId).toMatch(/^cis-kube-pool-a-/)
      expect(await pooled.poolReady()).toMatchObject({ ready: 1 })
      const events: string[] = []
      const dir = project({ 'README.md': 'second\n' })
      const second = await pooled.create({ projectDir: dir, sessionId: ids[1], devcontainer: false, onProgress: (e) => events.push(e.detail) })
      expect(second.containerId).toMatch(/^wp-/)
      await sleep(100)
      expect(events[0]).toBe(`claiming Pod ${second.containerId} from the warm pool`)
      const labels = (await pods.inspect(second.containerId)).labels ?? {}
      expect(labels['dev.container-isolation.lifetime']).toBe('session')
      expect(labels['dev.container-isolation.pool']).toBeUndefined()
      const env = await pooled.environment(ids[1], 't1', { logDir })
      expect(await env.fileIO.readFile('README.md')).toBe('second\n')
      await env.fileIO.writeFile('w.txt', 'claimed\n')
      expect((await pooled.changes(ids[1])).uncommitted.map((f) => f.path)).toEqual(['w.txt'])
      expect(await pooled.poolReady()).toMatchObject({ ready: 1 })
      // A session of other settings gets a Pod of its own.
      const other = await pooled.create({ projectDir: project(), sessionId: 'kube-pool-c', devcontainer: false, env: { OTHER: '1' } })
      ids.push('kube-pool-c')
      expect(other.containerId).toMatch(/^cis-kube-pool-c-/)
    } finally {
      await Promise.all(ids.map((id) => pooled.destroy(id).catch(() => {})))
    }
  })
})
