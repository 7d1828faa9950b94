// KubernetesRuntime when the cluster fails under it (vitest.kubernetes.config.ts runs the
// kube files one at a time, since these stop parts of the shared cluster): the API server
// killed and started again mid-session, a node's kubelet stopped. Calls reject with a code
// within their bounds, then work again, and nothing of the session is lost.
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { KubeCluster, type ClusterDescription } from '../scripts/kube-cluster.mjs'
import { KubernetesRuntime } from '../index.js'

const run = promisify(execFile)
const description: ClusterDescription = JSON.parse(readFileSync(process.env.TEST_KUBE_CLUSTER_JSON!, 'utf8'))
const cluster = new KubeCluster({ name: description.name })
const kubernetes = { kubeconfig: description.kubeconfig.session, namespace: description.namespace }
const baseDir = mkdtempSync(join(tmpdir(), 'kube-faults-'))
const runtime = new KubernetesRuntime({ kubernetes, image: 'container-isolation-test:debian', baseDir, pull: 'never' })
const made: string[] = []

async function sandbox(): Promise<string> {
  const id = await runtime.create({ id: 'fault', workingDirectory: '/', mounts: [] })
  made.push(id)
  return id
}

async function nodeOf(id: string): Promise<string> {
  const { stdout } = await run(description.kubectl, [`--kubeconfig=${description.kubeconfig.admin}`, '-n', description.namespace,
    'get', 'pod', id, '-o', 'jsonpath={.spec.nodeName}'])
  return stdout.trim()
}

const sh = (id: string, script: string, timeout?: number) => runtime.exec(id, { command: ['sh', '-c', script], timeout })

afterAll(async () => {
  await Promise.all(made.map((id) => runtime.remove(id).catch(() => {})))
}, 120_000)

describe('KubernetesRuntime under faults', () => {
  it('rejects ENGINE_UNAVAILABLE while the API server is down, then goes on with nothing lost', async () => {
    const id = await sandbox()
    await sh(id, 'echo kept > /tmp/mark')
    const restart = cluster.restartApiserver({ downMs: 4000 })
    await new Promise((r) => setTimeout(r, 500))
    const started = Date.now()
    await expect(sh(id, 'true')).rejects.toMatchObject({ code: 'ENGINE_UNAVAILABLE' })
    expect(Date.now() - started).toBeLessThan(15_000)
    await restart
    await expect.poll(() => sh(id, 'cat /tmp/mark').then((r) => r.stdout, () => ''), { timeout: 30_000 }).toBe('kept\n')
    expect((await runtime.inspect(id)).state).toBe('running')
  }, 90_000)

  it("a stopped kubelet's sessions reject with a code in their time; the other node's go on", async () => {
    const ids = [await sandbox(), await sandbox()]
    const nodes = await Promise.all(ids.map(nodeOf))
    // The scheduler spreads Pods; place more until both nodes hold one (at most four).
    while (new Set(nodes).size < 2 && ids.length < 4) {
      const id = await sandbox()
      ids.push(id)
      nodes.push(await nodeOf(id))
    }
    expect(new Set(nodes).size, `Pods on ${nodes.join(', ')}`).toBe(2)
    const lost = nodes[0]
    const onLost = ids.filter((_, i) => nodes[i] === lost)
    const onOther = ids.filter((_, i) => nodes[i] !== lost)
    await cluster.stopKubelet(lost)
    try {
      for (const id of onLost) {
        const started = Date.now()
        await expect(sh(id, 'true', 5000)).rejects.toHaveProperty('code', expect.stringMatching(/^(ENGINE_UNAVAILABLE|TIMEOUT)$/))
        expect(Date.now() - started).toBeLessThan(8_000)
      }
      for (const id of onOther) expect((await sh(id, 'echo on')).stdout).toBe('on\n')
    } finally {
      cluster.startKubelet(lost)
    }
    await expect.poll(() => sh(onLost[0], 'echo back', 5000).then((r) => r.stdout, () => ''), { timeout: 60_000, interval: 1000 }).toBe('back\n')
  }, 150_000)
})
