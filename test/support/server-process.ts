import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, vi } from 'vitest';
import { freePort, migratedDatabaseUrl } from './server.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/**
 * A Hoard server in a process of its own (`node src/main.ts`), for tests that kill it with SIGKILL
 * and look at what it left behind: a fresh database and data directory, as production configures it.
 */
export interface ServerProcess {
  baseUrl: string;
  databaseUrl: string | undefined;
  dataDir: string;
  /** Starts the process and waits until it answers GET /api/health. */
  start(): Promise<void>;
  /** SIGKILL, and waits for the process to be gone. */
  kill(): Promise<void>;
  /** Ends a process still running (for `finally`). */
  stop(): void;
  /** The process ID, while it runs. */
  pid(): number | undefined;
  /** Sends a signal and waits for the process to exit; resolves with its exit code. */
  signal(name: NodeJS.Signals): Promise<number | null>;
}

export interface ServerProcessOptions {
  /**
   * DATA_DIR on a file system of its own of this many bytes (a tmpfs mounted in a user and mount
   * namespace of the process's own, gone with it), for tests of a disk that fills up. The test
   * process reaches it through `/proc/<pid>/root`.
   */
  diskBytes?: number;
  /** Every line the process writes to stdout (its log), as it comes; else its output is dropped. */
  output?: string[];
}

export async function serverProcess(env: Record<string, string>, dataDirPrefix = 'hoard-process-', options: ServerProcessOptions = {}): Promise<ServerProcess> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const databaseUrl = await migratedDatabaseUrl();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), dataDirPrefix));
  const fullEnv: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: baseUrl,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    CHECK_RESPONSES: 'true',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...env,
  };
  let child: ChildProcess | null = null;
  const running = () => child !== null && child.exitCode === null && child.signalCode === null;
  return {
    baseUrl,
    databaseUrl,
    dataDir,
    async start() {
      const started =
        options.diskBytes === undefined
          ? spawn(process.execPath, ['src/main.ts'], { cwd: repoRoot, env: fullEnv, stdio: ['ignore', options.output ? 'pipe' : 'ignore', 'ignore'] })
          : spawn(
              'unshare',
              ['--user', '--map-root-user', '--mount', 'sh', '-c', `mount -t tmpfs -o size=${options.diskBytes} hoard-test "$DATA_DIR" && exec "$0" src/main.ts`, process.execPath],
              { cwd: repoRoot, env: fullEnv, stdio: ['ignore', 'ignore', 'inherit'] },
            );
      child = started;
      if (options.output && started.stdout) {
        let pending = '';
        started.stdout.setEncoding('utf8').on('data', (text: string) => {
          const lines = (pending + text).split('\n');
          pending = lines.pop()!;
          options.output!.push(...lines);
        });
      }
      await vi.waitFor(
        async () => {
          expect(started.exitCode).toBeNull();
          expect((await fetch(`${baseUrl}/api/health`)).status).toBe(200);
        },
        { timeout: 20_000, interval: 100 },
      );
    },
    async kill() {
      if (!child || !running()) return;
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
    stop() {
      if (running()) child!.kill('SIGKILL');
    },
    pid() {
      return running() ? child!.pid : undefined;
    },
    async signal(name) {
      if (!child || !running()) return child?.exitCode ?? null;
      const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
      child.kill(name);
      return exited;
    },
  };
}
