// The test cluster: a real Kubernetes cluster on this machine, built from Go modules
// (scripts/kube-build.sh) — etcd, kube-apiserver (TLS, Node and RBAC authorization,
// service-account keys), kube-controller-manager, kube-scheduler on the machine, and two
// nodes (scripts/kube/node.mjs), each a network namespace with its own containerd and
// kubelet. Addresses are a random 10.160-199.x.0/24 that no interface of this machine uses:
//   .1 the API server (on a bridge with no ports), .4/30 and .8/30 the nodes' veth pairs,
//   .64/26 services, .128/26 and .192/26 the nodes' pods (interfaces that go nowhere).
// The offline test images come from the machine's dockerd (read only there).
//
//   node scripts/kube-cluster.mjs up|down|status [--name NAME]   (scripts/kube-cluster.sh)
//   node scripts/kube-cluster.mjs sweep    removes clusters whose owning process is gone
// `up` prints the cluster's description (cluster.json in its directory) as JSON.
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { TEST_IMAGES, build, imageArchive } from './kube/artifacts.mjs'
import { CONTROL_PLANE, apiserverReady, controlPlaneArgs, spawnDaemon, waitApiserver, waitEtcd } from './kube/control-plane.mjs'
import { importImages, startKubelet, startNode, stopKubelet, waitContainerd } from './kube/node.mjs'
import { makePki, writeKubeconfig } from './kube/pki.mjs'
import { alive, attempt, ip, processesIn, quiet, sleep, startTime } from './kube/proc.mjs'
import { teardown } from './kube/teardown.mjs'

export { TEST_IMAGES }

const run = promisify(execFile)
const ROLE = fileURLToPath(new URL('../deploy/kubernetes/role.yaml', import.meta.url))
export const STATE_ROOT = process.env.KUBE_STATE_ROOT ?? '/var/tmp/ci-kube'
export const NAMESPACE = 'container-isolation-test'
export const SERVICE_ACCOUNT = 'container-isolation'
export const NODE_NAMES = ['kube-node-a', 'kube-node-b']
const SMOKE_IMAGE = 'container-isolation-test:busybox'
const TOKEN_DURATION = process.env.KUBE_TOKEN_DURATION ?? '48h'
const READY_MS = 120_000
const TMPFS_SIZE = process.env.KUBE_STATE_SIZE ?? '8g'

const log = (msg) => process.stderr.write(`[kube-cluster] ${msg}\n`)

/** A /24 in 10.160-199.x.x in which this machine has no address and no route. */
function freeBlock() {
  const used = `${ip('-o', '-4', 'addr')}\n${ip('-4', 'route', 'show', 'table', 'all')}`
  for (let i = 0; i < 100; i++) {
    const [a, b] = randomBytes(2)
    const prefix = `10.${160 + (a % 40)}.${b}.`
    if (!used.includes(prefix)) return prefix
  }
  throw new Error('kube-cluster: no free /24 in 10.160-199.x.x')
}

/** A 127.x.y.z address for etcd (all of 127/8 is loopback): no port clashes with anything. */
const loopbackIp = () => {
  const [a, b, c] = randomBytes(3)
  return `127.${1 + (a % 250)}.${b}.${2 + (c % 250)}`
}

export class KubeCluster {
  /** `owner`: a process whose end means the cluster can be swept (the test run); none for the CLI. */
  constructor({ name = 'default', owner = undefined, stateRoot = STATE_ROOT } = {}) {
    if (!/^[a-z0-9]{1,8}$/.test(name)) throw new Error(`kube-cluster: a name is 1-8 of [a-z0-9], not ${JSON.stringify(name)}`)
    this.name = name
    this.dir = join(stateRoot, name)
    this.owner = owner
  }

  get stateFile() {
    return join(this.dir, 'state.json')
  }

  /** The description `up` wrote, or undefined when no cluster of this name is up. */
  description() {
    return attempt(() => JSON.parse(readFileSync(join(this.dir, 'cluster.json'), 'utf8')))
  }

