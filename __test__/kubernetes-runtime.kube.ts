// KubernetesRuntime (docs/contract.md §8) on the test cluster (vitest.kubernetes.config.ts):
// Lace's ContainerRuntime with each container a Pod, under the namespaced Role only; the
// Pod's boundary read back from the cluster and from inside; what a Pod cannot do refused by
// name; a Role without pods/exec named in the error; a dead host's 'process' Pods reaped.
import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import type { ClusterDescription } from '../scripts/kube-cluster.mjs'
import { KubernetesRuntime } from '../index.js'

const run = promisify(execFile)
const cluster: ClusterDescription = JSON.parse(readFileSync(process.env.TEST_KUBE_CLUSTER_JSON!, 'utf8'))
const kubernetes = { kubeconfig: cluster.kubeconfig.session, namespace: cluster.namespace }
const baseDir = mkdtempSync(join(tmpdir(), 'kube-runtime-'))
const image = 'container-isolation-test:debian'
const runtime = new KubernetesRuntime({ kubernetes, image, baseDir, pull: 'never' })
const made: string[] = []

async function kubectl(kubeconfig: string, args: string[], input?: string): Promise<string> {
  const child = run(cluster.kubectl, [`--kubeconfig=${kubeconfig}`, ...args], { timeout: 90_000, maxBuffer: 16 << 20 })
  if (input !== undefined) child.child.stdin!.end(input)
  return (await child).stdout
}

async function sandbox(extra: Record<string, unknown> = {}): Promise<string> {
  const id = await runtime.create({ id: 'kube', workingDirectory: '/', mounts: [], ...extra })
  made.push(id)
  return id
}

const sh = (id: string, script: string, extra: Record<string, unknown> = {}) =>
  runtime.exec(id, { command: ['sh', '-c', script], ...extra })

afterAll(async () => {
  await Promise.all(made.map((id) => runtime.remove(id).catch(() => {})))
})

