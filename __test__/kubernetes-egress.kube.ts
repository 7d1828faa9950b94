// Egress on a cluster (docs/kubernetes.md): a session Pod has no route out; its connections go
// through its relay (the agent's, on an exec stream of its own) to this host, where the policy
// decides as on the engines. The test internet is a network namespace on this machine
// (egress-net.ts, the Kubernetes pass's ranges); the canaries are this host's loopback and
// the cluster's API server.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ClusterDescription } from '../scripts/kube-cluster.mjs'
import { Workspaces } from '../lib/index.js'
import { KUBERNETES_NETS, startInternet, type Internet } from './egress-net'

const cluster: ClusterDescription = JSON.parse(readFileSync(process.env.TEST_KUBE_CLUSTER_JSON!, 'utf8'))
const kubernetes = { kubeconfig: cluster.kubeconfig.session, namespace: cluster.namespace }
const baseDir = mkdtempSync(join(tmpdir(), 'kube-egress-'))
const image = 'container-isolation-test:debian'
const hosts = { 'internet.test': [KUBERNETES_NETS.public.ns] }
const apiserver = new URL(cluster.server)
const CLI = join(__dirname, '..', 'bin', 'container-isolation.js')
let net: Internet
let n = 0

type Events = Array<{ host: string; allowed: boolean; reason: string }>
type Policy = Parameters<Workspaces['setEgress']>[1]

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kube-egress-project-'))
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'README.md'), '# project\n')
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir })
  git('init', '-q', '-b', 'main')
  git('add', '.')
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'first')
  return dir
}

const workspaces = new Workspaces({ baseDir, engine: { kubernetes }, image, pull: 'never' })

async function session(egress?: Policy): Promise<string> {
  const id = `kube-egress-${++n}`
  await workspaces.create({ projectDir: project(), sessionId: id, devcontainer: false, egress, lifetime: 'process' })
  return id
}

async function run(id: string, command: string): Promise<{ exitCode: number; text: string }> {
  const env = await workspaces.environment(id, 'egress')
  const r = await env.shell.execute(command, { toolRequestId: `t${++n}` })
  return { exitCode: r.exitCode, text: r.output.map((l) => l.text).join('\n') }
}

const curl = (id: string, args: string) => run(id, `curl -sS --max-time 20 ${args}`)

beforeAll(async () => {
  net = await startInternet(KUBERNETES_NETS)
})
afterAll(async () => {
  for (const ws of await workspaces.list()) await workspaces.destroy(ws.sessionId).catch(() => {})
  await net?.stop()
})

