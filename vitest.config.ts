import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/summary-reporter.ts'],
    // One run, one summary line: the API suite and the dashboard's component tests (web/vitest.config.ts).
    projects: [
      { extends: true, test: { name: 'api', include: ['src/**/*.test.ts', 'test/**/*.test.ts'] } },
      'web/vitest.config.ts',
    ],
  },
});
