import { spawn } from 'node:child_process';

/**
 * Runs the command-line tool (`src/cli/main.ts`) with `env` and waits for it without blocking. The
 * server under test answers from the test's own process: waiting with spawnSync froze it with its
 * connections for as long as the tool ran, and after that an idle connection's overdue time-out
 * could fire as the next request arrived on it, resetting that request (ECONNRESET, once, on a
 * loaded machine).
 */
export function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['src/cli/main.ts', ...args], { env, timeout: 30_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}
