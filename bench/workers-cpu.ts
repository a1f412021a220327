/**
 * Where the CPU of an uncached listing goes, with one server process and with `WORKERS=2` (not a
 * test; docs/benchmarks.md, "Scale: the targets not met, and why"):
 *
 *   node bench/workers-cpu.ts [--db sqlite|postgres] [--files 100000] [--rounds 2] [--seconds 10]
 *
 * Seeds one account as `npm run bench` does, then puts the listing (`LISTING_CACHE_MB=0`) under wrk
 * at 32 connections, alternating one process and two, and prints per request the CPU of every Hoard
 * process (the cluster's primary included), of every PostgreSQL process and of wrk, read from
 * /proc. On a machine whose cores one process, its database and wrk already keep busy, this is what
 * bounds the rate two processes can reach.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { PostgresCluster } from '../test/support/postgres.ts';
import { startBenchPostgres } from './lib/postgres-settings.ts';
import { createPostgresDatabase, startHoard, startHoardProcess } from './lib/hoard.ts';
import { cpuSecondsOf } from './lib/child.ts';
import { requestRate } from './lib/load.ts';

const { values } = parseArgs({ options: { db: { type: 'string', default: 'postgres' }, files: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '2' }, seconds: { type: 'string', default: '10' } } });
if (values.db !== 'sqlite' && values.db !== 'postgres') throw new Error(`--db: sqlite or postgres, not ${values.db}`);
const dialect = values.db;

/** CPU seconds of every process whose command line matches (PostgreSQL's backends and Hoard's workers live through a run). */
function cpuOf(matches: (commandLine: string) => boolean): number {
  let seconds = 0;
  for (const pid of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let commandLine: string;
    try {
      commandLine = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    } catch {
      continue; // It ended between the listing and the read.
    }
    if (matches(commandLine)) seconds += cpuSecondsOf(Number(pid)) || 0;
  }
  return seconds;
}
// The postmaster runs as …/bin/postgres; its children retitle themselves "postgres: …".
const isPostgres = (commandLine: string) => /^(\S*\/)?postgres:? /.test(commandLine);
const isHoard = (commandLine: string) => commandLine.includes('src/main.ts');

const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-workers-cpu-'));
let cluster: PostgresCluster | null = null;
try {
  let databaseUrl: string | undefined;
  if (dialect === 'postgres') {
    cluster = await startBenchPostgres();
    databaseUrl = await createPostgresDatabase(cluster.url);
  }
  const hoard = await startHoard({ workDir, databaseUrl, files: Number(values.files), env: { LISTING_CACHE_MB: '0' } });
  const headers = { authorization: `Bearer ${hoard.token}` };
  const seconds = Number(values.seconds);
  const measure = async (name: string, url: string) => {
    await requestRate(url, { connections: 32, seconds: 2, warmupSeconds: 0, headers });
    const hoardBefore = cpuOf(isHoard);
    const postgresBefore = cpuOf(isPostgres);
    const rate = await requestRate(url, { connections: 32, seconds, warmupSeconds: 0, headers });
    const perRequest = (cpuSeconds: number) => Math.round((cpuSeconds / rate.requests) * 1e6);
    console.log(
      `${dialect} ${name}: ${rate.requestsPerSecond.toFixed(0)} req/s, p99 ${rate.p99Ms} ms; CPU per request: Hoard ${perRequest(cpuOf(isHoard) - hoardBefore)} µs, ` +
        `PostgreSQL ${perRequest(cpuOf(isPostgres) - postgresBefore)} µs, wrk ${rate.loadCpuMicrosPerRequest} µs`,
    );
  };
  let one = hoard.server;
  for (let round = 0; round < Number(values.rounds); round++) {
    await measure('one process', `${one.url}/api/files?limit=24`);
    await one.stop();
    const two = await startHoardProcess({ workDir, env: { ...hoard.env, WORKERS: '2' }, name: 'hoard-workers' });
    await measure('WORKERS=2', `${two.url}/api/files?limit=24`);
    await two.stop();
    one = await startHoardProcess({ workDir, env: hoard.env, name: 'hoard-one' });
  }
  await one.stop();
} finally {
  cluster?.stop();
  fs.rmSync(workDir, { recursive: true, force: true });
}
