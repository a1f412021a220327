import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchDir } from './child.ts';

export interface ImportBenchResult {
  /** Files imported (all of them: the run fails otherwise). */
  files: number;
  /** The import's own time as its summary reports it: from reading the tree to the last commit. */
  seconds: number;
  filesPerSecond: number;
}

const ACCOUNT = { email: 'import@example.test', password: 'benchmark password 1' } as const;
/** Files per directory of the generated tree. */
const PER_DIRECTORY = 1_000;

/**
 * `npm run cli -- import` of `files` files of `fileBytes` random bytes each (so every file is
 * stored: none is the same as another), in a nested tree of PER_DIRECTORY files per directory,
 * into the first account of a fresh SQLite instance on local disk, under `workDir` (a new
 * directory under the system's temporary directory by default, removed afterwards). The command
 * runs as an operator would run it, in a process of its own with the instance's environment only.
 */
export async function benchImport(options: { files?: number; fileBytes?: number; workDir?: string } = {}): Promise<ImportBenchResult> {
  const files = options.files ?? 20_000;
  const fileBytes = options.fileBytes ?? 10 * 1024;
  const ownDir = options.workDir === undefined;
  const workDir = options.workDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-bench-import-'));
  try {
    const tree = path.join(workDir, 'library');
    for (let i = 0; i < files; i++) {
      const dir = path.join(tree, `d${String(Math.floor(i / PER_DIRECTORY)).padStart(3, '0')}`);
      if (i % PER_DIRECTORY === 0) fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, `f${String(i).padStart(6, '0')}.bin`), randomBytes(fileBytes));
    }
    const env = { DATA_DIR: path.join(workDir, 'data'), LOG_LEVEL: 'warn' };
    await cli(workDir, env, ['user', 'create', '--email', ACCOUNT.email, '--password', ACCOUNT.password]);
    const summary = await cli(workDir, env, ['import', tree, '--email', ACCOUNT.email]);
    const imported = Number(/^imported: (\d+) files/m.exec(summary)?.[1]);
    const seconds = Number(/^seconds: ([\d.]+)/m.exec(summary)?.[1]);
    if (imported !== files || !(seconds > 0)) throw new Error(`the import did not import every file:\n${summary}`);
    return { files, seconds, filesPerSecond: files / seconds };
  } finally {
    if (ownDir) fs.rmSync(workDir, { recursive: true, force: true });
  }
}

/** Runs `node src/cli/main.ts …` in `cwd` (no .env of the repository) and returns its stdout. */
function cli(cwd: string, env: Record<string, string>, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [benchDir('..', 'src', 'cli', 'main.ts'), ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`cli ${args[0]} exited with ${code}: ${stderr.trim().split('\n').at(-1)}`))));
  });
}
