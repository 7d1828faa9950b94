// What a host and `doctor --kubernetes` learn of the test cluster (vitest.kubernetes.config.ts):
// nodes and RuntimeClasses where the credentials may list them (the admin's, not the Role's),
// and the NetworkPolicy verdict measured with two probe Pods, which leave nothing behind.
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import type { ClusterDescription } from '../scripts/kube-cluster.mjs'
import { KubernetesRuntime } from '../index.js'

const run = promisify(execFile)
const cluster: ClusterDescription = JSON.parse(readFileSync(process.env.TEST_KUBE_CLUSTER_JSON!, 'utf8'))
const namespace = cluster.namespace
const baseDir = mkdtempSync(join(tmpdir(), 'kube-doctor-'))
const image = 'container-isolation-test:debian'
const CLI = join(__dirname, '..', 'bin', 'container-isolation.js')

async function podNames(): Promise<string[]> {
  const { stdout } = await run(cluster.kubectl, [`--kubeconfig=${cluster.kubeconfig.admin}`, '-n', namespace, 'get', 'pods', '-o', 'json'])
  return JSON.parse(stdout).items.map((p: { metadata: { name: string } }) => p.metadata.name)
}

describe('KubernetesRuntime.check() and doctor --kubernetes', () => {
  it('with the admin credentials lists both Ready nodes of the pinned version and the RuntimeClasses', async () => {
    const admin = new KubernetesRuntime({ kubernetes: { kubeconfig: cluster.kubeconfig.admin, namespace }, image, baseDir, pull: 'never' })
    const check = await admin.check()
    expect(check.unseen).toEqual([])
    expect(check.nodes?.map((n) => n.name).sort()).toEqual(cluster.nodes.map((n) => n.name).sort())
    for (const node of check.nodes!) {
      expect(node).toMatchObject({ version: cluster.versions.kubernetes, ready: true, runtime: expect.stringMatching(/^containerd:\/\//) })
    }
    expect(check.runtimeClasses).toEqual([])
    expect(check.networkPolicy).toBeUndefined()
  })

  it('measures the NetworkPolicy with two probe Pods and removes them: here no Pod reaches the API server Service, so the verdict is unknown', async () => {
    const runtime = new KubernetesRuntime({ kubernetes: { kubeconfig: cluster.kubeconfig.session, namespace }, image, baseDir, pull: 'never' })
    const check = await runtime.check({ networkPolicy: true })
    expect(check.networkPolicy).toEqual({ verdict: 'unknown', detail: expect.stringContaining('without the policy could not reach') })
    expect((await podNames()).filter((n) => n.startsWith('container-isolation-probe-'))).toEqual([])
    // An image the probe cannot run in (no /bin/sh: its container fails to start, exit 128)
    // says so instead of a verdict.
    const shellless = await runtime.check({ networkPolicy: true, image: 'container-isolation-test:noshell' })
    expect(shellless.networkPolicy).toEqual({ verdict: 'unknown', detail: expect.stringContaining('could not run in the image') })
    expect((await podNames()).filter((n) => n.startsWith('container-isolation-probe-'))).toEqual([])
  })

  it('doctor --kubernetes prints the cluster and exits 0 with the Role; commands a cluster session lacks refuse the Kubernetes options', async () => {
    const args = [CLI, 'doctor', '--kubernetes', '--kubeconfig', cluster.kubeconfig.session, '--namespace', namespace, '--base-dir', baseDir]
    const { stdout } = await run(process.execPath, args)
    expect(stdout).toContain(`namespace ${namespace}`)
    expect(stdout).toContain(cluster.versions.kubernetes)
    expect(stdout).toContain('permissions: all the library uses are granted')
    expect(stdout).toContain('not visible to these credentials: list nodes, list runtimeclasses')
    const json = JSON.parse((await run(process.execPath, [...args, '--json'])).stdout)
    expect(json).toMatchObject({ namespace, missing: [], unseen: ['list nodes', 'list runtimeclasses'] })
    const refused = await run(process.execPath, [CLI, 'prune', '--kubernetes']).catch((e) => e)
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('prune is not available for sessions on Kubernetes yet')
    const both = await run(process.execPath, [CLI, 'ls', '--kubernetes', '--host', 'tcp://127.0.0.1:1']).catch((e) => e)
    expect(both.code).toBe(2)
    expect(both.stderr).toContain('not both')
  })
})