  #save(state) {
    writeFileSync(this.stateFile, JSON.stringify(state, null, 2))
  }

  #state() {
    return attempt(() => JSON.parse(readFileSync(this.stateFile, 'utf8')))
  }

  /** Starts the cluster (removing what a previous one of this name left); returns its description. */
  async up({ images = TEST_IMAGES } = {}) {
    const t0 = Date.now()
    await this.down()
    const built = build()
    const block = freeBlock()
    const state = {
      name: this.name,
      dir: this.dir,
      owner: this.owner ? { pid: this.owner, start: startTime(this.owner) } : undefined,
      apiIp: `${block}1`,
      etcdIp: loopbackIp(),
      serviceCidr: `${block}64/26`,
      apiIf: `cik${this.name}`,
      binDir: built.binDir,
      cniDir: built.cniDir,
      pkiDir: join(this.dir, 'pki'),
      daemons: {},
      nodes: NODE_NAMES.map((nodeName, i) => {
        const letter = nodeName.slice(-1)
        return {
          name: nodeName,
          hostIp: `${block}${4 * (i + 1) + 1}`,
          ip: `${block}${4 * (i + 1) + 2}`,
          podSubnet: `${block}${128 + 64 * i}/26`,
          netns: `ci-kube-${this.name}-${letter}`,
          hostIf: `cik${this.name}${letter}h`,
          nsIf: `cik${this.name}${letter}n`,
          cgroupRoot: `ci-kube-${this.name}-${letter}`,
          dir: join(this.dir, `node-${letter}`),
        }
      }),
    }
    // The cluster's files (etcd, the nodes' containerd roots with the unpacked images, pods'
    // writes) in memory: quick to fill, and gone in an instant at `down` (a disk shared with
    // other suites took 30-60 s to delete the ~1 GB of two nodes' images).
    mkdirSync(this.dir, { recursive: true })
    quiet('mount', ['-t', 'tmpfs', '-o', `mode=700,size=${TMPFS_SIZE}`, `ci-kube-${this.name}`, this.dir])
    this.#save(state)
    try {
      await this.#start(state, built, images)
    } catch (err) {
      const logs = ['kube-apiserver.log', 'node-a/kubelet.log', 'node-b/kubelet.log', 'node-a/containerd.log', 'node-a/init.log']
        .map((f) => `${f}:\n${this.logTail(f)}`).join('\n')
      // KUBE_KEEP_FAILED=1 leaves a cluster that did not start as it is, to look at (then `down`).
      if (process.env.KUBE_KEEP_FAILED !== '1') await this.down().catch((e) => log(`clean-up after a failed start: ${e.message}`))
      throw new Error(`kube-cluster ${this.name} did not start: ${err.message}\n${logs}`)
    }
    log(`up in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${this.description().server}`)
    return this.description()
  }

  async #start(state, built, images) {
    const t0 = Date.now()
    const step = (what) => process.env.KUBE_DEBUG === '1' && log(`up: ${what} at ${Date.now() - t0} ms`)
    const server = `https://${state.apiIp}:6443`
    const archive = imageArchive(images)
    await makePki(state.pkiDir, { apiIp: state.apiIp, serviceIp: `${state.serviceCidr.split('.').slice(0, 3).join('.')}.65`, nodes: state.nodes })
    const kc = (file, user, cert) => writeKubeconfig(join(this.dir, file), { server, pkiDir: state.pkiDir, user, cert })
    step('images saved, certificates made')
    kc('admin.kubeconfig', 'admin', 'admin')
    kc('controller-manager.kubeconfig', 'system:kube-controller-manager', 'controller-manager')
    kc('scheduler.kubeconfig', 'system:kube-scheduler', 'scheduler')
    for (const node of state.nodes) {
      mkdirSync(node.dir, { recursive: true })
      writeKubeconfig(join(node.dir, 'kubelet.kubeconfig'), { server, pkiDir: state.pkiDir, user: `system:node:${node.name}`, cert: `${node.name}-client` })
    }

    // A bridge without ports: an address on this machine that leads nowhere else (no dummy links here).
    ip('link', 'add', state.apiIf, 'type', 'bridge')
    ip('addr', 'add', `${state.apiIp}/32`, 'dev', state.apiIf)
    ip('link', 'set', state.apiIf, 'up')

    const args = controlPlaneArgs(state)
    const daemon = (name) => {
      state.daemons[name] = { ...spawnDaemon(this.dir, name, args[name]), argv: args[name] }
      this.#save(state)
    }
    daemon('etcd')
    for (const node of state.nodes) {
      Object.assign(node, await startNode(node, { binDir: state.binDir, cniDir: state.cniDir, pkiDir: state.pkiDir, apiIp: state.apiIp }))
      this.#save(state)
    }
    step('nodes started')
    await waitEtcd(state, 30_000)
    step('etcd ready')
    daemon('kube-apiserver')
    const admin = join(this.dir, 'admin.kubeconfig')
    // The images go into the nodes while the control plane comes up; `up` returns only when
    // both are done, so no test pod meets a node without its images.
    await Promise.all([
      ...state.nodes.map(async (node) => {
        await waitContainerd(node, 30_000)
        await importImages(node, archive)
        step(`images imported into ${node.name}`)
      }),
      (async () => {
        await waitApiserver(state, 60_000)
        step('kube-apiserver ready')
        daemon('kube-controller-manager')
        daemon('kube-scheduler')
        await this.#rbac(admin, state)
        step('RBAC applied')
      })(),
    ])
    await this.#waitNodesReady(admin)
    step('nodes Ready')
    const session = join(this.dir, 'session.kubeconfig')
    const { stdout: token } = await this.kubectl(admin, '-n', NAMESPACE, 'create', 'token', SERVICE_ACCOUNT, `--duration=${TOKEN_DURATION}`)
    writeKubeconfig(session, { server, pkiDir: state.pkiDir, user: SERVICE_ACCOUNT, token: token.trim(), namespace: NAMESPACE })
    await this.#smoke(session, state)
    step('smoke pods ran')

    const description = {
      name: this.name,
      dir: this.dir,
      server,
      apiserverAddress: state.apiIp,
      namespace: NAMESPACE,
      serviceAccount: SERVICE_ACCOUNT,
      kubeconfig: { admin, session },
      kubectl: join(state.binDir, 'kubectl'),
      nodes: state.nodes.map((n) => ({ name: n.name, address: n.ip, podSubnet: n.podSubnet })),
      serviceCidr: state.serviceCidr,
      images,
      versions: built.versions,
    }
    writeFileSync(join(this.dir, 'cluster.json'), `${JSON.stringify(description, null, 2)}\n`)
  }

  /** The API server may reach the kubelets; the namespace, service account, Role and binding. */
  async #rbac(admin, state) {
    const objects = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'container-isolation-test:apiserver-kubelet' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:kubelet-api-admin' },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'kube-apiserver-kubelet-client' }] },
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } },
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: SERVICE_ACCOUNT, namespace: NAMESPACE }, automountServiceAccountToken: false },
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: SERVICE_ACCOUNT, namespace: NAMESPACE },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: SERVICE_ACCOUNT },
          subjects: [{ kind: 'ServiceAccount', name: SERVICE_ACCOUNT, namespace: NAMESPACE }] },
      ],
    }
    await this.kubectl(admin, 'apply', '-f', '-', { input: JSON.stringify(objects) })
    await this.kubectl(admin, '-n', NAMESPACE, 'apply', '-f', ROLE)
    // Pods are admitted only once the namespace's default service account exists.
    const deadline = Date.now() + 30_000
    while (!(await this.kubectl(admin, '-n', NAMESPACE, 'get', 'serviceaccount', 'default').catch(() => undefined))) {
      if (Date.now() > deadline) throw new Error(`no default service account in ${NAMESPACE} within 30 s (kube-controller-manager.log:\n${this.logTail('kube-controller-manager.log')})`)
      await sleep(200)
    }
  }

  async #waitNodesReady(admin) {
    const deadline = Date.now() + READY_MS
    for (;;) {
      const nodes = await this.kubectl(admin, 'get', 'nodes', '-o', 'json').then((r) => JSON.parse(r.stdout).items).catch(() => [])
      const ready = nodes.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).map((n) => n.metadata.name)
      if (NODE_NAMES.every((n) => ready.includes(n))) return
      if (Date.now() > deadline) throw new Error(`nodes not Ready within ${READY_MS / 1000} s (ready: ${ready.join(', ') || 'none'})`)
      await sleep(500)
    }
  }

  /** On each node, as the session's service account: a pod runs, and exec into it answers. */
  async #smoke(session, state) {
    await Promise.all(state.nodes.map(async (node) => {
      const name = `smoke-${node.name}`
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, labels: { 'container-isolation.test/smoke': 'true' } },
        spec: {
          nodeSelector: { 'kubernetes.io/hostname': node.name },
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'main', image: SMOKE_IMAGE, imagePullPolicy: 'Never', command: ['sh', '-c', 'trap "exit 0" TERM; while :; do sleep 1; done'] }],
        },
      }
      await this.kubectl(session, 'apply', '-f', '-', { input: JSON.stringify(pod) })
      await this.kubectl(session, 'wait', '--for=condition=Ready', `pod/${name}`, '--timeout=90s')
      const { stdout } = await this.kubectl(session, 'exec', name, '--', 'sh', '-c', 'echo "exec on $(hostname)"')
      if (stdout.trim() !== `exec on ${name}`) throw new Error(`smoke pod on ${node.name}: exec said ${JSON.stringify(stdout)}`)
      await this.kubectl(session, 'delete', 'pod', name, '--wait=true', '--timeout=60s')
    }))
  }

  /** kubectl (the cluster's own) with `kubeconfig`; the last argument may be execFile options. */
  kubectl(kubeconfig, ...args) {
    const opts = typeof args.at(-1) === 'object' ? args.pop() : {}
    const bin = join(this.#state()?.binDir ?? '', 'kubectl')
    const child = run(bin, [`--kubeconfig=${kubeconfig}`, ...args], { maxBuffer: 64 << 20, timeout: 120_000 })
    if (opts.input !== undefined) child.child.stdin.end(opts.input)
    return child.catch((err) => {
      err.message = `kubectl ${args.join(' ')}: ${err.stderr?.trim() || err.message}`
      throw err
    })
  }

  /** Stops one node's kubelet (its containerd and pods go on) until startKubelet. */
  async stopKubelet(nodeName) {
    await stopKubelet(this.#node(nodeName))
  }

  startKubelet(nodeName) {
    startKubelet(this.#node(nodeName))
  }

  /** Kills the API server and starts it again as it was; resolves when it is ready again. */
  async restartApiserver({ downMs = 0 } = {}) {
    const state = this.#state()
    const old = state.daemons['kube-apiserver']
    if (alive(old)) process.kill(old.pid, 'SIGKILL')
    while (alive(old)) await sleep(50)
    if (downMs) await sleep(downMs)
    state.daemons['kube-apiserver'] = { ...spawnDaemon(this.dir, 'kube-apiserver', old.argv), argv: old.argv }
    this.#save(state)
    await waitApiserver(state, 60_000)
  }

  #node(nodeName) {
    const node = this.#state()?.nodes.find((n) => n.name === nodeName)
    if (!node) throw new Error(`kube-cluster ${this.name}: no node ${nodeName}`)
    return node
  }

  /** Which of the cluster's processes run, and whether the API server answers. */
  async status() {
    const state = this.#state()
    if (!state) return { name: this.name, up: false }
    const daemons = Object.fromEntries(CONTROL_PLANE.map((d) => [d, alive(state.daemons[d])]))
    const nodes = Object.fromEntries(state.nodes.map((n) => [n.name, {
      running: Boolean(n.pidNs) && processesIn(n.pidNs).length > 0,
      processes: n.pidNs ? processesIn(n.pidNs).map((pid) => attempt(() => readFileSync(`/proc/${pid}/comm`, 'utf8').trim())) : [],
    }]))
    const apiserver = daemons['kube-apiserver'] ? await apiserverReady(state) : false
    return { name: this.name, up: Boolean(this.description()), apiserverReady: apiserver, daemons, nodes, description: this.description() }
  }

  /** Removes everything of the cluster (from its state file, so also after a crash); throws if anything is left. */
  async down() {
    const state = this.#state()
    if (!state && !existsSync(this.dir)) return
    await teardown({ name: this.name, daemons: {}, nodes: [], ...state, dir: this.dir })
  }

  logTail(file, lines = 15) {
    return attempt(() => readFileSync(join(this.dir, file), 'utf8').trimEnd().split('\n').slice(-lines).join('\n')) ?? '(no log)'
  }
}

/** Removes the clusters whose owner (a test run) is gone; clusters without an owner stay. */
export async function sweepClusters(stateRoot = STATE_ROOT) {
  const swept = []
  for (const name of attempt(() => readdirSync(stateRoot)) ?? []) {
    const cluster = new KubeCluster({ name, stateRoot })
    const state = attempt(() => JSON.parse(readFileSync(cluster.stateFile, 'utf8')))
    if (!state?.owner || alive(state.owner)) continue
    await cluster.down()
    swept.push(name)
  }
  return swept
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [command, ...rest] = process.argv.slice(2)
  const nameAt = rest.indexOf('--name')
  const cluster = new KubeCluster({ name: nameAt >= 0 ? rest[nameAt + 1] : 'default' })
  const t0 = Date.now()
  if (command === 'up') {
    console.log(JSON.stringify(await cluster.up(), null, 2))
  } else if (command === 'down') {
    await cluster.down()
    log(`down in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
  } else if (command === 'status') {
    const status = await cluster.status()
    console.log(JSON.stringify(status, null, 2))
    process.exitCode = status.apiserverReady ? 0 : 3
  } else if (command === 'sweep') {
    const swept = await sweepClusters()
    if (swept.length) log(`removed cluster(s) left by an interrupted run: ${swept.join(', ')}`)
  } else {
    console.error('usage: kube-cluster.mjs up|down|status|sweep [--name NAME]')
    process.exitCode = 2
  }
}
