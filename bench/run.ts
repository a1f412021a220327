/**
 * `npm run bench`: Hoard's performance figures, each measured in one run side by side with a baseline
 * on the same machine (docs/benchmarks.md explains the method). Not part of `npm test`.
 *
 *   npm run bench                         full run: writes bench/results.json, docs/benchmarks.md, README
 *   npm run bench -- --only uploads       sections: uploads, sqlite, postgres, archives, media, web (comma-separated);
 *                                         a partial run prints its table and writes nothing unless --write
 *   npm run bench -- --size 256 --files 20000 --reps 1 --seconds 5     quicker, smaller (for debugging)
 *   npm run bench -- --only archives --archive-size 128                 archives of 128 MiB instead of 1 GiB
 *   npm run bench -- --keep               leave the working directory (data, server logs) in place
 *   npm run bench -- --render             rewrite docs/benchmarks.md and README.md from bench/results.json
 *   npm run bench -- --scale              add the scale section: 100,000 and 1,000,000 files on both databases, and the import
 *   npm run bench -- --only scale --scale-files 100000 --scale-dialects sqlite     a part of it
 *
 * Every server under test is its own process (`node src/main.ts`, the baselines likewise), started
 * with environment variables only, so its memory can be read from /proc/<pid>/status.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import type { PostgresCluster } from '../test/support/postgres.ts';
import { startBenchPostgres } from './lib/postgres-settings.ts';
import { benchDir, freePort, MemoryWatch, memoryOf, startChild, type ChildServer } from './lib/child.ts';
import { createPostgresDatabase, SEARCH_TERM, startHoard, startHoardProcess, type HoardInstance } from './lib/hoard.ts';
import { ensureWrk, getJson, latency, requestRate } from './lib/load.ts';
import { figure, textTable, writeReports, type Figure, type Results } from './lib/report.ts';
import { GiB, MiB, smallFileUploads, timedChunkedUpload, timedMultipartUpload } from './lib/uploads.ts';
import { archivesSection } from './lib/archives.ts';
import { mediaSection } from './lib/media.ts';
import { scaleSection } from './lib/scale.ts';
import { webSection } from './lib/web.ts';
import { median, mb, round } from './lib/stats.ts';

const { values: args } = parseArgs({
  options: {
    only: { type: 'string' },
    size: { type: 'string', default: '1024' },
    // MiB extracted and archived per run (the archives section; 16 MiB entries).
    'archive-size': { type: 'string', default: '1024' },
    files: { type: 'string', default: '100000' },
    reps: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '10' },
    write: { type: 'boolean', default: false },
    render: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    scale: { type: 'boolean', default: false },
    'scale-files': { type: 'string', default: '100000,1000000' },
    'scale-dialects': { type: 'string', default: 'sqlite,postgres' },
    'scale-runs': { type: 'string', default: '15' },
  },
});
// --render: rewrite the docs' results blocks from bench/results.json, measuring nothing.
if (args.render) {
  const root = benchDir('..');
  const saved = JSON.parse(fs.readFileSync(path.join(root, 'bench', 'results.json'), 'utf8')) as Results;
  writeReports(root, saved);
  console.log(textTable(saved.figures));
  process.exit(0);
}

const allSections = ['uploads', 'sqlite', 'postgres', 'archives', 'media', 'web'] as const;
// Long (it seeds a million files per database): only with --scale or --only scale.
const optionalSections = ['scale'] as const;
type Section = (typeof allSections)[number] | (typeof optionalSections)[number];
const known: readonly Section[] = [...allSections, ...optionalSections];
const sections = new Set<Section>(args.only ? (args.only.split(',') as Section[]) : [...allSections, ...(args.scale ? (['scale'] as const) : [])]);
for (const s of sections) if (!known.includes(s)) throw new Error(`--only: unknown section ${s} (${known.join(', ')})`);
const uploadBytes = Number(args.size) * MiB;
const archiveBytes = Number(args['archive-size']) * MiB;
const seededFiles = Number(args.files);
const reps = Number(args.reps);
const rateSeconds = Number(args.seconds);
const fullRun = allSections.every((s) => sections.has(s)) && uploadBytes === GiB && archiveBytes === GiB && seededFiles === 100_000 && rateSeconds === 10;
const write = fullRun || args.write;

const PART_BYTES = 64 * MiB;
const CONNECTIONS = 32;
const SMALL_FILE_BYTES = 10 * 1024;
const SMALL_FILE_CONCURRENCY = 16;

const root = benchDir('..');
const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-bench-'));
const children: ChildServer[] = [];
let cluster: PostgresCluster | null = null;
const figures: Figure[] = [];
const details: Record<string, unknown> = {};
const runStarted = performance.now();

function log(message: string): void {
  const seconds = ((performance.now() - runStarted) / 1000).toFixed(0).padStart(4);
  console.log(`[${seconds} s] ${message}`);
}

function vitestProcesses(): number {
  const ps = spawnSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).stdout ?? '';
  return ps.split('\n').filter((line) => /vitest/.test(line) && !/\bps -eo\b/.test(line)).length;
}

function syncDisks(): void {
  spawnSync('sync');
}


async function cleanup(): Promise<void> {
  for (const child of children.splice(0)) await child.stop().catch(() => undefined);
  try {
    cluster?.stop();
  } catch {
    // already gone
  }
  cluster = null;
  if (!args.keep) fs.rmSync(workDir, { recursive: true, force: true });
}
process.on('SIGINT', () => void cleanup().then(() => process.exit(130)));

/** Removes every stored object of a Hoard instance (the benchmark does not need the bytes afterwards). */
function removeStoredBytes(instance: HoardInstance): void {
  fs.rmSync(path.join(instance.dataDir, 'files'), { recursive: true, force: true });
}

