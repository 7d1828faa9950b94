// KubernetesRuntime against kubectl on the same two-node test cluster (scripts/kube-cluster.mjs,
// started here and removed after, or KUBE_CLUSTER=<name> of one already up), same image,
// namespace and service account, in one process; medians of BENCH_N (ready Pods: of
// KUBE_READY_N, default 5). Ours twice: through the Pod's session agent (the default) and by
// the plain exec (`agent: false`).
// - a ready Pod: create → exec('true') answered (with the agent: its delivery and start
//   too), against `kubectl run` + `kubectl wait --for=condition=Ready` + `kubectl exec -- true`
//   (removal not timed on either side);
// - exec('true'), a 1 KB read and a 100 MB read (`cat`; ours keeps the first 64 MiB of
//   the output, as every exec does, and reads the rest) against `kubectl exec` of the same;
// - `shell(id).execute('true')` (Magenta's Shell, agent only) against `kubectl exec -- bash -c true`;
// - a ready session (`Workspaces` on the cluster: create from a small git project → environment
//   → shell.execute('true'), the clone copied in), against the ready Pod of kubectl above, and
//   `changes()` of that session (its workspace read back) against `kubectl exec -- tar -c`;
// - the same ready session from a warm pool (`pool: { size: 1 }`, the pool full before each
//   timed create: a ready member claimed, relabelled, given the clone).
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { median, run, table, time } from './common.mjs'
import { KubeCluster } from '../scripts/kube-cluster.mjs'

const require = createRequire(import.meta.url)
const { KubernetesRuntime, Workspaces } = require('../lib/index.js')
const image = process.env.IMAGE ?? 'container-isolation-test:debian'
const readyN = Number(process.env.KUBE_READY_N ?? 5)
const BIG_MB = 100

