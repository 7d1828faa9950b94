// Removing a test cluster (scripts/kube-cluster.mjs) from what its state file records, so
// also after the process that started it crashed. Only what the cluster made: processes
// whose pid and start time match, its own namespaces, links, cgroups and directory.
import { existsSync, readdirSync, readFileSync, rmdirSync } from 'node:fs'
import { join } from 'node:path'
import { CONTROL_PLANE } from './control-plane.mjs'
import { alive, attempt, ip, processesIn, quiet, sleep } from './proc.mjs'

async function killUntilGone(pids, gone, what, left) {
  for (const pid of pids) attempt(() => process.kill(pid, 'SIGKILL'))
  for (let i = 0; i < 100 && !gone(); i++) await sleep(100)
  if (!gone()) left.push(what)
}

/** Removes the cgroup `root` in every controller, children first. */
function removeCgroups(root, left) {
  const base = '/sys/fs/cgroup'
  const rmTree = (path) => {
    for (const e of attempt(() => readdirSync(path, { withFileTypes: true })) ?? []) if (e.isDirectory()) rmTree(join(path, e.name))
    attempt(() => rmdirSync(path))
  }
  for (const controller of attempt(() => readdirSync(base)) ?? []) {
    const path = join(base, controller, root)
    if (!existsSync(path)) continue
    rmTree(path)
    if (existsSync(path)) left.push(`cgroup ${path}`)
  }
}

/**
 * Removes everything `state` (a cluster's state.json) names: the control plane's processes,
 * the nodes' pid namespaces (everything in them), netns, veth pairs, cgroups, the API
 * server's bridge, the cluster's tmpfs and directory. Throws naming whatever is left.
 */
export async function teardown(state) {
  const left = []
  const t0 = Date.now()
  const step = (what) => process.env.KUBE_DEBUG === '1' && process.stderr.write(`[kube-cluster] teardown: ${what} at ${Date.now() - t0} ms\n`)
  for (const name of [...CONTROL_PLANE].reverse()) {
    const d = state.daemons?.[name]
    if (alive(d)) await killUntilGone([d.pid], () => !alive(d), `${name} (pid ${d.pid})`, left)
  }
  step('control plane gone')
  // Both nodes at once: a node's pid 1 takes everything in its namespaces with it.
  const nodes = state.nodes ?? []
  for (const node of nodes) {
    if (alive({ pid: node.unsharePid, start: node.unshareStart })) attempt(() => process.kill(node.unsharePid, 'SIGKILL'))
  }
  await Promise.all(nodes.filter((n) => n.pidNs).map((node) =>
    killUntilGone(processesIn(node.pidNs), () => processesIn(node.pidNs).length === 0, `processes of ${node.name}`, left)))
  step('nodes\' processes gone')
  const netnsExists = (name) => ip('netns', 'list').split('\n').some((l) => l.split(' ')[0] === name)
  for (const node of nodes) {
    if (netnsExists(node.netns)) attempt(() => ip('netns', 'delete', node.netns))
    if (attempt(() => ip('link', 'show', node.hostIf))) attempt(() => ip('link', 'delete', node.hostIf))
    if (attempt(() => ip('link', 'show', node.hostIf))) left.push(`link ${node.hostIf}`)
    if (netnsExists(node.netns)) left.push(`netns ${node.netns}`)
    if (node.cgroupRoot) removeCgroups(node.cgroupRoot, left)
  }
  step('netns, links, cgroups gone')
  if (state.apiIf && attempt(() => ip('link', 'show', state.apiIf))) {
    attempt(() => ip('link', 'delete', state.apiIf))
    if (attempt(() => ip('link', 'show', state.apiIf))) left.push(`link ${state.apiIf}`)
  }
  // The cluster's tmpfs (and anything mounted under it), deepest first; the nodes' own
  // mounts went with their mount namespaces.
  const mounts = () => readFileSync('/proc/mounts', 'utf8').split('\n').map((l) => l.split(' ')[1] ?? '')
    .filter((m) => m === state.dir || m.startsWith(`${state.dir}/`))
  for (const m of mounts().sort().reverse()) attempt(() => quiet('umount', [m]))
  if (mounts().length) left.push(`mounts ${mounts().join(', ')}`)
  else attempt(() => quiet('rm', ['-rf', '--one-file-system', state.dir]))
  step('directory gone')
  if (existsSync(state.dir)) left.push(`directory ${state.dir}`)
  if (left.length) throw new Error(`kube-cluster ${state.name ?? state.dir} left: ${left.join('; ')}`)
}
