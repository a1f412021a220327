/**
 * The archive figures (contract §9; method in docs/benchmarks.md): the manifest of a 10,000-entry ZIP,
 * extracting a ZIP of stored, incompressible entries and creating a ZIP of as many stored files, each
 * throughput beside a bare node:http pipe-to-file upload of the same number of bytes measured in the
 * same run, and the server's peak RSS during each beside its RSS at rest right before.
 *
 * The archive routes take the browser session only (any Authorization header is the generic 401), so
 * the client signs in with the instance's first account and sends its session cookie, with the Origin
 * a browser sends on a mutating request; plain uploads of the sources use the named token.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import yauzl from 'yauzl';
import { manyEntriesZip } from '../../test/support/archives.ts';
import { freePort, MemoryWatch, memoryOf, startChild, type ChildServer } from './child.ts';
import { BENCH_ACCOUNT, startHoard } from './hoard.ts';
import { latency } from './load.ts';
import { figure, type Figure } from './report.ts';
import { GiB, MiB, send, timedMultipartUpload, type HttpResult } from './uploads.ts';
import { median, mb, round } from './stats.ts';
import { archiveLimits } from '../../src/api/vocabulary.ts';

/** Every entry (extraction) and every source file (creation) is this big; the count follows from the total. */
export const ARCHIVE_ENTRY_BYTES = 16 * MiB;
/** Entries of the manifest's ZIP: the contract's listing limit (§9). */
export const MANIFEST_ENTRIES: number = archiveLimits.manifestEntries;


/** A browser session of the instance's first account, for the archive routes. */
export interface Session {
  base: string;
  cookie: string;
}

export async function signIn(base: string): Promise<Session> {
  const response = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', origin: base }, body: JSON.stringify(BENCH_ACCOUNT) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`sign-in: HTTP ${response.status} ${text.slice(0, 300)}`);
  const cookie = response.headers
    .getSetCookie()
    .map((line) => line.split(';')[0]!)
    .find((pair) => pair.startsWith('hoard_session='));
  if (!cookie) throw new Error('sign-in: no hoard_session cookie');
  return { base, cookie };
}

