// One node of the test cluster: a network namespace joined to the machine by a veth pair (a
// /30), and in it, in a pid and mount namespace of their own (scripts/kube/node-init.sh), a
// containerd with its own root, state and socket, and a kubelet. Pods get an interface from
// CNI that goes nowhere: a tap device nothing reads (host-local addresses from the node's pod
// subnet). The `dummy` plugin would do the same, but these machines' kernels have no dummy
// links (CONFIG_DUMMY is not set); tun/tap is in every kernel that runs containers.
import { spawn } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { attempt, ip, processesIn, quiet, sleep, startTime } from './proc.mjs'

const INIT = fileURLToPath(new URL('./node-init.sh', import.meta.url))
export const SANDBOX_IMAGE = 'localhost/container-isolation/pause:1'
/** The image the sandbox image is tagged from: its only program idles and exits 0 on TERM. */
export const PAUSE_SOURCE = 'docker.io/library/container-isolation-test:noshell'

const containerdConfig = (dir, cniBin) => `version = 2
root = "${dir}/containerd/root"
state = "${dir}/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "${dir}/containerd.sock"

[plugins."io.containerd.internal.v1.opt"]
  path = "${dir}/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${SANDBOX_IMAGE}"
  disable_apparmor = true
  netns_mounts_under_state_dir = true
  # No score below containerd's own: these machines deny CAP_SYS_RESOURCE, so runc cannot
  # write the sandbox's -998 (its init dies: "can't get final child's PID from pipe").
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "${cniBin}"
    conf_dir = "${dir}/cni"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "${dir}/runc"
`

/**
 * The CNI network: a tap device with an address from `subnet` and no route anywhere. With an
 * owner and group set the plugin makes the device through netlink rather than the `ip` tool.
 */
const cniConfig = (dir, subnet) => ({
  cniVersion: '1.0.0',
  name: 'container-isolation-test',
  plugins: [{ type: 'tap', owner: 0, group: 0, ipam: { type: 'host-local', ranges: [[{ subnet }]], dataDir: join(dir, 'cni-ipam') } }],
})

const kubeletConfig = (node, { dir, pki, cgroupRoot }) => ({
  apiVersion: 'kubelet.config.k8s.io/v1beta1',
  kind: 'KubeletConfiguration',
  address: node.ip,
  port: 10250,
  readOnlyPort: 0,
  healthzBindAddress: '127.0.0.1',
  healthzPort: 10248,
  tlsCertFile: join(pki, `${node.name}-serving.crt`),
  tlsPrivateKeyFile: join(pki, `${node.name}-serving.key`),
  authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: join(pki, 'ca.crt') } },
  authorization: { mode: 'Webhook' },
  containerRuntimeEndpoint: `unix://${dir}/containerd.sock`,
  imageServiceEndpoint: `unix://${dir}/containerd.sock`,
  // cgroup v1 without systemd on these machines; each node's pods under a root of its own.
  cgroupDriver: 'cgroupfs',
  cgroupRoot: `/${cgroupRoot}`,
  cgroupsPerQOS: true,
  failCgroupV1: false,
  failSwapOn: false,
  resolvConf: join(dir, 'resolv.conf'),
  clusterDomain: 'cluster.local',
  maxPods: 60,
  // Imported images have no registry to come back from: never collect them.
  imageGCHighThresholdPercent: 100,
  imageGCLowThresholdPercent: 99,
  evictionHard: { 'memory.available': '50Mi', 'nodefs.available': '1%', 'imagefs.available': '1%', 'nodefs.inodesFree': '1%' },
  serializeImagePulls: false,
  rotateCertificates: false,
  serverTLSBootstrap: false,
  enableDebuggingHandlers: true,
  shutdownGracePeriod: '0s',
  // Its own default, -999, needs CAP_SYS_RESOURCE, which these machines deny.
  oomScoreAdj: 0,
  podLogsDir: '/var/log/pods',
})

/** Creates the node's cgroup root in every v1 controller (cpuset with its parent's cpus/mems). */
function makeCgroupRoot(name) {
  const base = '/sys/fs/cgroup'
  for (const controller of ['cpu', 'cpuacct', 'cpuset', 'memory', 'devices', 'freezer', 'blkio', 'pids', 'hugetlb', 'net_cls', 'net_prio', 'perf_event', 'systemd']) {
    if (!existsSync(join(base, controller))) continue
    const path = join(base, controller, name)
    mkdirSync(path, { recursive: true })
    if (controller === 'cpuset') {
      for (const f of ['cpuset.cpus', 'cpuset.mems']) writeFileSync(join(path, f), readFileSync(join(base, controller, f)))
    }
  }
}

/**
 * Writes the node's configuration and starts it: netns and veth pair, containerd and kubelet.
 * `node` is { name, ip, hostIp, podSubnet, netns, hostIf, nsIf, dir, cgroupRoot }.
 * Returns what teardown needs: { unsharePid, unshareStart, pidNs }.
 */
