import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['__test__/**/*.spec.ts'],
    pool: 'forks',
    // npm test runs every pass at once on two cores: a test that takes 20 s alone can take
    // three times that there.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
})
