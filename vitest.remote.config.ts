import { defineConfig } from 'vitest/config'

// The engine-parameterised suites against an engine on "another machine": the global set-up
// starts the remote-engine rig (scripts/remote-engine.mjs) once, points the workers at it
// over TEST_REMOTE_TRANSPORT (tls, the default, or ssh) and removes it at the end.
//   TEST_REMOTE_TRANSPORT=ssh npx vitest run -c vitest.remote.config.ts __test__/shell.spec.ts
export default defineConfig({
  test: {
    // The suites that run remotely (scripts/test.sh names them; a suite not listed stays local).
    include: ['__test__/{fileio,shell,runtime,workspaces,workspaces-volume,remote}.spec.ts'],
    globalSetup: ['__test__/remote-setup.ts'],
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 240_000,
  },
})