export async function startNode(node, { binDir, cniDir, pkiDir, apiIp }) {
  const { dir } = node
  for (const d of ['cni', 'cni-ipam', 'containerd', 'kubelet', 'runc', 'log']) mkdirSync(join(dir, d), { recursive: true })
  writeFileSync(join(dir, 'containerd.toml'), containerdConfig(dir, cniDir))
  writeFileSync(join(dir, 'cni', '10-container-isolation.conflist'), JSON.stringify(cniConfig(dir, node.podSubnet), null, 2))
  writeFileSync(join(dir, 'kubelet.yaml'), JSON.stringify(kubeletConfig(node, { dir, pki: pkiDir, cgroupRoot: node.cgroupRoot }), null, 2))
  // No resolver: with an empty file containerd would copy the machine's /etc/resolv.conf into pods.
  writeFileSync(join(dir, 'resolv.conf'), 'options ndots:1\n')
  makeCgroupRoot(node.cgroupRoot)

  ip('netns', 'add', node.netns)
  ip('link', 'add', node.hostIf, 'type', 'veth', 'peer', 'name', node.nsIf)
  ip('link', 'set', node.nsIf, 'netns', node.netns)
  ip('addr', 'add', `${node.hostIp}/30`, 'dev', node.hostIf)
  ip('link', 'set', node.hostIf, 'up')
  ip('-n', node.netns, 'addr', 'add', `${node.ip}/30`, 'dev', node.nsIf)
  ip('-n', node.netns, 'link', 'set', node.nsIf, 'up')
  ip('-n', node.netns, 'link', 'set', 'lo', 'up')
  // The API server's address only: the node has no default route.
  ip('-n', node.netns, 'route', 'add', `${apiIp}/32`, 'via', node.hostIp)

  const kubeletArgs = [
    `--config=${join(dir, 'kubelet.yaml')}`,
    `--kubeconfig=${join(dir, 'kubelet.kubeconfig')}`,
    `--hostname-override=${node.name}`,
    `--node-ip=${node.ip}`,
    `--root-dir=${join(dir, 'kubelet')}`,
    `--cert-dir=${join(dir, 'kubelet', 'pki')}`,
    '--v=1',
  ]
  const log = openSync(join(dir, 'init.log'), 'a')
  // nsenter --net rather than `ip netns exec`, which remounts /sys and so hides the cgroups.
  const child = spawn('nsenter', [`--net=/run/netns/${node.netns}`, '--',
    'unshare', '--mount', '--pid', '--fork', '--kill-child=SIGKILL', '--mount-proc', '--propagation', 'private', '--',
    'bash', INIT, dir, join(binDir, 'kubelet'), ...kubeletArgs,
  ], { stdio: ['ignore', log, log], detached: true, env: { ...process.env, PATH: `${binDir}:${process.env.PATH}` } })
  closeSync(log)
  child.unref()
  // nsenter execs unshare, so the child's pid is unshare's; its child is the node's pid 1.
  let init
  for (let i = 0; i < 100 && !init; i++) {
    init = Number(attempt(() => readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/)[0]))
    if (!init) await sleep(50)
  }
  if (!init) throw new Error(`node ${node.name}: no init process under unshare`)
  const pidNs = readlinkSync(`/proc/${init}/ns/pid`)
  return { unsharePid: child.pid, unshareStart: startTime(child.pid), pidNs }
}

/** Waits until the node's containerd answers on its socket. */
export async function waitContainerd(node, timeoutMs) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (attempt(() => ctr(node, 'version'))) return
    if (Date.now() > deadline) throw new Error(`node ${node.name}: containerd did not answer within ${timeoutMs / 1000} s`)
    await sleep(100)
  }
}

/** `ctr` against the node's containerd, in the CRI's namespace. */
export function ctr(node, ...args) {
  return quiet('ctr', ['--address', join(node.dir, 'containerd.sock'), '--namespace', 'k8s.io', ...args], { maxBuffer: 16 << 20 })
}

/**
 * Imports an image archive (`docker save` output) into the node, unpacked for the CRI, and
 * tags the sandbox image. Runs as a child process so both nodes import at once.
 */
export function importImages(node, archive) {
  return new Promise((resolve, reject) => {
    const child = spawn('ctr', ['--address', join(node.dir, 'containerd.sock'), '--namespace', 'k8s.io',
      'images', 'import', '--snapshotter', 'overlayfs', archive], { stdio: ['ignore', 'ignore', 'pipe'] })
    let err = ''
    child.stderr.on('data', (d) => (err += d))
    child.on('error', reject)
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`node ${node.name}: ctr images import failed: ${err.trim()}`))
      try {
        attempt(() => ctr(node, 'images', 'rm', SANDBOX_IMAGE))
        ctr(node, 'images', 'tag', PAUSE_SOURCE, SANDBOX_IMAGE)
        resolve()
      } catch (e) {
        reject(e)
      }
    })
  })
}

/** The kubelet's pid on this machine, if it runs. */
export function kubeletPid(node) {
  if (!node.pidNs) return undefined
  return processesIn(node.pidNs).find((pid) => attempt(() => readFileSync(`/proc/${pid}/comm`, 'utf8').trim()) === 'kubelet')
}

/** Stops the node's kubelet and keeps it stopped (containerd and the pods go on). */
export async function stopKubelet(node) {
  writeFileSync(join(node.dir, 'kubelet.hold'), '')
  for (let i = 0; i < 100; i++) {
    const pid = kubeletPid(node)
    if (!pid) return
    attempt(() => process.kill(pid, 'SIGKILL'))
    await sleep(100)
  }
  throw new Error(`node ${node.name}: the kubelet did not stop`)
}

/** Lets the node's init start the kubelet again. */
export function startKubelet(node) {
  rmSync(join(node.dir, 'kubelet.hold'), { force: true })
}
