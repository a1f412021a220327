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
      // The unit and HTTP files share their worker's loaded modules instead of loading the whole
      // server again for each file (1.7 s of compiling and importing a file, a sixth of the suite's
      // time on two cores): eight HTTP files took 34 s and 58 s of CPU in one worker, now 23 s and
      // 38 s. Each file still starts servers, directories and databases of its own, and
      // test/support/temporary-directory.ts runs again for each file.
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], isolate: false } },
      { extends: true, test: { name: 'sqlite', include: http, isolate: false } },
      { extends: true, test: { name: 'postgres', include: http, globalSetup: ['test/support/postgres-global-setup.ts'], isolate: false } },
      // The web app in a real Chromium against a real server (SQLite); builds web/dist when needed.
      { extends: true, test: { name: 'browser', include: ['test/browser/**/*.test.ts'], globalSetup: ['test/browser/global-setup.ts'], testTimeout: 180_000, hookTimeout: 120_000 } },
    ],
  },
});
