// vitest.kubernetes.config.ts's global set-up: starts the test cluster once for the run and
// hands it to the workers through the environment (TEST_KUBE_CLUSTER_JSON, the path of its
// description; TEST_KUBECONFIG, the session's kubeconfig); removes it at the end, failing
// the run if anything of it is left. With TEST_KUBE_CLUSTER=<name>, a cluster that is already
// up is used and left running.
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { KubeCluster, sweepClusters } from '../scripts/kube-cluster.mjs'

export default async function setup(): Promise<(() => Promise<void>) | void> {
  const existing = process.env.TEST_KUBE_CLUSTER
  let cluster: KubeCluster
  let owned = false
  if (existing) {
    cluster = new KubeCluster({ name: existing })
    if (!cluster.description()) throw new Error(`TEST_KUBE_CLUSTER=${existing}: no such cluster is up (scripts/kube-cluster.sh up --name ${existing})`)
  } else {
    await sweepClusters()
    cluster = new KubeCluster({ name: `t${randomBytes(3).toString('hex')}`, owner: process.pid })
    await cluster.up()
    owned = true
  }
  const description = cluster.description()!
  Object.assign(process.env, {
    TEST_KUBE_CLUSTER_JSON: join(cluster.dir, 'cluster.json'),
    TEST_KUBECONFIG: description.kubeconfig.session,
    TEST_KUBE_NAMESPACE: description.namespace,
  })
  console.log(`[kubernetes] cluster ${cluster.name}: ${description.server}, Kubernetes ${description.versions.kubernetes}, nodes ${description.nodes.map((n) => n.name).join(', ')}`)
  if (owned) return () => cluster.down()
}