async function uploadsSection(): Promise<void> {
  log(`uploads: ${uploadBytes / MiB} MiB single and chunked (${PART_BYTES / MiB} MiB parts) vs a bare node:http pipe-to-file server, ${reps} repetitions`);
  const baselineDir = path.join(workDir, 'baseline-uploads');
  fs.mkdirSync(baselineDir);
  const baselinePort = await freePort();
  const baseline = await startChild({ name: 'baseline-upload', script: path.join(root, 'bench', 'servers', 'baseline-upload.ts'), env: { PORT: String(baselinePort), DIR: baselineDir }, cwd: workDir, port: baselinePort, readyPath: '/', logFile: path.join(workDir, 'baseline-upload.log') });
  children.push(baseline);
  const hoard = await startHoard({ workDir: path.join(workDir, 'uploads') });
  children.push(hoard.server);
  const auth = { authorization: `Bearer ${hoard.token}` };
  // For the record: the process's own peak so far (start-up), and what it holds once started.
  const started = memoryOf(hoard.server.pid);

  // Warm both up (code paths compiled, connections and directories made).
  await timedMultipartUpload(`${baseline.url}/upload`, 16 * MiB);
  await timedMultipartUpload(`${hoard.server.url}/api/files`, 16 * MiB, auth);
  await timedChunkedUpload(hoard.server.url, hoard.token, 2 * PART_BYTES, PART_BYTES);
  removeStoredBytes(hoard);
  fs.rmSync(baselineDir, { recursive: true, force: true });
  fs.mkdirSync(baselineDir);

  const runs = { baseline: [] as number[], single: [] as number[], chunked: [] as number[], chunkedComplete: [] as number[], chunkedParts: [] as number[], singleRss: [] as number[], singleStartRss: [] as number[], chunkedRss: [] as number[], baselineRss: [] as number[], baselineCpu: [] as number[], singleCpu: [] as number[], chunkedCpu: [] as number[], singleTail: [] as number[] };
  const steps: Record<'baseline' | 'single' | 'chunked', () => Promise<void>> = {
    baseline: async () => {
      const watch = new MemoryWatch(baseline.pid);
      const { seconds } = await timedMultipartUpload(`${baseline.url}/upload`, uploadBytes);
      const memory = watch.stop();
      runs.baselineRss.push(memory.peakRss);
      runs.baselineCpu.push(memory.cpuSeconds);
      runs.baseline.push(seconds);
      fs.rmSync(baselineDir, { recursive: true, force: true });
      fs.mkdirSync(baselineDir);
    },
    single: async () => {
      const watch = new MemoryWatch(hoard.server.pid);
      const { seconds, bodySentSeconds, response } = await timedMultipartUpload(`${hoard.server.url}/api/files`, uploadBytes, auth);
      const memory = watch.stop();
      runs.singleCpu.push(memory.cpuSeconds);
      runs.singleTail.push(seconds - bodySentSeconds);
      if (!response?.data?.url) throw new Error(`unexpected upload answer: ${JSON.stringify(response)}`);
      runs.single.push(seconds);
      runs.singleRss.push(memory.peakRss);
      runs.singleStartRss.push(memory.startRss);
      removeStoredBytes(hoard);
    },
    chunked: async () => {
      const watch = new MemoryWatch(hoard.server.pid);
      const result = await timedChunkedUpload(hoard.server.url, hoard.token, uploadBytes, PART_BYTES);
      const memory = watch.stop();
      runs.chunkedRss.push(memory.peakRss);
      runs.chunkedCpu.push(memory.cpuSeconds);
      runs.chunked.push(result.seconds);
      runs.chunkedComplete.push(result.completeSeconds);
      runs.chunkedParts.push(result.partsSeconds);
      removeStoredBytes(hoard);
    },
  };
  const order = ['baseline', 'single', 'chunked'] as const;
  for (let rep = 0; rep < reps; rep++) {
    // The order rotates, so no kind always runs right after another's writeback.
    for (let i = 0; i < order.length; i++) {
      const step = order[(rep + i) % order.length]!;
      syncDisks();
      await steps[step]();
      const last = runs[step][runs[step].length - 1]!;
      const cpu = runs[`${step}Cpu`][runs[`${step}Cpu`].length - 1]!;
      log(`  rep ${rep + 1} ${step.padEnd(8)} ${mb(uploadBytes, last).toFixed(0).padStart(4)} MB/s (${last.toFixed(2)} s; server CPU ${cpu.toFixed(2)} s)`);
    }
  }
  syncDisks();
  const baselineMbps = mb(uploadBytes, median(runs.baseline));
  const sizeLabel = uploadBytes === GiB ? '1 GiB' : `${uploadBytes / MiB} MiB`;
  figures.push(
    figure({
      id: 'upload.single.throughput',
      label: `${sizeLabel} upload, POST /api/files (multipart, named token)`,
      unit: 'MB/s',
      value: mb(uploadBytes, median(runs.single)),
      baseline: baselineMbps,
      baselineLabel: 'node:http pipe',
      target: { on: 'ratio', op: '>=', value: 0.9 },
      detail: {
        secondsPerRun: runs.single.map((s) => round(s, 3)),
        secondsAfterLastByteSentPerRun: runs.singleTail.map((s) => round(s, 3)),
        serverCpuSecondsPerRun: runs.singleCpu.map((s) => round(s, 2)),
        baselineSecondsPerRun: runs.baseline.map((s) => round(s, 3)),
        baselineServerCpuSecondsPerRun: runs.baselineCpu.map((s) => round(s, 2)),
      },
    }),
    figure({
      id: 'upload.single.peakRss',
      label: `server peak RSS during the ${sizeLabel} upload`,
      unit: 'MiB',
      value: Math.max(...runs.singleRss) / MiB,
      baseline: null,
      baselineLabel: null,
      target: { on: 'value', op: '<', value: 150 },
      detail: {
        method: 'VmHWM reset (clear_refs 5) before each upload, VmRSS polled every 10 ms; the larger of the two',
        peakRssPerRunMiB: runs.singleRss.map((b) => round(b / MiB, 1)),
        rssBeforeUploadMiB: runs.singleStartRss.map((b) => round(b / MiB, 1)),
        afterStartRssMiB: started ? round(started.rss / MiB, 1) : null,
        startUpPeakRssMiB: started ? round(started.hwm / MiB, 1) : null,
        baselinePeakRssMiB: runs.baselineRss.map((b) => round(b / MiB, 1)),
      },
    }),
    figure({
      id: 'upload.chunked.throughput',
      label: `${sizeLabel} chunked upload (init, ${Math.ceil(uploadBytes / PART_BYTES)} × ${PART_BYTES / MiB} MiB PUT, complete)`,
      unit: 'MB/s',
      value: mb(uploadBytes, median(runs.chunked)),
      baseline: baselineMbps,
      baselineLabel: 'node:http pipe',
      target: { on: 'ratio', op: '>=', value: 0.7 },
      detail: {
        secondsPerRun: runs.chunked.map((s) => round(s, 3)),
        partsSecondsPerRun: runs.chunkedParts.map((s) => round(s, 3)),
        completionSecondsPerRun: runs.chunkedComplete.map((s) => round(s, 3)),
        peakRssPerRunMiB: runs.chunkedRss.map((b) => round(b / MiB, 1)),
        serverCpuSecondsPerRun: runs.chunkedCpu.map((s) => round(s, 2)),
      },
    }),
  );
  for (const child of [hoard.server, baseline]) {
    await child.stop();
    children.splice(children.indexOf(child), 1);
  }
}

