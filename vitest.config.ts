import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// HTTP tests run twice: once on the embedded SQLite database and once on a throwaway PostgreSQL
// cluster that the postgres project's global setup starts.
const http = ['test/http/**/*.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    // Most of the suite waits (on its servers, child processes, PostgreSQL and Chromium) rather than
    // computes, so two files run at once even on two cores, where the default would be one: the
    // whole suite took 1,134 s instead of 1,658 s on such a machine.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // A poll waits for a state to be reached (a page rendered, a job run), not for a speed: speeds
    // are measured by the benchmarks. One second was too short while another file runs beside.
    expect: { poll: { timeout: 10_000 } },
    testTimeout: 30_000,
    // Each file's temporary files live in a directory of its own, removed after the file.
    setupFiles: ['test/support/temporary-directory.ts'],
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      { extends: true, test: { name: 'sqlite', include: http } },
      { extends: true, test: { name: 'postgres', include: http, globalSetup: ['test/support/postgres-global-setup.ts'] } },
      // The web app in a real Chromium against a real server (SQLite); builds web/dist when needed.
      { extends: true, test: { name: 'browser', include: ['test/browser/**/*.test.ts'], globalSetup: ['test/browser/global-setup.ts'], testTimeout: 180_000, hookTimeout: 120_000 } },
    ],
  },
});
