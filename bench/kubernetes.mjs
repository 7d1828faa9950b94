// KubernetesRuntime against kubectl on the same two-node test cluster (scripts/kube-cluster.mjs,
// started here and removed after), same image, same namespace, same service account, in one
// process; medians of BENCH_N (ready Pods: of KUBE_READY_N, default 5).
// - a ready Pod: create → exec('true') answered, against `kubectl run` + `kubectl wait
//   --for=condition=Ready` + `kubectl exec -- true` (removal not timed on either side);
// - exec('true') and a 1 KB read (`cat`) against `kubectl exec` of the same.
import { randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { run, table, time } from './common.mjs'
import { KubeCluster } from '../scripts/kube-cluster.mjs'

const require = createRequire(import.meta.url)
const { KubernetesRuntime } = require('../lib/index.js')
const image = process.env.IMAGE ?? 'container-isolation-test:debian'
const readyN = Number(process.env.KUBE_READY_N ?? 5)

const cluster = new KubeCluster({ name: `b${randomBytes(3).toString("hex")}`, owner: process.pid })
const d = await cluster.up()
try {
  const ns = d.namespace
  const kubectl = (...args) => run(d.kubectl, [`--kubeconfig=${d.kubeconfig.session}`, '-n', ns, ...args], { maxBuffer: 64 << 20 })
  const runtime = new KubernetesRuntime({
    kubernetes: { kubeconfig: d.kubeconfig.session, namespace: ns },
    image,
    baseDir: mkdtempSync(join(tmpdir(), 'kube-bench-')),
    pull: 'never',
  })

  // Each side's Pods are removed after its timed runs, outside the timing.
  let n = 0
  const ours = []
  const readyOurs = await time(async () => {
    const id = await runtime.create({ id: `ours${n++}`, workingDirectory: '/', mounts: [] })
    await runtime.exec(id, { command: ['true'] })
    ours.push(id)
  }, readyN)
  await Promise.all(ours.map((id) => runtime.remove(id)))
  const theirs = []
  const readyKubectl = await time(async () => {
    const name = `kubectl${n++}`
    await kubectl('run', name, `--image=${image}`, '--image-pull-policy=Never', '--restart=Never', '--', 'sleep', 'infinity')
    await kubectl('wait', '--for=condition=Ready', `pod/${name}`, '--timeout=120s')
    await kubectl('exec', name, '--', 'true')
    theirs.push(name)
  }, readyN)
  await kubectl('delete', 'pod', ...theirs, '--grace-period=0', '--force', '--wait=true')

  const id = await runtime.create({ id: 'bench', workingDirectory: '/', mounts: [] })
  await runtime.exec(id, { command: ['sh', '-c', 'head -c 1024 /dev/urandom > /tmp/1k'] })
  const execOurs = await time(() => runtime.exec(id, { command: ['true'] }))
  const execKubectl = await time(() => kubectl('exec', id, '--', 'true'))
  const readOurs = await time(() => runtime.exec(id, { command: ['cat', '/tmp/1k'] }))
  const readKubectl = await time(() => kubectl('exec', id, '--', 'cat', '/tmp/1k'))
  await runtime.remove(id)

  table(`Kubernetes ${d.versions.kubernetes}, two nodes, ${image} (ms, medians)`, [
    ['ready Pod (create → exec true)', readyKubectl, readyOurs],
    ["exec('true')", execKubectl, execOurs],
    ['1 KB read (cat)', readKubectl, readOurs],
  ], ['kubectl', 'ours'])
} finally {
  await cluster.down()
}