let helloBaseline: ChildServer | null = null;
async function helloWorld(): Promise<ChildServer> {
  if (helloBaseline) return helloBaseline;
  const port = await freePort();
  helloBaseline = await startChild({ name: 'baseline-hello', script: path.join(root, 'bench', 'servers', 'baseline-hello.ts'), env: { PORT: String(port) }, cwd: workDir, port, readyPath: '/', logFile: path.join(workDir, 'baseline-hello.log') });
  children.push(helloBaseline);
  return helloBaseline;
}

async function databaseSection(dialect: 'sqlite' | 'postgres'): Promise<void> {
  const label = dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  let databaseUrl: string | undefined;
  if (dialect === 'postgres') {
    log('postgres: starting a throwaway cluster');
    cluster = await startBenchPostgres();
    databaseUrl = await createPostgresDatabase(cluster.url);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    details.postgresVersion = (await client.query('show server_version')).rows[0].server_version;
    await client.end();
  }
  log(`${dialect}: seeding an account with ${seededFiles.toLocaleString('en')} files`);
  const hoard = await startHoard({ workDir: path.join(workDir, dialect), databaseUrl, files: seededFiles });
  children.push(hoard.server);
  log(`${dialect}: seeded in ${hoard.seedSeconds.toFixed(1)} s; server pid ${hoard.server.pid}`);
  const auth = { authorization: `Bearer ${hoard.token}` };
  const base = hoard.server.url;

  const listUrl = `${base}/api/files?limit=24`;
  const check = await getJson(listUrl, auth);
  if (check.pagination.total !== seededFiles || check.data.length !== Math.min(24, seededFiles)) throw new Error(`${dialect}: listing answered ${check.pagination.total} files / ${check.data.length} items`);
  const hello = await helloWorld();

  log(`${dialect}: GET /api/files?limit=24 at ${CONNECTIONS} connections for ${rateSeconds} s, then the hello-world baseline`);
  const listing = await requestRate(listUrl, { connections: CONNECTIONS, seconds: rateSeconds, warmupSeconds: 2, headers: auth, serverPid: hoard.server.pid });
  const baseline = await requestRate(`${hello.url}/`, { connections: CONNECTIONS, seconds: rateSeconds, warmupSeconds: 2, serverPid: hello.pid });
  log(
    `${dialect}:   listing ${listing.requestsPerSecond.toFixed(0)} req/s (p99 ${listing.p99Ms} ms, ${listing.serverCpuMicrosPerRequest} µs server CPU per request), hello world ${baseline.requestsPerSecond.toFixed(0)} req/s (${baseline.serverCpuMicrosPerRequest} µs)`,
  );

  // The same listing from a second process on the same database with the listing cache off: what
  // every request costs when the account changes between requests. Search and timeline are timed
  // there too, so that they measure their queries, not the cache.
  const uncachedServer = await startHoardProcess({ workDir: path.join(workDir, dialect), env: { ...hoard.env, LISTING_CACHE_MB: '0' }, name: `hoard-${dialect}-uncached` });
  children.push(uncachedServer);
  const uncachedBase = uncachedServer.url;
  log(`${dialect}: the same listing with the listing cache off`);
  const uncached = await requestRate(`${uncachedBase}/api/files?limit=24`, { connections: CONNECTIONS, seconds: rateSeconds, warmupSeconds: 2, headers: auth, serverPid: uncachedServer.pid });
  log(`${dialect}:   uncached listing ${uncached.requestsPerSecond.toFixed(0)} req/s (p99 ${uncached.p99Ms} ms, ${uncached.serverCpuMicrosPerRequest} µs server CPU per request)`);

  const searchUrl = `${uncachedBase}/api/files?limit=24&search=${encodeURIComponent(SEARCH_TERM)}`;
  const searchAnswer = await getJson(searchUrl, auth);
  const search = await latency(searchUrl, { runs: 50, warmup: 5, headers: auth });
  const rareUrl = `${uncachedBase}/api/files?limit=24&search=f12345`;
  const rare = await latency(rareUrl, { runs: 50, warmup: 5, headers: auth });
  const timelineUrl = `${uncachedBase}/api/files/timeline?groupBy=month`;
  const timelineAnswer = await getJson(timelineUrl, auth);
  const timeline = await latency(timelineUrl, { runs: 50, warmup: 5, headers: auth });
  log(`${dialect}:   search median ${search.medianMs.toFixed(1)} ms (${searchAnswer.pagination.total} matches), timeline median ${timeline.medianMs.toFixed(1)} ms (${timelineAnswer.data.buckets.length} buckets)`);

  await uncachedServer.stop();
  children.splice(children.indexOf(uncachedServer), 1);

  log(`${dialect}: ${SMALL_FILE_BYTES / 1024} KiB uploads, ${SMALL_FILE_CONCURRENCY} concurrent, ${rateSeconds} s`);
  const small = await smallFileUploads(base, hoard.token, { size: SMALL_FILE_BYTES, concurrency: SMALL_FILE_CONCURRENCY, seconds: rateSeconds, warmupSeconds: 2 });
  log(`${dialect}:   ${small.filesPerSecond.toFixed(0)} files/s (p50 ${small.p50Ms.toFixed(1)} ms, p99 ${small.p99Ms.toFixed(1)} ms, ${small.failures} failures)`);

  const n = seededFiles.toLocaleString('en');
  figures.push(
    figure({
      id: `listing.${dialect}.rate`,
      label: `${label}: GET /api/files?limit=24, ${n} files, ${CONNECTIONS} conn.`,
      unit: 'req/s',
      value: listing.requestsPerSecond,
      baseline: baseline.requestsPerSecond,
      baselineLabel: 'Fastify hello world',
      target: { on: 'ratio', op: '>=', value: dialect === 'sqlite' ? 0.1 : 0.05 },
      detail: { listing, baseline },
    }),
    figure({ id: `listing.${dialect}.p99`, label: `${label}: GET /api/files?limit=24 p99 latency`, unit: 'ms', value: listing.p99Ms, baseline: null, baselineLabel: null, target: { on: 'value', op: '<', value: 50 } }),
    figure({
      id: `listing.${dialect}.uncachedRate`,
      label: `${label}: the same, listing cache off (every request queried)`,
      unit: 'req/s',
      value: uncached.requestsPerSecond,
      baseline: baseline.requestsPerSecond,
      baselineLabel: 'Fastify hello world',
      target: null,
      detail: { uncached },
    }),
    figure({ id: `listing.${dialect}.uncachedP99`, label: `${label}: the same, listing cache off, p99 latency`, unit: 'ms', value: uncached.p99Ms, baseline: null, baselineLabel: null, target: { on: 'value', op: '<', value: 50 } }),
    figure({
      id: `listing.${dialect}.search`,
      label: `${label}: search=${SEARCH_TERM} (${searchAnswer.pagination.total} matches) median`,
      unit: 'ms',
      value: search.medianMs,
      baseline: null,
      baselineLabel: null,
      target: { on: 'value', op: '<', value: 25 },
      detail: { ...search, rareTerm: 'f12345', rareMedianMs: rare.medianMs, rareP99Ms: rare.p99Ms },
    }),
    figure({
      id: `listing.${dialect}.timeline`,
      label: `${label}: timeline?groupBy=month (${timelineAnswer.data.buckets.length} buckets) median`,
      unit: 'ms',
      value: timeline.medianMs,
      baseline: null,
      baselineLabel: null,
      target: { on: 'value', op: '<', value: 50 },
      detail: timeline,
    }),
    figure({
      id: `smallFiles.${dialect}.rate`,
      label: `${label}: ${SMALL_FILE_BYTES / 1024} KiB uploads, ${SMALL_FILE_CONCURRENCY} concurrent`,
      unit: 'files/s',
      value: small.filesPerSecond,
      baseline: null,
      baselineLabel: null,
      target: null,
      detail: small,
    }),
  );
  details[`${dialect}SeedSeconds`] = round(hoard.seedSeconds, 1);
  await hoard.server.stop();
  children.splice(children.indexOf(hoard.server), 1);
  if (dialect === 'postgres') {
    cluster?.stop();
    cluster = null;
  }
}

