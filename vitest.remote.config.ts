import { defineConfig } from 'vitest/config'

// The engine-parameterised suites against an engine on "another machine": the global set-up
// starts the remote-engine rig (scripts/remote-engine.mjs) once for both projects, `tls` and
// `ssh`, which run side by side against it (each with the rig's endpoint for its transport),
// and removes it at the end. One transport alone: `--project ssh`.
//   npx vitest run -c vitest.remote.config.ts --project ssh __test__/shell.spec.ts
const include = ['__test__/{fileio,shell,runtime,workspaces,workspaces-volume,remote,checkpoint}.spec.ts']

export default defineConfig({
  test: {
    globalSetup: ['__test__/remote-setup.ts'],
    pool: 'forks',
    // One file of each transport at a time: the two passes mostly wait on the rig's engine.
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 120_000,
    hookTimeout: 240_000,
    projects: ['tls', 'ssh'].map((transport) => ({
      extends: true,
      test: { name: transport, include, env: { TEST_REMOTE_TRANSPORT: transport } },
    })),
  },
})
