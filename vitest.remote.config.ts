import { defineConfig } from 'vitest/config'

// The engine-parameterised suites against an engine on "another machine": the global set-up
// starts the remote-engine rig (scripts/remote-engine.mjs) once for both projects, `tls` and
// `ssh`, which run side by side against it (each with the rig's endpoint for its transport),
// and removes it at the end. Both run the transport's own suite (remote.spec.ts); the
// engine-parameterised suites are shared out between them, as the transports differ only in
// how bytes reach the engine: over ssh the file suites (the archive endpoint, volumes,
// checkpoints), over TLS the process and session suites. The engine-exec termination tests
// of shell.spec.ts fail over ssh with every pass at once (a SIGTERM'd command reported
// SIGKILLed when each check of the tree takes a second over the tunnel): an open problem.
// One transport alone: `--project ssh`.
//   npx vitest run -c vitest.remote.config.ts --project tls __test__/shell.spec.ts
const suites = {
  tls: ['remote', 'shell', 'runtime', 'workspaces'],
  ssh: ['remote', 'fileio', 'workspaces-volume', 'checkpoint'],
}

export default defineConfig({
  test: {
    globalSetup: ['__test__/remote-setup.ts'],
    pool: 'forks',
    // One file of each transport at a time: the two passes mostly wait on the rig's engine.
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 120_000,
    hookTimeout: 240_000,
    projects: Object.entries(suites).map(([transport, names]) => ({
      extends: true,
      test: {
        name: transport,
        include: [`__test__/{${names.join(',')}}.spec.ts`],
        env: { TEST_REMOTE_TRANSPORT: transport },
      },
    })),
  },
})