function machine() {
  const fsType = spawnSync('findmnt', ['-n', '-o', 'FSTYPE', '-T', workDir], { encoding: 'utf8' }).stdout?.trim() || 'unknown';
  const sqlite = new Sqlite(':memory:');
  const sqliteVersion = (sqlite.prepare('select sqlite_version() as v').get() as { v: string }).v;
  sqlite.close();
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.availableParallelism(),
    memoryGiB: round(os.totalmem() / GiB, 1),
    kernel: `${os.type()} ${os.release()}`,
    filesystem: fsType,
    node: process.version,
    sqlite: sqliteVersion,
    // Checked (and installed when missing) before anything is seeded, so a missing tool stops the run at once.
    wrk: ensureWrk(),
  };
}

const startLoad = { vitestProcesses: vitestProcesses(), loadAverage: os.loadavg().map((l) => round(l)) };
if (startLoad.vitestProcesses > 0) log(`WARNING: ${startLoad.vitestProcesses} vitest processes are running: these figures are taken under load`);
const machineInfo = machine();
log(`machine: ${machineInfo.cpu}, ${machineInfo.cores} cores, ${machineInfo.memoryGiB} GiB, ${machineInfo.kernel}, ${machineInfo.filesystem}, Node ${machineInfo.node}, wrk ${machineInfo.wrk}; work dir ${workDir}`);

