import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { randomLowerAlnum } from '../../src/db/ids.ts';
import { aptInstall } from './apt.ts';

/**
 * A throwaway PostgreSQL cluster made with the machine's own initdb/pg_ctl. PostgreSQL refuses to
 * run as root, so as root the cluster belongs to the `postgres` user. When the server binaries are
 * missing, the Debian package is installed.
 */
export interface PostgresCluster {
  /** Connection URL of the `postgres` database, as the superuser. */
  url: string;
  stop(): void;
}

function findBinDir(): string | null {
  const fromPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  if (fromPath) return path.dirname(fs.realpathSync(fromPath));
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  const versions = fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')));
  versions.sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : null;
}

function ensureInstalled(): string {
  let binDir = findBinDir();
  if (binDir) return binDir;
  aptInstall('postgresql', 'PostgreSQL');
  binDir = findBinDir();
  if (!binDir) throw new Error('PostgreSQL was installed but initdb was not found');
  return binDir;
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * `settings`: further server settings (`-c name=value`), such as the memory a benchmark gives the
 * cluster (bench/lib/postgres-settings.ts).
 */
export async function startPostgres(settings: Record<string, string> = {}): Promise<PostgresCluster> {
  const binDir = ensureInstalled();
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-pg-'));
  const dataDir = path.join(dir, 'data');
  const socketDir = path.join(dir, 'sock');
  fs.mkdirSync(socketDir);
  if (asRoot) execFileSync('chown', ['-R', 'postgres:postgres', dir]);

  const run = (command: string, args: string[]) => {
    const file = path.join(binDir, command);
    const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
    const result = spawnSync(cmd, argv, { encoding: 'utf8', cwd: dir });
    if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr || result.stdout}`);
  };

  const port = await freePort();
  run('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8', '--no-sync']);
  // fsync off and a small shared buffer: this cluster holds test data only and must start fast.
  const extra = Object.entries(settings).map(([name, value]) => ` -c ${name}=${value}`).join('');
  const options = `-p ${port} -k ${socketDir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300${extra}`;
  run('pg_ctl', ['-D', dataDir, '-o', options, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', 'start']);

  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      try {
        run('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** The test cluster's database with every migration applied (test/support/postgres-global-setup.ts). */
export const MIGRATED_TEMPLATE = 'hoard_migrated';

/**
 * A new database in the cluster at `adminUrl`, empty or (`template`) a copy of another; returns its
 * URL.
 */
export async function createDatabase(adminUrl: string, prefix = 'hoard', template?: string): Promise<string> {
  const name = `${prefix}_${randomLowerAlnum(12)}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(template ? `create database ${name} template ${template}` : `create database ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Runs `work` while the database at `databaseUrl` cannot be used, as when PostgreSQL is stopped or
 * restarting: it refuses new connections and its sessions are ended. Reopened afterwards, whatever
 * `work` does. `adminUrl` names another database of the cluster to act from.
 */
export async function whileDatabaseClosed<T>(adminUrl: string, databaseUrl: string, work: () => Promise<T>): Promise<T> {
  const name = new URL(databaseUrl).pathname.slice(1);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`alter database ${name} with allow_connections false`);
    await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name]);
    return await work();
  } finally {
    await admin.query(`alter database ${name} with allow_connections true`);
    await admin.end();
  }
}
