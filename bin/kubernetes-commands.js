// The CLI's Kubernetes side: `doctor --kubernetes` shows the cluster (API server, version,
// namespace, the permissions the credentials lack, nodes, RuntimeClasses and, with
// --network-policy, whether NetworkPolicy is enforced, measured with two probe Pods); the
// session commands that Workspaces has on a cluster run there with the same options.
'use strict'

const addon = require('../lib/index.js')
const { UsageError, table } = require('./cli-common.js')

const KUBE_FLAGS = ['--kubernetes', '--network-policy']
const KUBE_VALUED = ['--kubeconfig', '--kube-context', '--namespace']

/** `KubernetesOptions` when any Kubernetes option is given, else `undefined`. */
function kubernetesOptions(args) {
  const named = ['kubernetes', 'kubeconfig', 'kube-context', 'namespace', 'network-policy']
  if (!named.some((n) => args[n] !== undefined)) return undefined
  const opts = {}
  if (args.kubeconfig !== undefined) opts.kubeconfig = args.kubeconfig
  if (args['kube-context'] !== undefined) opts.context = args['kube-context']
  if (args.namespace !== undefined) opts.namespace = args.namespace
  return opts
}

function describeCheck(check) {
  const lines = [`cluster: ${check.server} (${check.version}), namespace ${check.namespace}`]
  lines.push(check.missing.length ? `permissions missing in the namespace: ${check.missing.join(', ')}` : 'permissions: all the library uses are granted')
  if (check.nodes) {
    lines.push(table(check.nodes.map((n) => ({ node: n.name, version: n.version, runtime: n.runtime, ready: n.ready ? 'yes' : 'no' })), ['node', 'version', 'runtime', 'ready']))
  }
  if (check.runtimeClasses) {
    const classes = check.runtimeClasses.map((c) => `${c.name} (${c.handler})`)
    lines.push(`runtime classes: ${classes.length ? classes.join(', ') : 'none'}`)
  }
  if (check.unseen.length) lines.push(`not visible to these credentials: ${check.unseen.join(', ')}`)
  if (check.networkPolicy) lines.push(`network policy: ${check.networkPolicy.verdict}: ${check.networkPolicy.detail}`)
  else lines.push('network policy: not measured (--network-policy runs two probe Pods)')
  return lines.join('\n')
}

/** `doctor --kubernetes`: 0 when the cluster answers and no permission is missing. */
async function doctorKubernetes(args, cluster, baseDir) {
  const runtime = new addon.KubernetesRuntime({ kubernetes: cluster, baseDir, image: args.image })
  const check = await runtime.check({ networkPolicy: Boolean(args['network-policy']), image: args.image })
  if (args.json) console.log(JSON.stringify(check, null, 2))
  else console.log(describeCheck(check))
  return check.missing.length ? 1 : 0
}

/** The commands whose sessions may run on a cluster (Workspaces on Kubernetes). */
const ON_CLUSTER = new Set(['up', 'exec', 'ls', 'diff', 'log', 'export', 'push', 'down', 'reap'])

/** The engine option of a session command given the Kubernetes options. */
function clusterEngine(name, cluster, engine) {
  if (!ON_CLUSTER.has(name)) {
    throw new UsageError(`${name} is not available for sessions on Kubernetes yet (on a cluster: ${[...ON_CLUSTER].join(', ')}, and doctor --kubernetes)`)
  }
  if (engine) throw new UsageError('give the engine options or the Kubernetes ones, not both')
  return { kubernetes: cluster }
}

module.exports = { KUBE_FLAGS, KUBE_VALUED, kubernetesOptions, doctorKubernetes, clusterEngine }
