import { defineConfig } from 'vitest/config'

// Suites that disturb the engine for everyone (restarting dockerd): run alone, after the rest.
export default defineConfig({
  test: {
    include: ['__test__/**/*.serial.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
})
