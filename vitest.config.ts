import { defineConfig } from 'vitest/config';

// HTTP tests run twice: once on the embedded SQLite database and once on a throwaway PostgreSQL
// cluster that the postgres project's global setup starts.
const http = ['test/http/**/*.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 30_000,
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
