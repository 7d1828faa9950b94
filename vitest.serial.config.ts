import { defineConfig } from 'vitest/config'

// Suites that start, stop and restart a private dockerd of their own: run alone, after the rest.
export default defineConfig({
  test: {
    include: ['__test__/**/*.serial.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
})
