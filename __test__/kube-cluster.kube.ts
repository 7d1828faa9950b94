// The test cluster itself (vitest.kubernetes.config.ts): two Ready nodes of the pinned
// version, the scheduler places pods on both, exec and port-forward reach them, pods have an
// interface that goes nowhere, and the session's service account holds the namespaced Role only.
import { execFile, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ClusterDescription } from '../scripts/kube-cluster.mjs'

const run = promisify(execFile)
const cluster: ClusterDescription = JSON.parse(readFileSync(process.env.TEST_KUBE_CLUSTER_JSON!, 'utf8'))
const session = cluster.kubeconfig.session
const admin = cluster.kubeconfig.admin

async function kubectl(kubeconfig: string, args: string[], input?: string): Promise<string> {
  const child = run(cluster.kubectl, [`--kubeconfig=${kubeconfig}`, ...args], { timeout: 90_000, maxBuffer: 16 << 20 })
  if (input !== undefined) child.child.stdin!.end(input)
  return (await child).stdout
}

/** The error kubectl fails with (its stderr), or undefined when it succeeds. */
const kubectlError = (kubeconfig: string, args: string[]) =>
  kubectl(kubeconfig, args).then(() => undefined, (err: { stderr?: string }) => err.stderr ?? String(err))

const ipv4 = (s: string) => s.split('.').reduce((n, o) => n * 256 + Number(o), 0)
const inSubnet = (address: string, cidr: string) => {
  const [base, bits] = cidr.split('/')
  const mask = 2 ** 32 - 2 ** (32 - Number(bits))
  return (ipv4(address) & mask) === (ipv4(base) & mask)
}

describe('the test cluster', () => {
  const pods = ['spread-0', 'spread-1']

  beforeAll(async () => {
    const manifest = (name: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { app: 'kube-cluster-spread' } },
      spec: {
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        terminationGracePeriodSeconds: 1,
        // One per node, wherever the scheduler puts them.
        affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [
          { labelSelector: { matchLabels: { app: 'kube-cluster-spread' } }, topologyKey: 'kubernetes.io/hostname' },
        ] } },
        containers: [{
          name: 'main', image: 'container-isolation-test:busybox', imagePullPolicy: 'Never',
          command: ['sh', '-c', 'trap "exit 0" TERM; while :; do sleep 1; done'],
        }],
      },
    })
    await kubectl(session, ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: pods.map(manifest) }))
    await kubectl(session, ['wait', '--for=condition=Ready', ...pods.map((p) => `pod/${p}`), '--timeout=90s'])
  })

  afterAll(async () => {
    await kubectl(session, ['delete', 'pod', ...pods, '--ignore-not-found', '--wait=true', '--timeout=60s'])
  })

  it('has two Ready nodes of the pinned version', async () => {
    const nodes = JSON.parse(await kubectl(admin, ['get', 'nodes', '-o', 'json'])).items
    expect(nodes.map((n: any) => n.metadata.name).sort()).toEqual(['kube-node-a', 'kube-node-b'])
    for (const node of nodes) {
      expect(node.status.conditions.find((c: any) => c.type === 'Ready').status).toBe('True')
      expect(node.status.nodeInfo.kubeletVersion).toBe(cluster.versions.kubernetes)
      expect(node.status.nodeInfo.containerRuntimeVersion).toMatch(/^containerd:\/\//)
    }
    const version = JSON.parse(await kubectl(session, ['version', '-o', 'json']))
    expect(version.serverVersion.gitVersion).toBe(cluster.versions.kubernetes)
  })

  it('places the pods on both nodes, and exec reaches each', async () => {
    const placed = JSON.parse(await kubectl(session, ['get', 'pods', '-l', 'app=kube-cluster-spread', '-o', 'json'])).items
    expect(placed.map((p: any) => p.spec.nodeName).sort()).toEqual(['kube-node-a', 'kube-node-b'])
    for (const pod of pods) {
      expect(await kubectl(session, ['exec', pod, '--', 'cat', '/etc/hostname'])).toBe(`${pod}\n`)
      expect(await kubectl(session, ['exec', '-i', pod, '--', 'sh', '-c', 'tr a-z A-Z'], 'through stdin\n')).toBe('THROUGH STDIN\n')
    }
  })

  it('forwards a port to a server on a pod\'s loopback', async () => {
    const pod = pods[0]
    await kubectl(session, ['exec', pod, '--', 'sh', '-c', 'mkdir -p /tmp/www && echo "served by $(hostname)" >/tmp/www/index.html && httpd -p 127.0.0.1:8080 -h /tmp/www'])
    const forward = spawn(cluster.kubectl, [`--kubeconfig=${session}`, 'port-forward', `pod/${pod}`, ':8080'], { stdio: ['ignore', 'pipe', 'pipe'] })
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let out = ''
        forward.stdout.on('data', (d: Buffer) => {
          out += d
          const m = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(out)
          if (m) resolve(Number(m[1]))
        })
        forward.on('exit', (code) => reject(new Error(`kubectl port-forward exited (${code}): ${out}`)))
      })
      const res = await fetch(`http://127.0.0.1:${port}/`)
      expect(await res.text()).toBe(`served by ${pod}\n`)
    } finally {
      forward.kill('SIGKILL')
    }
  })

  it('gives a pod one interface with an address from its node\'s subnet, and no route out', async () => {
    for (const pod of pods) {
      const status = JSON.parse(await kubectl(session, ['get', 'pod', pod, '-o', 'json']))
      const node = cluster.nodes.find((n) => n.name === status.spec.nodeName)!
      expect(inSubnet(status.status.podIP, node.podSubnet)).toBe(true)
      const routes = await kubectl(session, ['exec', pod, '--', 'cat', '/proc/net/route'])
      const destinations = routes.trim().split('\n').slice(1).map((l) => l.split(/\s+/).slice(0, 2))
      expect(destinations.every(([iface]) => iface === 'eth0')).toBe(true)
      expect(destinations.map(([, dest]) => dest)).not.toContain('00000000')
      const reach = await kubectl(session, ['exec', pod, '--', 'sh', '-c', `nc -w 2 ${cluster.apiserverAddress} 6443 </dev/null; echo "exit $?"`])
        .catch((err: { stdout?: string; stderr?: string }) => `${err.stdout}${err.stderr}`)
      expect(reach).toMatch(/unreachable|exit 1/i)
    }
  })

  it('lets the session service account do what the Role allows, and nothing beyond the namespace', async () => {
    const can = async (...args: string[]) => (await kubectl(session, ['auth', 'can-i', ...args]).catch(() => 'no\n')).trim()
    expect(await can('create', 'pods/exec')).toBe('yes')
    expect(await can('create', 'leases.coordination.k8s.io')).toBe('yes')
    expect(await can('create', 'networkpolicies.networking.k8s.io')).toBe('yes')
    expect(await can('get', 'secrets')).toBe('no')
    expect(await kubectlError(session, ['get', 'nodes'])).toMatch(/forbidden.*cannot list resource "nodes"/i)
    expect(await kubectlError(session, ['get', 'secrets'])).toMatch(/forbidden.*cannot list resource "secrets"/i)
    expect(await kubectlError(session, ['-n', 'kube-system', 'get', 'pods'])).toMatch(/forbidden.*cannot list resource "pods"/i)
    expect(await kubectlError(session, ['get', 'pods'])).toBeUndefined()
  })
})