describe('egress of sessions on Kubernetes', () => {
  it('through the relay the Pod reaches what the policy allows, never this host, its loopback or the API server; without it, nothing', async () => {
    const events: Events = []
    const id = await session({ allow: ['*'], hosts, onEvent: (e) => events.push(e) })
    expect(await curl(id, 'http://internet.test/')).toEqual({ exitCode: 0, text: 'internet-ok' })
    expect(await curl(id, `-x socks5h://127.0.0.1:1080 http://internet.test/`)).toEqual({ exitCode: 0, text: 'internet-ok' })
    expect(events).toContainEqual(expect.objectContaining({ host: 'internet.test', allowed: true }))

    // No route but the relay: the same address asked for directly is unreachable.
    const direct = await curl(id, `--noproxy '*' --max-time 5 http://${KUBERNETES_NETS.public.ns}/`)
    expect(direct.exitCode).not.toBe(0)

    // This host's loopback (the relay runs here), and the API server even when its address is
    // allowed (an address entry opens a private range, never the cluster's control plane).
    const viaProxy = (url: string) => curl(id, `-i --noproxy '' -x http://127.0.0.1:3128 ${url}`)
    const loopback = await viaProxy(`http://127.0.0.1:${net.loopbackPort}/`)
    expect(loopback.text).toMatch(/403/)
    expect(loopback.text).toContain(`container-isolation: egress to 127.0.0.1:${net.loopbackPort} refused`)
    await workspaces.setEgress(id, { allow: ['*', `${apiserver.hostname}/32`], hosts, onEvent: (e) => events.push(e) })
    const control = await viaProxy(`http://${apiserver.host}/version`)
    expect(control.text).toMatch(/403/)
    expect(control.text).toContain(`container-isolation: egress to ${apiserver.host} refused`)
    expect(events).toContainEqual(expect.objectContaining({ host: apiserver.hostname, allowed: false, reason: expect.stringContaining("the cluster's API server") }))
    expect(net.canaryHits).toEqual([])
    const env = await workspaces.environment(id, 'egress')
    const token = await env.shell.execute('test -e /var/run/secrets/kubernetes.io/serviceaccount/token; echo $?', { toolRequestId: 'tok' })
    expect(token.output.map((l) => l.text)).toEqual(['1'])
  })

  it("setEgress takes effect at once; undecided hosts are asked of onRequest; 'none' refuses with a reason, 'bridge' is not offered", async () => {
    const asked: string[] = []
    const id = await session({
      allow: ['other.test'],
      hosts,
      onRequest: (req) => {
        asked.push(`${req.host}:${req.port}`)
        return req.host === 'internet.test'
      },
    })
    expect(await curl(id, 'http://internet.test/')).toEqual({ exitCode: 0, text: 'internet-ok' })
    expect(asked).toEqual(['internet.test:80'])

    await workspaces.setEgress(id, 'none')
    const refused = await curl(id, '-i http://internet.test/')
    expect(refused.text).toContain("the session's egress is 'none'")

    await workspaces.setEgress(id, { allow: ['internet.test'], hosts })
    expect(await curl(id, 'http://internet.test/')).toEqual({ exitCode: 0, text: 'internet-ok' })

    await expect(workspaces.setEgress(id, 'bridge')).rejects.toMatchObject({ code: 'UNSUPPORTED' })
    await expect(session('bridge')).rejects.toMatchObject({ code: 'UNSUPPORTED', message: expect.stringContaining("egress 'bridge'") })
  })

  it('a stopped session keeps its policy: the restarted Pod gets a new relay under it', async () => {
    const id = await session({ allow: ['internet.test'], hosts })
    await workspaces.stop(id)
    expect(await curl(id, 'http://internet.test/')).toEqual({ exitCode: 0, text: 'internet-ok' })
    const other = await curl(id, `-i http://${KUBERNETES_NETS.private.ns}/`)
    expect(other.text).toMatch(/403/)
  })

  it("the CLI, another process, attaches its own relay under the stored policy; this process's takes the Pod back at its next call", async () => {
    const id = await session({ allow: ['internet.test'], hosts })
    const cli = ['--kubernetes', '--kubeconfig', kubernetes.kubeconfig, '--namespace', kubernetes.namespace, '--base-dir', baseDir]
    const fetched = execFileSync(process.execPath, [CLI, 'exec', ...cli, id, '--', 'curl', '-sS', '--max-time', '20', 'http://internet.test/'], { encoding: 'utf8' })
    expect(fetched).toBe('internet-ok\n')
    expect(await curl(id, 'http://internet.test/')).toEqual({ exitCode: 0, text: 'internet-ok' })
  })

  it("forwardPort serves a Pod's port on this host through the relay (here the relay's own proxy), listed in ports, closed by stop", async () => {
    const id = await session({ allow: ['internet.test'], hosts })
    const forward = await workspaces.forwardPort(id, 3128)
    expect(forward.hostIp).toBe('127.0.0.1')
    expect((await workspaces.get(id))!.ports).toEqual([{ containerPort: 3128, hostIp: '127.0.0.1', hostPort: forward.hostPort }])
    expect(await throughProxy(forward.hostPort, 'http://internet.test/')).toBe('internet-ok\n')
    await workspaces.stop(id)
    await expect(throughProxy(forward.hostPort, 'http://internet.test/')).rejects.toThrow()
    expect((await workspaces.get(id))!.ports).toEqual([])
    await expect(workspaces.forwardPort(id, 0)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
  })
})

/** GET `url` through the HTTP proxy on this host's `port`. */
function throughProxy(port: number, url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: url, headers: { host: new URL(url).host } }, (res) => {
      let body = ''
      res.on('data', (d) => (body += d))
      res.on('end', () => resolve(body))
    })
      .on('error', reject)
      .end()
  })
}