/** A session request (cookie, and Origin on anything but GET), its JSON answer checked against `status`. */
export async function sessionJson(session: Session, method: string, url: string, status: number, body?: unknown): Promise<any> {
  const headers: Record<string, string> = { cookie: session.cookie };
  if (method !== 'GET') headers.origin = session.base;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const result: HttpResult = await send(`${session.base}${url}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  if (result.status !== status) throw new Error(`${method} ${url}: HTTP ${result.status} ${result.body.slice(0, 500)}`);
  return result.body ? JSON.parse(result.body) : null;
}

/** A file ID from the upload links of contract §5 (`downloadUrl` is /api/files/{id}/download). */
export const fileIdOf = (links: { downloadUrl: string }) => links.downloadUrl.split('/').at(-2)!;

/** POST /api/files of a file on disk as multipart/form-data, streamed, with the named token. */
export async function uploadFromDisk(base: string, token: string, file: string, name: string, type: string): Promise<any> {
  const boundary = `----hoardbench${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${type}\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  async function* parts(): AsyncGenerator<Buffer> {
    yield head;
    yield* fs.createReadStream(file, { highWaterMark: MiB }) as AsyncIterable<Buffer>;
    yield tail;
  }
  const result = await send(`${base}/api/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + fs.statSync(file).size + tail.length },
    body: Readable.from(parts(), { objectMode: false }),
  });
  if (result.status !== 200 && result.status !== 201) throw new Error(`upload of ${name}: HTTP ${result.status} ${result.body.slice(0, 300)}`);
  return JSON.parse(result.body).data;
}

/**
 * `bytes` of random-looking data, different for every `seed`: 1 MiB of random bytes with the seed and
 * the block's number written over its start, so no two blocks and no two entries are alike and
 * nothing compresses.
 */
function incompressible(bytes: number, seed: number, pattern: Buffer): Buffer {
  const out = Buffer.allocUnsafe(bytes);
  for (let at = 0, block = 0; at < bytes; at += pattern.length, block++) {
    pattern.copy(out, at, 0, Math.min(pattern.length, bytes - at));
    if (bytes - at >= 16) {
      out.writeUInt32LE(seed, at);
      out.writeUInt32LE(block, at + 4);
    }
  }
  return out;
}

/**
 * Writes a ZIP of `count` stored (uncompressed) entries of `entryBytes` incompressible bytes each to
 * `file`, one entry in memory at a time: local headers carry the CRC and sizes (no data
 * descriptors), as most tools write them. Sizes stay under 4 GiB, so no ZIP64 records are needed.
 */
export async function writeStoredZip(file: string, count: number, entryBytes: number): Promise<number> {
  if (count * (entryBytes + 100) >= 0xffffffff) throw new Error('the benchmark ZIP must stay under 4 GiB');
  const pattern = randomBytes(MiB);
  const out = fs.createWriteStream(file);
  const write = (chunk: Buffer) => new Promise<void>((resolve, reject) => out.write(chunk, (error) => (error ? reject(error) : resolve())));
  const centrals: Buffer[] = [];
  let offset = 0;
  // 2026-01-01 00:00:00 in MS-DOS form.
  const dosDate = ((2026 - 1980) << 9) | (1 << 5) | 1;
  for (let i = 0; i < count; i++) {
    const name = Buffer.from(`entry-${String(i + 1).padStart(3, '0')}.bin`);
    const data = incompressible(entryBytes, i + 1, pattern);
    const crc = crc32(data);
    const local = Buffer.alloc(30 + name.length);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(dosDate, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    name.copy(local, 30);
    const central = Buffer.alloc(46 + name.length);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(dosDate, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    name.copy(central, 46);
    centrals.push(central);
    await write(local);
    await write(data);
    offset += local.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(count, 8);
  end.writeUInt16LE(count, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  await write(Buffer.concat([directory, end]));
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  return fs.statSync(file).size;
}

/**
 * Median time for yauzl, in this process, to read every central-directory entry of a ZIP held in
 * memory (the same options as the reader's): the parsing alone, without storage, HTTP or JSON.
 */
async function yauzlListing(bytes: Buffer, runs: number): Promise<{ medianMs: number; samples: number[] }> {
  const once = async () => {
    const started = performance.now();
    const zip = await yauzl.fromBufferPromise(bytes, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true });
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', () => zip.readEntry()).on('end', resolve).on('error', reject);
      zip.readEntry();
    });
    zip.close();
    return performance.now() - started;
  };
  for (let i = 0; i < 3; i++) await once();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) samples.push(await once());
  return { medianMs: median(samples), samples: samples.map((s) => round(s)) };
}

export interface ArchiveBenchOptions {
  root: string;
  workDir: string;
  /** The bytes extracted and archived per run (a multiple of ARCHIVE_ENTRY_BYTES). */
  archiveBytes: number;
  reps: number;
  log: (message: string) => void;
  /** Started processes go here, so the run's cleanup stops them on failure. */
  children: ChildServer[];
  syncDisks: () => void;
}

type MemoryRun = { peak: number; idle: number; polledMax: number; hwm: number | null };

/** The archives section: returns its figures (and records its raw samples in their details). */
export async function archivesSection(options: ArchiveBenchOptions): Promise<Figure[]> {
  const { workDir, archiveBytes, reps, log, children, syncDisks } = options;
  const entries = Math.max(1, Math.round(archiveBytes / ARCHIVE_ENTRY_BYTES));
  const totalBytes = entries * ARCHIVE_ENTRY_BYTES;
  const sizeLabel = totalBytes % GiB === 0 ? `${totalBytes / GiB} GiB` : `${totalBytes / MiB} MiB`;
  const dir = path.join(workDir, 'archives');
  fs.mkdirSync(dir, { recursive: true });
  log(`archives: ${MANIFEST_ENTRIES.toLocaleString('en')}-entry manifest; extracting and creating ${sizeLabel} (${entries} × ${ARCHIVE_ENTRY_BYTES / MiB} MiB stored entries) vs a bare node:http pipe-to-file server, ${reps} repetitions`);

  const baselineDir = path.join(dir, 'baseline-uploads');
  fs.mkdirSync(baselineDir);
  const baselinePort = await freePort();
  const baseline = await startChild({ name: 'baseline-upload-archives', script: path.join(options.root, 'bench', 'servers', 'baseline-upload.ts'), env: { PORT: String(baselinePort), DIR: baselineDir }, cwd: dir, port: baselinePort, readyPath: '/', logFile: path.join(dir, 'baseline-upload.log') });
  children.push(baseline);
  // The archive and the archive made of the sources are a little over their entries' bytes, so the
  // default 1 GiB upload limit is raised; every other upload rule applies as configured.
  const hoardDir = path.join(dir, 'hoard');
  const hoard = await startHoard({ workDir: hoardDir, env: { MAX_UPLOAD_SIZE: String(4 * GiB) } });
  children.push(hoard.server);
  let server = hoard.server;
  const base = server.url;
  const session = await signIn(base);
  const auth = { authorization: `Bearer ${hoard.token}` };
  // Each measured kind starts on a new process (same data, same port), so its first run's memory is
  // measured against a process at rest that has done nothing else: no heap grown by earlier work in
  // which that run's allocations could hide. The session and token live in the database and stay valid.
  const port = new URL(base).port;
  const freshProcess = async () => {
    await server.stop();
    children.splice(children.indexOf(server), 1);
    server = await startChild({ name: 'hoard-archives', script: path.join(options.root, 'src', 'main.ts'), env: { ...hoard.env, PORT: port, BASE_URL: base }, cwd: hoardDir, port: Number(port), readyPath: '/api/health', logFile: path.join(hoardDir, 'hoard-archives.log') });
    children.push(server);
    return memoryOf(server.pid);
  };

  const watched = async <T>(work: () => Promise<T>): Promise<{ result: T; memory: MemoryRun; cpu: number }> => {
    // A moment at rest first, so the idle RSS is the process's, not the tail of the last run's work.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const watch = new MemoryWatch(server.pid);
    const result = await work();
    const memory = watch.stop();
    return { result, memory: { peak: memory.peakRss, idle: memory.startRss, polledMax: memory.polledMaxRss, hwm: memory.hwm }, cpu: memory.cpuSeconds };
  };

  // --- Sources, uploaded once: the 10,000-entry ZIP, the ZIP to extract and the files to archive.
  log(`archives: writing and uploading the ZIPs and ${entries} source files`);
  const manifestFile = path.join(dir, 'many.zip');
  const manifestBytes = manyEntriesZip(MANIFEST_ENTRIES);
  fs.writeFileSync(manifestFile, manifestBytes);
  const manyId = fileIdOf(await uploadFromDisk(base, hoard.token, manifestFile, 'many.zip', 'application/zip'));
  const zipFile = path.join(dir, 'stored.zip');
  const zipSize = await writeStoredZip(zipFile, entries, ARCHIVE_ENTRY_BYTES);
  const archiveId = fileIdOf(await uploadFromDisk(base, hoard.token, zipFile, 'stored.zip', 'application/zip'));
  fs.rmSync(zipFile);
  // Sources typed as video: media is what people archive most, and it is stored in the ZIP as it is
  // (create.ts deflates only types that are not already compressed).
  const sourceIds: string[] = [];
  for (let i = 0; i < entries; i++) {
    const answer = await timedMultipartUpload(`${base}/api/files`, ARCHIVE_ENTRY_BYTES, auth, `clip-${String(i + 1).padStart(3, '0')}.mp4`, 'video/mp4');
    if (answer.response.data.type !== 'video/mp4') throw new Error(`a source file was typed ${answer.response.data.type}`);
    sourceIds.push(fileIdOf(answer.response.data));
  }

  // --- The manifest of a 10,000-entry ZIP, on a new process.
  const manifestStart = await freshProcess();
  const manifestUrl = `${base}/api/archives/${manyId}`;
  const manifestOnce = async () => {
    const answer = await sessionJson(session, 'GET', `/api/archives/${manyId}`, 200);
    if (answer.data.entryCount !== MANIFEST_ENTRIES || answer.data.entries.length !== MANIFEST_ENTRIES || answer.data.truncated !== false) {
      throw new Error(`manifest: ${answer.data.entryCount} entries, ${answer.data.entries.length} listed, truncated ${answer.data.truncated}`);
    }
  };
  // Memory: single requests, each after a moment at rest (the first on the new process included; the
  // worst counts), then the timed series of back-to-back requests, whose garbage V8 lets pile up.
  const manifestSingles: MemoryRun[] = [];
  for (let i = 0; i < 3; i++) manifestSingles.push((await watched(manifestOnce)).memory);
  const { result: manifest, memory: manifestSeries } = await watched(() => latency(manifestUrl, { runs: 30, warmup: 3, headers: { cookie: session.cookie } }));
  const listing = await yauzlListing(manifestBytes, 30);
  log(`archives:   manifest median ${manifest.medianMs.toFixed(1)} ms (p99 ${manifest.p99Ms.toFixed(1)} ms); yauzl over the bytes in memory ${listing.medianMs.toFixed(1)} ms`);

  const removeFiles = async (ids: string[]) => {
    for (const id of ids) await sessionJson(session, 'DELETE', `/api/files/${id}`, 204);
  };
  const extract = async () => {
    const begun = performance.now();
    const answer = await sessionJson(session, 'POST', `/api/archives/${archiveId}/extract`, 201, {});
    const seconds = (performance.now() - begun) / 1000;
    const files = answer.data.files as Array<{ downloadUrl: string; size: number }>;
    const made = files.reduce((sum, f) => sum + f.size, 0);
    if (files.length !== entries || answer.data.skipped.length !== 0 || made !== totalBytes) throw new Error(`extraction made ${files.length} files of ${made} bytes, skipped ${JSON.stringify(answer.data.skipped)}`);
    return { seconds, ids: files.map(fileIdOf) };
  };
  const create = async () => {
    const begun = performance.now();
    const answer = await sessionJson(session, 'POST', '/api/archives', 201, { fileIds: sourceIds, name: 'bench.zip' });
    const seconds = (performance.now() - begun) / 1000;
    if (!(answer.data.size > totalBytes)) throw new Error(`creation made ${JSON.stringify(answer.data)}`);
    return { seconds, id: fileIdOf(answer.data), size: answer.data.size as number };
  };

  // First runs, each on a new process: their memory counts, their time does not (code not compiled yet).
  const extractStart = await freshProcess();
  syncDisks();
  const firstExtract = await watched(extract);
  await removeFiles(firstExtract.result.ids);
  const createStart = await freshProcess();
  syncDisks();
  const firstCreate = await watched(create);
  await removeFiles([firstCreate.result.id]);
  log(`archives:   first runs on new processes: extraction RSS ${(firstExtract.memory.idle / MiB).toFixed(0)} → peak ${(firstExtract.memory.peak / MiB).toFixed(0)} MiB, creation ${(firstCreate.memory.idle / MiB).toFixed(0)} → ${(firstCreate.memory.peak / MiB).toFixed(0)} MiB`);
  // Warm-up of what this process has not run yet, and of the baseline.
  await removeFiles((await extract()).ids);
  await timedMultipartUpload(`${baseline.url}/upload`, 16 * MiB);
  fs.rmSync(baselineDir, { recursive: true, force: true });
  fs.mkdirSync(baselineDir);

  const runs = { baseline: [] as number[], extract: [] as number[], create: [] as number[], extractMemory: [firstExtract.memory], createMemory: [firstCreate.memory], extractCpu: [] as number[], createCpu: [] as number[], baselineCpu: [] as number[], createdZipBytes: 0 };
  const steps: Record<'baseline' | 'extract' | 'create', () => Promise<number>> = {
    baseline: async () => {
      const watch = new MemoryWatch(baseline.pid);
      const { seconds } = await timedMultipartUpload(`${baseline.url}/upload`, totalBytes);
      runs.baselineCpu.push(watch.stop().cpuSeconds);
      runs.baseline.push(seconds);
      fs.rmSync(baselineDir, { recursive: true, force: true });
      fs.mkdirSync(baselineDir);
      return seconds;
    },
    extract: async () => {
      const { result, memory, cpu } = await watched(extract);
      runs.extract.push(result.seconds);
      runs.extractMemory.push(memory);
      runs.extractCpu.push(cpu);
      await removeFiles(result.ids);
      return result.seconds;
    },
    create: async () => {
      const { result, memory, cpu } = await watched(create);
      runs.create.push(result.seconds);
      runs.createMemory.push(memory);
      runs.createCpu.push(cpu);
      runs.createdZipBytes = result.size;
      await removeFiles([result.id]);
      return result.seconds;
    },
  };
  const order = ['baseline', 'extract', 'create'] as const;
  for (let rep = 0; rep < reps; rep++) {
    // Rotating order, `sync` before each, as in the uploads section: no kind always pays another's writeback.
    for (let i = 0; i < order.length; i++) {
      const step = order[(rep + i) % order.length]!;
      syncDisks();
      const seconds = await steps[step]();
      const cpu = runs[`${step}Cpu`].at(-1)!;
      const memory = step === 'baseline' ? null : runs[`${step}Memory`].at(-1)!;
      log(`  rep ${rep + 1} ${step.padEnd(8)} ${mb(totalBytes, seconds).toFixed(0).padStart(4)} MB/s (${seconds.toFixed(2)} s; server CPU ${cpu.toFixed(2)} s${memory ? `; RSS ${(memory.idle / MiB).toFixed(0)} → peak ${(memory.peak / MiB).toFixed(0)} MiB` : ''})`);
    }
  }
  syncDisks();

  const baselineMbps = mb(totalBytes, median(runs.baseline));
  // The run that rose most above its idle RSS is the one reported.
  const worst = (memory: MemoryRun[]) => memory.reduce((a, b) => (b.peak - b.idle > a.peak - a.idle ? b : a));
  const memoryDetail = (memory: MemoryRun[]) => ({
    peakRssPerRunMiB: memory.map((m) => round(m.peak / MiB, 1)),
    idleRssPerRunMiB: memory.map((m) => round(m.idle / MiB, 1)),
    polledMaxRssPerRunMiB: memory.map((m) => round(m.polledMax / MiB, 1)),
    hwmPerRunMiB: memory.map((m) => (m.hwm === null ? null : round(m.hwm / MiB, 1))),
  });
  const manifestWorst = worst(manifestSingles);
  const extractWorst = worst(runs.extractMemory);
  const createWorst = worst(runs.createMemory);
  const method = 'VmHWM reset (clear_refs 5) before each run, VmRSS polled every 10 ms; the larger of the two, against VmRSS at rest just before; the first run (on a new process) and every timed run, the one that rose most reported';
  const figures = [
    figure({
      id: 'archives.manifest.median',
      label: `GET /api/archives/{id}, ${MANIFEST_ENTRIES.toLocaleString('en')}-entry ZIP, median`,
      unit: 'ms',
      value: manifest.medianMs,
      baseline: listing.medianMs,
      baselineLabel: 'yauzl over the bytes in memory',
      target: { on: 'value', op: '<', value: 150 },
      detail: { ...manifest, baselineSamples: listing.samples, zipBytes: manifestBytes.length },
    }),
    figure({
      id: 'archives.manifest.peakRss',
      label: `server peak RSS during one ${MANIFEST_ENTRIES.toLocaleString('en')}-entry manifest`,
      unit: 'MiB',
      value: manifestWorst.peak / MiB,
      baseline: manifestWorst.idle / MiB,
      baselineLabel: 'at rest before',
      target: { on: 'growth', op: '<', value: 40 },
      detail: { method, ...memoryDetail(manifestSingles), newProcessRssMiB: manifestStart ? round(manifestStart.rss / MiB, 1) : null },
    }),
    figure({
      id: 'archives.manifest.seriesPeakRss',
      label: `server peak RSS during the ${manifest.samples.length + 3} back-to-back manifests timed above`,
      unit: 'MiB',
      value: manifestSeries.peak / MiB,
      baseline: manifestSeries.idle / MiB,
      baselineLabel: 'at rest before',
      target: null,
      detail: { method: 'as for one manifest, over the timed series', ...memoryDetail([manifestSeries]) },
    }),
    figure({
      id: 'archives.extract.throughput',
      label: `extracting a ${sizeLabel} ZIP (${entries} × ${ARCHIVE_ENTRY_BYTES / MiB} MiB stored)`,
      unit: 'MB/s',
      value: mb(totalBytes, median(runs.extract)),
      baseline: baselineMbps,
      baselineLabel: 'node:http pipe',
      target: { on: 'ratio', op: '>=', value: 0.5 },
      detail: { secondsPerRun: runs.extract.map((s) => round(s, 3)), serverCpuSecondsPerRun: runs.extractCpu.map((s) => round(s, 2)), baselineSecondsPerRun: runs.baseline.map((s) => round(s, 3)), baselineServerCpuSecondsPerRun: runs.baselineCpu.map((s) => round(s, 2)), archiveBytes: zipSize },
    }),
    figure({
      id: 'archives.extract.peakRss',
      label: `server peak RSS while extracting the ${sizeLabel} ZIP`,
      unit: 'MiB',
      value: extractWorst.peak / MiB,
      baseline: extractWorst.idle / MiB,
      baselineLabel: 'at rest before',
      target: { on: 'growth', op: '<', value: 40 },
      detail: { method, ...memoryDetail(runs.extractMemory), newProcessRssMiB: extractStart ? round(extractStart.rss / MiB, 1) : null },
    }),
    figure({
      id: 'archives.create.throughput',
      label: `creating a ZIP of ${entries} × ${ARCHIVE_ENTRY_BYTES / MiB} MiB files (${sizeLabel}, stored)`,
      unit: 'MB/s',
      value: mb(totalBytes, median(runs.create)),
      baseline: baselineMbps,
      baselineLabel: 'node:http pipe',
      target: { on: 'ratio', op: '>=', value: 0.7 },
      detail: { secondsPerRun: runs.create.map((s) => round(s, 3)), serverCpuSecondsPerRun: runs.createCpu.map((s) => round(s, 2)), createdZipBytes: runs.createdZipBytes },
    }),
    figure({
      id: 'archives.create.peakRss',
      label: `server peak RSS while creating the ${sizeLabel} ZIP`,
      unit: 'MiB',
      value: createWorst.peak / MiB,
      baseline: createWorst.idle / MiB,
      baselineLabel: 'at rest before',
      target: { on: 'growth', op: '<', value: 40 },
      detail: { method, ...memoryDetail(runs.createMemory), newProcessRssMiB: createStart ? round(createStart.rss / MiB, 1) : null },
    }),
  ];
  for (const child of [server, baseline]) {
    await child.stop();
    children.splice(children.indexOf(child), 1);
  }
  return figures;
}
