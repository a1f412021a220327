/**
 * A client that hangs up on an archive request stops its work (contract §9: each process works on at
 * most ARCHIVE_CONCURRENCY archive requests at once). Its slot was given back when it hung up; had
 * the walk gone on reading, anyone could run any number of walks at once by connecting and hanging
 * up. Seen on local storage, where a read of the archive is an open file of this process.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createGzip } from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { resizedInTar, tarBytes } from '../support/archives.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/client.ts';
import { uploadFile } from '../support/uploads.ts';
import { sleep } from '../support/raw-http.ts';

/** A tar.gz of one entry of `size` zeros: a kilobyte or so per megabyte, and a walk of seconds to list it. */
async function zerosTarGz(file: string, size: number): Promise<void> {
  // The entry's header, then nothing but zeros: its bytes, its padding and the two end blocks.
  const header = resizedInTar((await tarBytes([{ name: 'zeros.bin', data: '' }])).subarray(0, 512), 'zeros.bin', size);
  const block = Buffer.alloc(1024 * 1024);
  async function* bytes() {
    yield header;
    for (let left = size + 1024; left > 0; left -= block.length) yield block.subarray(0, Math.min(block.length, left));
  }
  await pipeline(Readable.from(bytes()), createGzip({ level: 1 }), fs.createWriteStream(file));
}

/** How many files of this process are open on `target`. */
function openReadsOf(target: string): number {
  let count = 0;
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`) === target) count += 1;
    } catch {
      // Closed while listed.
    }
  }
  return count;
}

async function until(condition: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (condition()) return true;
    await sleep(5);
  }
  return condition();
}

describe('an archive request whose client hangs up', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof signUp>>;
  let stored: string;
  let archiveId: string;
  let big: string;
  const logged: Array<{ level: number; msg?: string; err?: unknown }> = [];
  let routes: Array<{ name: string; method: string; path: string; headers: Record<string, string>; body?: string }>;

  beforeAll(async () => {
    server = await startTestServer({ UPLOAD_RATE_LIMIT: '0', ARCHIVE_CONCURRENCY: '1', LOG_LEVEL: 'info' }, undefined, logged);
    owner = await signUp(server.baseUrl);
    const file = path.join(server.dataDir, 'zeros.tar.gz');
    await zerosTarGz(file, 1024 * 1024 * 1024);
    const uploaded = await uploadFile(owner, 'zeros.tar.gz', fs.readFileSync(file));
    expect(uploaded.status, uploaded.text).toBe(200);
    fs.rmSync(file);
    const id = (uploaded.body.data.downloadUrl as string).split('/').at(-2)!;
    archiveId = id;
    // 48 MiB deflated into a new ZIP: a creation of a second or more.
    const random = await uploadFile(owner, 'random.bin', randomBytes(48 * 1024 * 1024), { type: 'application/octet-stream' });
    expect(random.status, random.text).toBe(200);
    big = (random.body.data.downloadUrl as string).split('/').at(-2)!;
    const row = await server.ctx.db.selectFrom('files').select('storageKey').where('id', '=', id).executeTakeFirstOrThrow();
    // Local storage keeps an object at its key below its root (the storage's target: `local:<root>`).
    stored = path.join(server.ctx.storage.target.replace(/^local:/, ''), row.storageKey);
    expect(fs.existsSync(stored), stored).toBe(true);
    const urlId = (await owner.get('/api/auth/me')).body.data.user.urlId as string;
    const cookie = owner.cookieHeader();
    const json = { 'content-type': 'application/json', origin: server.baseUrl };
    routes = [
      { name: 'manifest', method: 'GET', path: `/api/archives/${id}`, headers: { cookie } },
      { name: 'entry', method: 'GET', path: `/api/archives/${id}/entry?path=missing.txt`, headers: { cookie } },
      { name: 'shared manifest', method: 'POST', path: `/api/share/${urlId}/zeros.tar.gz/archive`, headers: json, body: '{}' },
      { name: 'shared entry', method: 'POST', path: `/api/share/${urlId}/zeros.tar.gz/archive/entry`, headers: json, body: '{"path":"missing.txt"}' },
    ];
  }, 120_000);
  afterAll(async () => {
    console.time('close');
    await server?.close();
    console.timeEnd('close');
  });

  it('stops reading the archive at once, on every route that reads one', async () => {
    for (const route of routes) {
      // A connection of its own, dropped by the client before any answer.
      const request = http.request(server.baseUrl + route.path, { method: route.method, headers: route.headers, agent: false });
      let answered = false;
      request.on('response', () => (answered = true)).on('error', () => {});
      request.end(route.body);
      // The walk has begun: the archive is open.
      expect(await until(() => openReadsOf(stored) > 0, 10_000), route.name).toBe(true);
      await sleep(50);
      request.destroy();
      // Listing a gigabyte of zeros takes seconds; the read ends as the client goes.
      expect(await until(() => openReadsOf(stored) === 0, 500), `${route.name}: the archive is still being read after its client hung up`).toBe(true);
      expect(answered, route.name).toBe(false);
    }
  });

  it('takes a hang-up during extraction or creation as the client\'s, not as a server error', async () => {
    const json = { 'content-type': 'application/json', origin: server.baseUrl, cookie: owner.cookieHeader() };
    for (const [path, body] of [[`/api/archives/${archiveId}/extract`, '{}'], ['/api/archives', JSON.stringify({ fileIds: [big] })]] as const) {
      const request = http.request(server.baseUrl + path, { method: 'POST', headers: json, agent: false });
      request.on('error', () => {});
      request.end(body);
      await sleep(400);
      request.destroy();
      // Nothing is left of the work: no temporary bytes, and the slot is free for the next request.
      expect(await until(() => openReadsOf(stored) === 0, 2000), path).toBe(true);
      await sleep(300);
    }
    expect((await owner.get(`/api/archives/${archiveId}/entry?path=missing.txt`)).status).toBe(404);
    expect(logged.filter((line) => line.level >= 50), JSON.stringify(logged.filter((line) => line.level >= 50)).slice(0, 500)).toEqual([]);
  });
});