describe('KubernetesRuntime', () => {
  it('creates a running sandbox Pod, execs with stdin, env and exit codes, and lists it', async () => {
    const id = await sandbox({ labels: { team: 'kube' } })
    expect(id).toMatch(/^kube-[0-9a-f]{8}$/)
    const info = await runtime.inspect(id)
    expect(info.state).toBe('running')
    expect(info.labels?.['dev.container-isolation.managed']).toBe('true')
    expect(info.labels?.team).toBe('kube')
    expect(await runtime.exec(id, { command: ['echo', 'hi'] })).toEqual({ stdout: 'hi\n', stderr: '', exitCode: 0 })
    expect((await sh(id, 'echo oops >&2; exit 3'))).toEqual({ stdout: '', stderr: 'oops\n', exitCode: 3 })
    expect((await runtime.exec(id, { command: ['cat'], stdin: 'through stdin' })).stdout).toBe('through stdin')
    const env = await sh(id, 'printf %s "$GREETING"', { environment: { GREETING: 'a b' } })
    expect(env.stdout).toBe('a b')
    const replaced = await runtime.exec(id, { command: ['/usr/bin/env'], environment: { ONLY: '1' }, environmentMode: 'replace' })
    expect(replaced.stdout.split('\n').filter((l) => l && !l.startsWith('CONTAINER_ISOLATION_EXEC='))).toEqual(['ONLY=1'])
    expect((await runtime.exec(id, { command: ['/no/such/program'] })).exitCode).not.toBe(0)
    const listed = await runtime.list()
    expect(listed.map((c) => c.id)).toContain(id)
    expect(runtime.translateToContainer('/workspace/a', id)).toBe('/workspace/a')
    expect(() => runtime.translateToHost('/x', 'never-made')).toThrow(expect.objectContaining({ code: 'CONTAINER_NOT_FOUND' }))
  })

  it('gives the Pod no token, no escalation, few capabilities and RuntimeDefault seccomp', async () => {
    const id = await sandbox()
    const pod = JSON.parse(await kubectl(cluster.kubeconfig.admin, ['-n', cluster.namespace, 'get', 'pod', id, '-o', 'json']))
    expect(pod.spec.automountServiceAccountToken).toBe(false)
    expect(pod.spec.enableServiceLinks).toBe(false)
    expect(pod.spec.securityContext.seccompProfile.type).toBe('RuntimeDefault')
    expect(pod.spec.containers[0].securityContext.allowPrivilegeEscalation).toBe(false)
    const inside = await sh(id, [
      'ls /var/run/secrets/kubernetes.io/serviceaccount 2>&1 || echo no-token',
      'grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status',
      'env | grep _SERVICE_HOST= | cut -d= -f1',
    ].join('; '))
    expect(inside.stdout).toContain('no-token')
    expect(inside.stdout).toMatch(/NoNewPrivs:\s+1/)
    expect(inside.stdout).toMatch(/Seccomp:\s+2/)
    const capEff = BigInt('0x' + /CapEff:\s+([0-9a-f]+)/.exec(inside.stdout)![1])
    const CAP_NET_RAW = 13n, CAP_SYS_ADMIN = 21n, CAP_CHOWN = 0n
    expect(capEff & (1n << CAP_NET_RAW)).toBe(0n)
    expect(capEff & (1n << CAP_SYS_ADMIN)).toBe(0n)
    expect(capEff & (1n << CAP_CHOWN)).not.toBe(0n)
    // No service links: the kubelet still names the API server's own service, nothing else.
    expect(inside.stdout.trim().split('\n').filter((l) => l.endsWith('_SERVICE_HOST'))).toEqual(['KUBERNETES_SERVICE_HOST'])
  })

  it('with network none reaches neither the API server nor a node', async () => {
    const id = await sandbox({ network: 'none' })
    const targets = [cluster.apiserverAddress, ...cluster.nodes.map((n) => n.address)]
    for (const address of targets) {
      const probe = await runtime.exec(id, {
        command: ['bash', '-c', 'timeout 3 bash -c "exec 3<>/dev/tcp/$1/$2" && echo reached || echo refused', 'probe', address, '6443'],
      })
      expect(probe.stdout.trim(), address).toBe('refused')
    }
    const policy = JSON.parse(await kubectl(cluster.kubeconfig.admin, ['-n', cluster.namespace, 'get', 'networkpolicy', 'container-isolation-deny-all', '-o', 'json']))
    expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress'])
  })

  it('a timeout kills the command inside the Pod and rejects TIMEOUT', async () => {
    const id = await sandbox()
    const started = Date.now()
    await expect(sh(id, 'sleep 300 & sleep 301', { timeout: 1000 })).rejects.toMatchObject({ code: 'TIMEOUT' })
    expect(Date.now() - started).toBeLessThan(4000)
    await expect.poll(async () => (await sh(id, 'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline 2>/dev/null; echo; done | grep -c "^sleep 30" || true')).stdout.trim(), { timeout: 5000 }).toBe('0')
  })

  it('runs a job: wait gives its exit code, logs its lines', async () => {
    const id = await sandbox({ command: ['sh', '-c', 'echo one; echo two >&2; exit 4'] })
    expect(await runtime.wait(id)).toBe(4)
    const lines: string[] = []
    await runtime.logs(id, { onLine: (line) => lines.push(line.text) })
    expect(lines.sort()).toEqual(['one', 'two'])
    expect((await runtime.inspect(id)).state).toBe('failed')
  })

  it('stops, starts again, removes', async () => {
    const id = await sandbox()
    await runtime.stop(id, 5000)
    const stopped = await runtime.inspect(id)
    expect(stopped.state).toBe('stopped')
    await expect(runtime.exec(id, { command: ['true'] })).rejects.toMatchObject({ code: 'CONTAINER_NOT_RUNNING' })
    await runtime.start(id)
    expect((await runtime.inspect(id)).state).toBe('running')
    expect((await runtime.exec(id, { command: ['true'] })).exitCode).toBe(0)
    await runtime.remove(id)
    await expect(runtime.inspect(id)).rejects.toMatchObject({ code: 'CONTAINER_NOT_FOUND' })
    expect(await runtime.daemonInspect(id)).toBeNull()
    expect((await runtime.list()).map((c) => c.id)).not.toContain(id)
  })

  it('refuses by name what a Pod cannot have, and an image the nodes lack', async () => {
    await expect(runtime.create({ workingDirectory: '/', mounts: [{ source: baseDir, target: '/workspace' }] }))
      .rejects.toMatchObject({ code: 'UNSUPPORTED', message: expect.stringContaining("mount of '/workspace'") })
    await expect(runtime.create({ workingDirectory: '/', mounts: [], resources: { pids: 64 } }))
      .rejects.toMatchObject({ code: 'UNSUPPORTED', message: expect.stringContaining('resources.pids') })
    await expect(runtime.create({ workingDirectory: '/', mounts: [], image: 'container-isolation-test:absent' }))
      .rejects.toMatchObject({ code: 'IMAGE_NOT_FOUND' })
    expect((await runtime.list()).filter((c) => c.image === 'container-isolation-test:absent')).toEqual([])
  })

  it('names the permission a Role without pods/exec lacks, before (check) and when used', async () => {
    const admin = cluster.kubeconfig.admin
    const ns = cluster.namespace
    const manifest = {
      apiVersion: 'v1', kind: 'List', items: [
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'no-exec', namespace: ns } },
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'no-exec', namespace: ns },
          rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch'] },
            { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'create', 'patch', 'delete'] }] },
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'no-exec', namespace: ns },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'no-exec' },
          subjects: [{ kind: 'ServiceAccount', name: 'no-exec', namespace: ns }] },
      ],
    }
    await kubectl(admin, ['apply', '-f', '-'], JSON.stringify(manifest))
    const token = (await kubectl(admin, ['-n', ns, 'create', 'token', 'no-exec', '--duration=1h'])).trim()
    const config = JSON.parse(await kubectl(cluster.kubeconfig.session, ['config', 'view', '--raw', '-o', 'json']))
    config.users = [{ name: 'no-exec', user: { token } }]
    config.contexts[0].context.user = 'no-exec'
    const path = join(baseDir, 'no-exec.kubeconfig')
    writeFileSync(path, JSON.stringify(config), { mode: 0o600 })
    const limited = new KubernetesRuntime({ kubernetes: { kubeconfig: path, namespace: ns }, image, baseDir, pull: 'never' })
    const check = await limited.check()
    expect(check.version).toBe(cluster.versions.kubernetes)
    expect(check.missing).toEqual(['create pods/exec', 'get pods/log', 'create pods/portforward', 'create networkpolicies', 'get networkpolicies'])
    expect(await runtime.check()).toEqual({ server: expect.stringContaining(cluster.apiserverAddress), version: cluster.versions.kubernetes, namespace: ns, missing: [], unseen: ['list nodes', 'list runtimeclasses'] })
    const id = await limited.create({ id: 'noexec', workingDirectory: '/', mounts: [] })
    made.push(id)
    await expect(limited.exec(id, { command: ['true'] }))
      .rejects.toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('create pods/exec') })
  })

  it("removes a SIGKILLed host's 'process' Pods once its Lease lapses", async () => {
    const script = `
      const { KubernetesRuntime } = require(${JSON.stringify(join(process.cwd(), 'index.js'))})
      const r = new KubernetesRuntime(${JSON.stringify({ kubernetes, image, baseDir, pull: 'never' })})
      r.create({ id: 'orphan', workingDirectory: '/', mounts: [], lifetime: 'process' })
        .then((id) => { process.stdout.write(id + '\\n') }, (e) => { console.error(e); process.exit(1) })
      setInterval(() => {}, 1000)`
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
    const id = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d) => resolve(String(d).trim()))
      child.on('exit', (code) => reject(new Error(`child exited ${code}`)))
    })
    expect((await runtime.inspect(id)).state).toBe('running')
    child.kill('SIGKILL')
    // The Lease lapses after its 30 s and 10 s of drift; any runtime's reaping deletes it,
    // and the garbage collector the Pod it owns.
    await expect.poll(async () => {
      await runtime.reapOrphans()
      return (await runtime.daemonInspect(id)) === null
    }, { timeout: 90_000, interval: 5_000 }).toBe(true)
  }, 120_000)
})
