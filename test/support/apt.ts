import { execFileSync } from 'node:child_process';

/**
 * Installs a Debian package that the tests or the benchmark need and the machine lacks (PostgreSQL,
 * Chromium, wrk), as `.ci/run` does on a clean clone. It needs root; otherwise the error names the
 * command to run.
 */
export function aptInstall(pkg: string, what: string): void {
  if (process.getuid?.() !== 0 || process.platform !== 'linux') throw new Error(`${what} is not installed and installing it needs root: apt-get install ${pkg}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '-qq', pkg], { stdio: 'inherit', env });
}
