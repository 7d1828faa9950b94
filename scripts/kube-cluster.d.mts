// Types of scripts/kube-cluster.mjs (the test cluster), for the TypeScript suites.
export declare const NAMESPACE: string
export declare const SERVICE_ACCOUNT: string
export declare const NODE_NAMES: string[]
export declare const TEST_IMAGES: string[]

/** What `up` wrote to <dir>/cluster.json. */
export interface ClusterDescription {
  name: string
  dir: string
  /** `https://<address>:6443`. */
  server: string
  apiserverAddress: string
  namespace: string
  serviceAccount: string
  /** admin: cluster-admin, for set-up only; session: the namespaced service account's token. */
  kubeconfig: { admin: string; session: string }
  /** The cluster's own kubectl. */
  kubectl: string
  nodes: { name: string; address: string; podSubnet: string }[]
  serviceCidr: string
  images: string[]
  versions: { kubernetes: string; etcd: string; cniPlugins: string; containerd: string }
}

export declare class KubeCluster {
  constructor(opts?: { name?: string; owner?: number; stateRoot?: string })
  readonly name: string
  readonly dir: string
  description(): ClusterDescription | undefined
  up(opts?: { images?: string[] }): Promise<ClusterDescription>
  down(): Promise<void>
  status(): Promise<Record<string, unknown>>
  kubectl(kubeconfig: string, ...args: (string | { input?: string })[]): Promise<{ stdout: string; stderr: string }>
  stopKubelet(nodeName: string): Promise<void>
  startKubelet(nodeName: string): void
  restartApiserver(opts?: { downMs?: number }): Promise<void>
  logTail(file: string, lines?: number): string
}

export declare function sweepClusters(stateRoot?: string): Promise<string[]>
