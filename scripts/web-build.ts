import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The web app's sources and its build output (web/vite.config.ts, docs/web.md). */
export const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const webDir = path.join(repoRoot, 'web');
export const webIndex = path.join(webDir, 'dist', 'index.html');
const viteBin = path.join(repoRoot, 'node_modules', 'vite', 'bin', 'vite.js');

/**
 * What the web app is built from: its own sources, and the API's modules it imports (`@api`: the
 * response types, and the vocabulary and display texts it bundles), paths from the repository root.
 */
const webSources = ['web/src', 'web/index.html', 'web/vite.config.ts', 'web/tsconfig.json', 'src/api'];

function newestSourceTime(root: string): number {
  let newest = 0;
  const visit = (file: string) => {
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat) return;
    if (stat.isDirectory()) {
      for (const entry of fs.readdirSync(file)) visit(path.join(file, entry));
    } else {
      newest = Math.max(newest, stat.mtimeMs);
    }
  };
  for (const source of webSources) visit(path.join(root, source));
  return newest;
}

/**
 * Why the web app needs building, or null when web/dist is present and newer than every source
 * (so a `git pull` that changes the app is rebuilt on the next start). `root`: the repository's.
 */
export function webBuildReason(root = repoRoot): string | null {
  const built = fs.statSync(path.join(root, 'web', 'dist', 'index.html'), { throwIfNoEntry: false });
  if (!built) return 'web/dist/index.html is missing';
  if (newestSourceTime(root) > built.mtimeMs) return 'its sources (web/, src/api/) changed since the last build';
  return null;
}

/**
 * Builds the app with the project's own Vite, in a child process, when it is missing or stale.
 * Returns false (after saying why) when it cannot be built, e.g. after `npm ci --omit=dev`.
 */
export function ensureWebBuild(log: (line: string) => void = (line) => console.error(line)): boolean {
  const reason = webBuildReason();
  if (reason === null) return true;
  if (!fs.existsSync(viteBin)) {
    log(`hoard: ${reason} and Vite is not installed (npm ci installs it); the web interface is unavailable, the API works.`);
    return fs.existsSync(webIndex);
  }
  log(`hoard: building the web interface (${reason})…`);
  // NODE_ENV=production whatever the caller runs under (vitest sets `test`, which would give
  // React's development build).
  const result = spawnSync(process.execPath, [viteBin, 'build', '--config', path.join(webDir, 'vite.config.ts'), '--logLevel', 'warn'], {
    cwd: repoRoot,
    stdio: 'inherit',
    env: { ...process.env, NODE_ENV: 'production' },
  });
  if (result.status !== 0) {
    log('hoard: building the web interface failed (see above); the API still starts.');
    return false;
  }
  return true;
}