let failed: unknown = null;
try {
  if (sections.has('uploads')) await uploadsSection();
  if (sections.has('sqlite')) await databaseSection('sqlite');
  if (sections.has('postgres')) await databaseSection('postgres');
  if (sections.has('archives')) figures.push(...(await archivesSection({ root, workDir, archiveBytes, reps, log, children, syncDisks })));
  if (sections.has('media')) figures.push(...(await mediaSection({ workDir, reps, seconds: rateSeconds, log, children })));
  if (sections.has('web')) figures.push(...(await webSection({ workDir, log, children })));
  if (sections.has('scale')) {
    figures.push(
      ...(await scaleSection({
        workDir,
        sizes: args['scale-files'].split(',').map(Number),
        dialects: args['scale-dialects'].split(',') as Array<'sqlite' | 'postgres'>,
        seconds: rateSeconds,
        runs: Number(args['scale-runs']),
        log,
        children,
        helloWorld,
      })),
    );
  }
} catch (error) {
  failed = error;
} finally {
  if (failed && args.keep === false) console.error(`(server logs are removed; run with --keep to keep ${workDir})`);
  await cleanup();
}
if (failed) throw failed;

const endLoad = { vitestProcesses: vitestProcesses(), loadAverage: os.loadavg().map((l) => round(l)) };
const underLoad = startLoad.vitestProcesses > 0 || endLoad.vitestProcesses > 0;
const totalSeconds = (performance.now() - runStarted) / 1000;
const order = ['upload.single.throughput', 'upload.single.peakRss', 'upload.chunked.throughput'];
figures.sort((a, b) => {
  const rank = (f: Figure) => (order.includes(f.id) ? order.indexOf(f.id) : f.id.startsWith('listing.sqlite') ? 10 : f.id.startsWith('listing.postgres') ? 20 : f.id.startsWith('smallFiles.') ? 30 : 40);
  return rank(a) - rank(b);
});

