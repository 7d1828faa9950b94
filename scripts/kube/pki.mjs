// The test cluster's certificates and kubeconfigs, made with openssl: one CA signs every
// serving and client certificate (ECDSA P-256, quick to make); the service-account key pair
// signs the API server's tokens. Files only, in the cluster's `pki` directory.
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'

const DAYS = '30'
/** A random serial: the certificates are signed at once, so no shared serial file. */
const serial = () => `0x${randomBytes(16).toString('hex')}`

const run = promisify(execFile)
const openssl = (cwd, ...args) => run('openssl', args, { cwd })

/**
 * A leaf certificate signed by the CA: `name`.crt/.key in `dir`. `subject` is an openssl
 * subject (`/O=group/CN=user`); `san` lists `IP:…`/`DNS:…` entries for serving certificates.
 */
async function leaf(dir, name, subject, usage, san = []) {
  const ext = [`extendedKeyUsage=${usage}`, 'keyUsage=critical,digitalSignature,keyEncipherment', 'basicConstraints=critical,CA:FALSE']
  if (san.length) ext.push(`subjectAltName=${san.join(',')}`)
  writeFileSync(join(dir, `${name}.ext`), `${ext.join('\n')}\n`)
  await openssl(dir, 'req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', subject,
    '-keyout', `${name}.key`, '-out', `${name}.csr`)
  await openssl(dir, 'x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', serial(),
    '-days', DAYS, '-extfile', `${name}.ext`, '-out', `${name}.crt`)
}

/**
 * Makes the cluster's PKI in `dir`: ca, apiserver (serving `apiIp` and the `kubernetes`
 * service's names and `serviceIp`), apiserver-kubelet-client, admin (system:masters),
 * controller-manager, scheduler, and per node a client (system:node:<name>) and a serving
 * certificate for its address; sa.key/sa.pub for service-account tokens.
 */
export async function makePki(dir, { apiIp, serviceIp, nodes }) {
  mkdirSync(dir, { recursive: true })
  await openssl(dir, 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', DAYS,
    '-subj', '/CN=container-isolation test cluster CA', '-keyout', 'ca.key', '-out', 'ca.crt')
  const svc = ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local']
  await Promise.all([
    leaf(dir, 'apiserver', '/CN=kube-apiserver', 'serverAuth', [`IP:${apiIp}`, `IP:${serviceIp}`, ...svc.map((d) => `DNS:${d}`)]),
    leaf(dir, 'apiserver-kubelet-client', '/CN=kube-apiserver-kubelet-client', 'clientAuth'),
    leaf(dir, 'admin', '/O=system:masters/CN=container-isolation-admin', 'clientAuth'),
    leaf(dir, 'controller-manager', '/CN=system:kube-controller-manager', 'clientAuth'),
    leaf(dir, 'scheduler', '/CN=system:kube-scheduler', 'clientAuth'),
    ...nodes.flatMap((node) => [
      leaf(dir, `${node.name}-client`, `/O=system:nodes/CN=system:node:${node.name}`, 'clientAuth'),
      leaf(dir, `${node.name}-serving`, `/CN=${node.name}`, 'serverAuth', [`IP:${node.ip}`, `DNS:${node.name}`]),
    ]),
    openssl(dir, 'genpkey', '-algorithm', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', 'sa.key')
      .then(() => openssl(dir, 'pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub')),
  ])
}

const b64 = (file) => readFileSync(file).toString('base64')

/**
 * A self-contained kubeconfig (JSON, which is YAML) for `server`, trusting the CA in `pkiDir`
 * and authenticating with either the client certificate `cert` (a name in `pkiDir`) or a
 * bearer `token`.
 */
export function writeKubeconfig(file, { server, pkiDir, user, cert, token, namespace }) {
  const credentials = token ? { token } : {
    'client-certificate-data': b64(join(pkiDir, `${cert}.crt`)),
    'client-key-data': b64(join(pkiDir, `${cert}.key`)),
  }
  const context = { cluster: 'container-isolation-test', user, ...(namespace ? { namespace } : {}) }
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'container-isolation-test', cluster: { server, 'certificate-authority-data': b64(join(pkiDir, 'ca.crt')) } }],
    users: [{ name: user, user: credentials }],
    contexts: [{ name: user, context }],
    'current-context': user,
  }
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 })
}
