import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/** Test files that mock a module (see the api-isolated project). */
const ISOLATED = ['test/results/definition-passes.test.ts'];

export default defineConfig({
  resolve: {
    // The workspaces' tests run against their sources (the packaging tests read dist/).
    alias: [
      { find: /^@uplift\/sdk\/browser$/, replacement: fileURLToPath(new URL('./sdk/src/browser.ts', import.meta.url)) },
      { find: /^@uplift\/sdk$/, replacement: fileURLToPath(new URL('./sdk/src/index.ts', import.meta.url)) },
    ],
  },
  test: {
    pool: 'forks',
    // Both cores: test files share nothing (a database or schema of their own per file, Redis under a unique prefix).
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/summary-reporter.ts'],
    // One run, one summary line: the API suite, the SDK workspaces' tests and the dashboard's component tests
    // (web/vitest.config.ts).
    projects: [
      {
        extends: true,
        test: {
          name: 'api',
          // Migrates an embedded database once; each test file's PGlite starts from its dump.
          globalSetup: ['./test/global-setup.ts'],
          isolate: false,
          include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'sdk/test/**/*.test.ts', 'openfeature/test/**/*.test.ts'],
          exclude: ISOLATED,
        },
      },
      {
        // Files that replace a module (vi.mock) need a module cache of their own: in the shared one an earlier file
        // may have loaded the real module already.
        extends: true,
        test: { name: 'api-isolated', globalSetup: ['./test/global-setup.ts'], isolate: true, include: ISOLATED },
      },
      'web/vitest.config.ts',
    ],
  },
});
