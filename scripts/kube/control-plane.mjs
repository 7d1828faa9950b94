// The test cluster's control plane on this machine: etcd on a loopback address of its own,
// kube-apiserver on the cluster's address (a port-less bridge only this machine and the
// nodes reach), kube-controller-manager and kube-scheduler serving no port. Each runs
// detached from the process that started it, its output in <dir>/<name>.log; the argv is
// kept so that a daemon can be restarted as it was.
import { spawn } from 'node:child_process'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { request } from 'node:https'
import { request as httpRequest } from 'node:http'
import { join } from 'node:path'
import { sleep, startTime } from './proc.mjs'

export const CONTROL_PLANE = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler']

/** Each daemon's argv (binary first) for the cluster `c` ({ dir, binDir, pkiDir, apiIp, etcdIp, serviceCidr }). */
export function controlPlaneArgs(c) {
  const pki = (f) => join(c.pkiDir, f)
  const etcdUrl = `http://${c.etcdIp}:2379`
  const peerUrl = `http://${c.etcdIp}:2380`
  const bin = (name) => join(c.binDir, name)
  return {
    etcd: [bin('etcd'), '--name=ci-kube', `--data-dir=${join(c.dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`, `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`, `--initial-advertise-peer-urls=${peerUrl}`, `--initial-cluster=ci-kube=${peerUrl}`,
      // A test cluster that is thrown away: no fsync on a disk shared with the other suites.
      '--unsafe-no-fsync', '--log-level=warn'],
    'kube-apiserver': [bin('kube-apiserver'), `--advertise-address=${c.apiIp}`, `--bind-address=${c.apiIp}`, '--secure-port=6443',
      `--etcd-servers=${etcdUrl}`,
      `--client-ca-file=${pki('ca.crt')}`, `--tls-cert-file=${pki('apiserver.crt')}`, `--tls-private-key-file=${pki('apiserver.key')}`,
      `--kubelet-client-certificate=${pki('apiserver-kubelet-client.crt')}`, `--kubelet-client-key=${pki('apiserver-kubelet-client.key')}`,
      `--kubelet-certificate-authority=${pki('ca.crt')}`, '--kubelet-preferred-address-types=InternalIP',
      '--authorization-mode=Node,RBAC', '--enable-admission-plugins=NodeRestriction',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki('sa.pub')}`, `--service-account-signing-key-file=${pki('sa.key')}`,
      `--service-cluster-ip-range=${c.serviceCidr}`, '--profiling=false', '--v=1'],
    'kube-controller-manager': [bin('kube-controller-manager'), `--kubeconfig=${join(c.dir, 'controller-manager.kubeconfig')}`,
      '--secure-port=0', '--leader-elect=false', '--use-service-account-credentials=true',
      `--service-account-private-key-file=${pki('sa.key')}`, `--root-ca-file=${pki('ca.crt')}`,
      `--service-cluster-ip-range=${c.serviceCidr}`, '--cluster-name=container-isolation-test', '--profiling=false', '--v=1'],
    'kube-scheduler': [bin('kube-scheduler'), `--kubeconfig=${join(c.dir, 'scheduler.kubeconfig')}`,
      '--secure-port=0', '--leader-elect=false', '--profiling=false', '--v=1'],
  }
}

/** Starts `argv` detached, output appended to <dir>/<name>.log; returns { pid, start }. */
export function spawnDaemon(dir, name, argv) {
  const log = openSync(join(dir, `${name}.log`), 'a')
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', log, log], detached: true })
  closeSync(log)
  child.unref()
  return { pid: child.pid, start: startTime(child.pid) }
}

function get(requester, url, opts, timeoutMs) {
  return new Promise((resolve) => {
    const req = requester(url, { ...opts, timeout: timeoutMs }, (res) => {
      let body = ''
      res.on('data', (d) => (body += d))
      res.on('end', () => resolve({ status: res.statusCode, body }))
    })
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve({ status: 0, body: '' }))
    req.end()
  })
}

/** Polls `probe` (resolving true when ready) until `timeoutMs`; fails naming `what`. */
async function until(what, timeoutMs, probe) {
  const deadline = Date.now() + timeoutMs
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what} was not ready within ${timeoutMs / 1000} s`)
    await sleep(200)
  }
}

export const waitEtcd = (c, timeoutMs) => until('etcd', timeoutMs, async () =>
  (await get(httpRequest, `http://${c.etcdIp}:2379/health`, {}, 1000)).status === 200)

/** The API server's /readyz as the admin sees it. */
export function apiserverReady(c, timeoutMs = 1000) {
  const tls = { ca: readFileSync(join(c.pkiDir, 'ca.crt')), cert: readFileSync(join(c.pkiDir, 'admin.crt')), key: readFileSync(join(c.pkiDir, 'admin.key')) }
  return get(request, `https://${c.apiIp}:6443/readyz`, tls, timeoutMs).then((r) => r.status === 200)
}

export const waitApiserver = (c, timeoutMs) => until('kube-apiserver', timeoutMs, () => apiserverReady(c))