const reused = process.env.KUBE_CLUSTER
const cluster = new KubeCluster({ name: reused ?? `b${randomBytes(3).toString('hex')}`, owner: process.pid })
const d = reused ? cluster.description() : await cluster.up()
try {
  const ns = d.namespace
  const kubectl = (...args) => run(d.kubectl, [`--kubeconfig=${d.kubeconfig.session}`, '-n', ns, ...args], { maxBuffer: 256 << 20 })
  const options = (agent) => ({
    kubernetes: { kubeconfig: d.kubeconfig.session, namespace: ns },
    image,
    baseDir: mkdtempSync(join(tmpdir(), 'kube-bench-')),
    pull: 'never',
    agent,
  })
  const agent = new KubernetesRuntime(options(true))
  const plain = new KubernetesRuntime(options(false))

  // Each side's Pods are removed after its timed runs, outside the timing.
  let n = 0
  const ready = async (runtime) => {
    const made = []
    const ms = await time(async () => {
      const id = await runtime.create({ id: `ours${n++}`, workingDirectory: '/', mounts: [] })
      await runtime.exec(id, { command: ['true'] })
      made.push(id)
    }, readyN)
    await Promise.all(made.map((id) => runtime.remove(id)))
    return ms
  }
  const readyAgent = await ready(agent)
  const readyPlain = await ready(plain)
  const theirs = []
  const readyKubectl = await time(async () => {
    const name = `kubectl${n++}`
    await kubectl('run', name, `--image=${image}`, '--image-pull-policy=Never', '--restart=Never', '--', 'sleep', 'infinity')
    await kubectl('wait', '--for=condition=Ready', `pod/${name}`, '--timeout=120s')
    await kubectl('exec', name, '--', 'true')
    theirs.push(name)
  }, readyN)
  await kubectl('delete', 'pod', ...theirs, '--grace-period=0', '--force', '--wait=true')

  const id = await agent.create({ id: 'bench', workingDirectory: '/', mounts: [] })
  await agent.exec(id, { command: ['sh', '-c', `head -c 1024 /dev/urandom > /tmp/1k; head -c ${BIG_MB}M /dev/zero > /tmp/big`] })
  const rows = []
  for (const [name, command, n] of [
    ["exec('true')", ['true'], undefined],
    ['1 KB read (cat)', ['cat', '/tmp/1k'], undefined],
    [`${BIG_MB} MB read (cat)`, ['cat', '/tmp/big'], 5],
  ]) {
    const kubectlMs = await time(() => kubectl('exec', id, '--', ...command), n)
    const agentMs = await time(() => agent.exec(id, { command }), n)
    const plainMs = await time(() => plain.exec(id, { command }), n)
    rows.push([name, kubectlMs, agentMs, plainMs])
  }
  // Magenta's Shell on the Pod (agent only): a command under bash -c, its log written.
  const shell = agent.shell(id, { cwd: '/', threadId: 'bench', logDir: mkdtempSync(join(tmpdir(), 'kube-bench-logs-')) })
  let call = 0
  const shellKubectl = await time(() => kubectl('exec', id, '--', 'bash', '-c', 'true'))
  const shellMs = await time(() => shell.execute('true', { toolRequestId: `t${call++}` }))
  rows.push(["shell.execute('true')", shellKubectl, shellMs, undefined])
  await agent.remove(id)

  // Sessions: a small project (a few files, one commit), each create a new session.
  const project = mkdtempSync(join(tmpdir(), 'kube-bench-project-'))
  writeFileSync(join(project, 'README.md'), '# bench\n')
  writeFileSync(join(project, 'main.js'), 'console.log(1)\n')
  const git = (...args) => execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@b', ...args], { cwd: project })
  git('init', '-q', '-b', 'main')
  git('add', '.')
  git('commit', '-q', '-m', 'bench')
  const { kubernetes, baseDir } = options(true)
  const workspaces = new Workspaces({ engine: { kubernetes }, baseDir, image, pull: 'never' })
  const sessions = []
  const readySession = await time(async () => {
    const sessionId = `bench${n++}`
    await workspaces.create({ projectDir: project, sessionId, devcontainer: false })
    const env = await workspaces.environment(sessionId, 'bench')
    await env.shell.execute('true', { toolRequestId: 'ready' })
    sessions.push(sessionId)
  }, readyN)
  const podOf = (await workspaces.get(sessions[0])).containerId
  const readBackKubectl = await time(() => kubectl('exec', podOf, '--', 'tar', '-c', '-f', '-', '-C', '/', 'workspace'))
  const readBack = await time(() => workspaces.changes(sessions[0]))
  for (const sessionId of sessions) await workspaces.destroy(sessionId)

  const pooled = new Workspaces({ engine: { kubernetes }, baseDir: options(true).baseDir, image, pull: 'never', pool: { size: 1 } })
  const warmMs = []
  await pooled.create({ projectDir: project, sessionId: 'warmup', devcontainer: false })
  sessions.length = 0
  sessions.push('warmup')
  for (let i = 0; i < readyN; i++) {
    await pooled.poolReady()
    const sessionId = `warm${n++}`
    const started = performance.now()
    const info = await pooled.create({ projectDir: project, sessionId, devcontainer: false })
    const env = await pooled.environment(sessionId, 'bench')
    await env.shell.execute('true', { toolRequestId: 'ready' })
    warmMs.push(performance.now() - started)
    if (!info.containerId.startsWith('wp-')) throw new Error(`session ${sessionId} got no pool member`)
    sessions.push(sessionId)
  }
  for (const sessionId of sessions) await pooled.destroy(sessionId)

  const show = (column, label) =>
    table(`Kubernetes ${d.versions.kubernetes}, two nodes, ${image} (ms, medians): ${label}`, [
      ['ready Pod (create → exec true)', readyKubectl, column === 2 ? readyAgent : readyPlain],
      ...rows.filter((r) => r[column] !== undefined).map((r) => [r[0], r[1], r[column]]),
    ], ['kubectl', 'ours'])
  table(`Kubernetes ${d.versions.kubernetes}: Workspaces sessions (ms, medians)`, [
    ['ready session (create → environment → execute true)', readyKubectl, readySession],
    ['ready session from a warm pool', readyKubectl, median(warmMs)],
    ['changes() (workspace read back) vs kubectl exec tar -c', readBackKubectl, readBack],
  ], ['kubectl', 'ours'])
  show(2, 'through the session agent')
  show(3, 'plain exec (agent: false)')
  const big = rows[2]
  console.log(`${BIG_MB} MB read: kubectl ${(BIG_MB / big[1] * 1000).toFixed(0)} MB/s, agent ${(BIG_MB / big[2] * 1000).toFixed(0)} MB/s, plain ${(BIG_MB / big[3] * 1000).toFixed(0)} MB/s`)
} finally {
  if (!reused) await cluster.down()
}
