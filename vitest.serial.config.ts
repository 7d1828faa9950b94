import { defineConfig } from 'vitest/config'

// Suites that run alone, after the rest: those that start, stop and restart a private dockerd
// of their own, the hostile-container suite, whose timing comparisons need a quiet machine,
// and the resource-limits suite, whose fork bomb would load the machine under other suites.
export default defineConfig({
  test: {
    include: ['__test__/**/*.serial.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
})