console.log('');
console.log(textTable(figures));
console.log('');
const passed = figures.filter((f) => f.pass === true).length;
const targeted = figures.filter((f) => f.pass !== null).length;
console.log(`${passed}/${targeted} targets met; ${totalSeconds.toFixed(0)} s in all${underLoad ? '; TAKEN UNDER LOAD (test runs were active)' : ''}`);

const generatedAt = new Date().toISOString();
const results: Results = {
  generatedAt,
  totalSeconds: round(totalSeconds, 1),
  machine: { ...machineInfo, ...(details.postgresVersion ? { postgres: details.postgresVersion } : {}) },
  load: { atStart: startLoad, atEnd: endLoad, underLoad },
  settings: { uploadBytes, archiveBytes, partBytes: PART_BYTES, repetitions: reps, seededFiles, connections: CONNECTIONS, rateSeconds, smallFileBytes: SMALL_FILE_BYTES, smallFileConcurrency: SMALL_FILE_CONCURRENCY, searchTerm: SEARCH_TERM, logLevel: process.env.BENCH_LOG_LEVEL ?? 'info' },
  figures,
  details,
};

if (!write) {
  console.log('(a partial or resized run: nothing written; pass --write to write the results anyway)');
} else {
  fs.writeFileSync(path.join(root, 'bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeReports(root, results);
  console.log('wrote bench/results.json, docs/benchmarks.md and the Performance section of README.md');
}
