import { defineConfig } from 'vitest/config'

// The suites against a real Kubernetes cluster on this machine (scripts/kube-cluster.mjs):
// the global set-up builds the cluster's binaries when the cache lacks them, starts the
// cluster once for the run and removes it at the end. TEST_KUBE_CLUSTER=<name> uses a
// cluster already up (`scripts/kube-cluster.sh up`) and leaves it running.
//   npx vitest run -c vitest.kubernetes.config.ts
export default defineConfig({
  test: {
    include: ['__test__/**/*.kube.ts'],
    globalSetup: ['__test__/kube-setup.ts'],
    pool: 'forks',
    // The fault suite stops the shared cluster's parts: one file at a time.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 240_000,
  },
})
