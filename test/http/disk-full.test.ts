import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { dialectUnderTest } from '../support/server.ts';
import { serverProcess, type ServerProcess } from '../support/server-process.ts';
import { signUp, type Client } from '../support/client.ts';
import { createToken, uploadFile } from '../support/uploads.ts';
import { zipBytes } from '../support/archives.ts';
import { storageUnderTest, type Provider, type StorageUnderTest } from '../support/stored-objects.ts';
import { sendRequest, type HttpAnswer } from '../support/raw-http.ts';

const MiB = 1024 * 1024;
/** DATA_DIR's whole disk: room for the database (SQLite keeps it there) and a few MiB of files. */
const DISK_BYTES = 12 * MiB;

/** A request that the server may answer, and close, before its whole body was sent. */
const send = (url: string, method: string, headers: Record<string, string>, body: Buffer | Readable): Promise<HttpAnswer> =>
  sendRequest(url, method, headers, body, { earlyAnswer: true });

// A disk that fills up is the server's condition, not the client's mistake and not a bug: 507
// Insufficient Storage with a message that says so, and, as for any failed upload (contract,
// uploads), no record, no bytes and no quota charge left behind; once space is free again, uploads
// work without a restart (docs/decisions.md, "A full disk").

/** A server whose DATA_DIR is a disk of DISK_BYTES, with an account and a token to upload with. */
function fullDiskServer(provider: Provider) {
  const context = {} as {
    storage: StorageUnderTest;
    server: ServerProcess;
    owner: Client;
    token: string;
    /** DATA_DIR as the test process reaches it: through the server process's own mount namespace. */
    dataDir: string;
    free(): number;
    /** `freeBefore`: the free bytes of the disk before the refused upload began. */
    expectNothingLeftBehind(freeBefore: number): Promise<void>;
  };
  beforeAll(async () => {
    context.storage = await storageUnderTest(provider);
  });
  afterAll(async () => {
    await context.storage?.stop();
  });
  // A server, and a disk, of each test's own: what one test fills is not the next one's business.
  beforeEach(async () => {
    context.server = await serverProcess({ UPLOAD_RATE_LIMIT: '0', ...context.storage.env }, 'hoard-disk-full-', { diskBytes: DISK_BYTES });
    await context.server.start();
    context.dataDir = path.join(`/proc/${context.server.pid()}/root`, context.server.dataDir);
    context.owner = await signUp(context.server.baseUrl);
    context.token = await createToken(context.owner, ['files:upload', 'files:read']);
  }, 60_000);
  afterEach(() => {
    context.server?.stop();
  });
  context.free = () => {
    const stats = fs.statfsSync(context.dataDir);
    return stats.bavail * stats.bsize;
  };
  // Read through the API: SQLite's database is on the server's own disk, which the test process
  // reaches only through /proc/<pid>/root, a path SQLite resolves back into the test's own.
  context.expectNothingLeftBehind = async (freeBefore: number) => {
    const { storage, owner, dataDir } = context;
    const account = await owner.get('/api/account');
    expect(account.status, account.text).toBe(200);
    const { id, usedBytes } = account.body.data.account as { id: string; usedBytes: number };
    const listed = await owner.get('/api/files?limit=100');
    expect(listed.status, listed.text).toBe(200);
    const files = listed.body.data as Array<{ size: number }>;
    // Bytes of no other kind (thumbnails) are made for these text and binary files.
    expect(await storage.keys(dataDir, `files/${id}/`)).toHaveLength(files.length);
    // A listed size is in MiB, bytes ÷ 2^20, which a double holds exactly.
    expect(usedBytes).toBe(files.reduce((sum, file) => sum + file.size * MiB, 0));
    // Nothing of the refused bytes holds the disk: not a temporary file, not a spooled part, not
    // the start of a part appended to an open session's assembly.
    expect(context.free()).toBeGreaterThan(freeBefore - 256 * 1024);
  };
  return context;
}

/** A chunked upload's part of more bytes than the disk has free, sent without a length, so that object storage too spools it to DATA_DIR/tmp. */
async function refusedPart(disk: ReturnType<typeof fullDiskServer>): Promise<void> {
  const { server, token } = disk;
  const auth = { authorization: `Bearer ${token}` };
  const free = disk.free();
  const size = free + 2 * MiB;
  const init = Buffer.from(JSON.stringify({ filename: 'chunked.bin', size }));
  const started = await send(`${server.baseUrl}/api/files/chunks`, 'POST', { ...auth, 'content-type': 'application/json', 'content-length': String(init.length) }, init);
  expect(started.status, started.text).toBe(200);
  const put = await send(`${server.baseUrl}/api/files/chunks/${started.body.data.uploadId}/part/1`, 'PUT', { ...auth, 'content-type': 'application/octet-stream' }, Readable.from([randomBytes(size)]));
  expect(put.status, put.text).toBe(507);
  expect(put.body.error).toMatch(/out of storage space/);
  await disk.expectNothingLeftBehind(free);
  // And so a part of a third of the space fits.
  const third = Math.floor(free / 3);
  const small = Buffer.from(JSON.stringify({ filename: 'small.bin', size: third }));
  const other = await send(`${server.baseUrl}/api/files/chunks`, 'POST', { ...auth, 'content-type': 'application/json', 'content-length': String(small.length) }, small);
  expect(other.status, other.text).toBe(200);
  const smallPut = await send(`${server.baseUrl}/api/files/chunks/${other.body.data.uploadId}/part/1`, 'PUT', { ...auth, 'content-type': 'application/octet-stream' }, Readable.from([randomBytes(third)]));
  expect(smallPut.status, smallPut.text).toBe(200);
}

describe('a full disk under DATA_DIR (local storage)', () => {
  const disk = fullDiskServer('local');

  it('answers an upload larger than the free space with 507, keeps nothing of it, and takes the next upload', async () => {
    const { owner, token } = disk;
    const kept = await uploadFile(owner, 'kept.txt', 'kept bytes');
    expect(kept.status, kept.text).toBe(200);
    const free = disk.free();
    const refused = await uploadFile(owner, 'big.bin', randomBytes(free + 2 * MiB), { type: 'application/octet-stream', token });
    expect(refused.status, refused.text).toBe(507);
    expect(refused.body.error).toMatch(/out of storage space/);
    await disk.expectNothingLeftBehind(free);
    // The space is free again: half of it can be stored.
    const next = await uploadFile(owner, 'next.bin', randomBytes(Math.floor(free / 2)), { type: 'application/octet-stream', token });
    expect(next.status, next.text).toBe(200);
    const listed = await owner.get('/api/files');
    expect(listed.body.data.map((file: { name: string }) => file.name).sort()).toEqual(['kept.txt', 'next.bin']);
    await disk.expectNothingLeftBehind(free - Math.floor(free / 2));
  });

  it('answers a chunked upload part larger than the free space with 507, and keeps nothing of it', async () => {
    await refusedPart(disk);
  });

  it('answers a completion that finds no room to assemble its parts with 507, and gives back the space it took', async () => {
    const { server, token } = disk;
    const auth = { authorization: `Bearer ${token}` };
    const free = disk.free();
    // Parts 1 and 2 are appended to the session's assembly as they come; part 3, sent before 2,
    // gets a file of its own, which the completion then copies after them: room for the parts, not
    // for that copy as well.
    const first = MiB;
    const later = Math.floor(0.4 * (free - first));
    const init = Buffer.from(JSON.stringify({ filename: 'assembled.bin', size: first + 2 * later }));
    const started = await send(`${server.baseUrl}/api/files/chunks`, 'POST', { ...auth, 'content-type': 'application/json', 'content-length': String(init.length) }, init);
    expect(started.status, started.text).toBe(200);
    const uploadId = started.body.data.uploadId as string;
    const parts: Array<{ PartNumber: number; ETag: string }> = [];
    for (const [number, length] of [[1, first], [3, later], [2, later]] as const) {
      const put = await send(`${server.baseUrl}/api/files/chunks/${uploadId}/part/${number}`, 'PUT', { ...auth, 'content-type': 'application/octet-stream', 'content-length': String(length) }, randomBytes(length));
      expect(put.status, put.text).toBe(200);
      parts.push({ PartNumber: number, ETag: put.body.data.etag as string });
    }
    const freeBefore = disk.free();
    const body = Buffer.from(JSON.stringify({ parts }));
    const completed = await send(`${server.baseUrl}/api/files/chunks/${uploadId}/complete`, 'POST', { ...auth, 'content-type': 'application/json', 'content-length': String(body.length) }, body);
    expect(completed.status, completed.text).toBe(507);
    expect(completed.body.error).toMatch(/out of storage space/);
    await disk.expectNothingLeftBehind(freeBefore);
  });

  it('skips an archive entry that does not fit, with that reason, and extracts the ones that do', async () => {
    const { owner } = disk;
    const free = disk.free();
    // Zeros deflate to almost nothing: the archive fits, its first entry does not.
    const archive = await zipBytes([
      { name: 'huge.bin', data: new Uint8Array(free + 2 * MiB), compress: true },
      { name: 'fits.txt', data: 'a small entry after it' },
    ]);
    const uploaded = await uploadFile(owner, 'both.zip', archive, { type: 'application/zip' });
    expect(uploaded.status, uploaded.text).toBe(200);
    const fileId = new URL(uploaded.body.data.downloadUrl as string).pathname.split('/').at(-2)!;
    const freeBefore = disk.free();
    const extracted = await owner.post(`/api/archives/${fileId}/extract`, {});
    expect(extracted.status, extracted.text).toBe(201);
    expect(extracted.body.data.skipped).toEqual([{ path: 'huge.bin', reason: 'the server is out of storage space' }]);
    expect(extracted.body.data.files).toHaveLength(1);
    const listed = await owner.get('/api/files?search=fits');
    expect(listed.body.data.map((file: { name: string }) => file.name)).toEqual(['fits.txt']);
    await disk.expectNothingLeftBehind(freeBefore);
  });
});

// Object storage takes an upload's bytes as they come, a part at a time held in memory; only a
// chunked upload's part of unknown length is written to DATA_DIR first.
describe('a full disk under DATA_DIR (s3 storage)', () => {
  const disk = fullDiskServer('s3');

  it('answers a chunked upload part larger than the free space with 507, and keeps nothing of it', async () => {
    await refusedPart(disk);
  });
});

// SQLite keeps its database in DATA_DIR, so there a full disk also stops the database's writes
// (SQLITE_FULL). With object storage no file's bytes take the disk's space, so what fills it is the
// database's own growth. (PostgreSQL's database is elsewhere: not on this disk.)
if (dialectUnderTest === 'sqlite') {
  describe('a full disk under the SQLite database (s3 storage)', () => {
    const disk = fullDiskServer('s3');

    it('answers an upload whose record finds no room with 507, keeps no bytes of it, and takes uploads again once there is room', async () => {
      const { owner, dataDir } = disk;
      const freeBefore = disk.free();
      // Everything but 64 KiB taken by a file of another program.
      const filler = path.join(dataDir, 'filler');
      fs.writeFileSync(filler, Buffer.alloc(freeBefore - 64 * 1024));
      const statuses: number[] = [];
      let refused: { status: number; text: string; body: any } | undefined;
      for (let i = 0; i < 400 && !refused; i++) {
        const answer = await uploadFile(owner, `note-${i}.txt`, `note ${i}`);
        statuses.push(answer.status);
        if (answer.status !== 200) refused = answer;
      }
      expect(refused, `${statuses.length} uploads all stored`).toBeDefined();
      expect(refused!.status, refused!.text).toBe(507);
      expect(refused!.body.error).toMatch(/out of storage space/);
      fs.rmSync(filler);
      const next = await uploadFile(owner, 'after.txt', 'room again');
      expect(next.status, next.text).toBe(200);
      const account = await owner.get('/api/account');
      const listed = await owner.get('/api/files?limit=1');
      // Every upload answered 200 is a file, the refused one is not, and no object is left of it.
      expect(listed.body.pagination.total).toBe(statuses.length);
      expect(await disk.storage.keys(dataDir, `files/${account.body.data.account.id}/`)).toHaveLength(statuses.length);
    });

    it('serves files while the database cannot write: a view or download that cannot be counted is still served', async () => {
      const { owner, dataDir } = disk;
      const kept = await uploadFile(owner, 'kept.txt', 'kept bytes');
      expect(kept.status, kept.text).toBe(200);
      const { rawUrl, downloadUrl } = kept.body.data as { rawUrl: string; downloadUrl: string };
      const filler = path.join(dataDir, 'filler');
      fs.writeFileSync(filler, Buffer.alloc(disk.free() - 64 * 1024));
      try {
        // Writes until the database says it is full.
        let refused = 0;
        for (let i = 0; i < 400 && refused === 0; i++) if ((await uploadFile(owner, `note-${i}.txt`, `note ${i}`)).status === 507) refused++;
        expect(refused).toBe(1);
        for (const url of [rawUrl, downloadUrl]) {
          const answer = await owner.get(new URL(url).pathname);
          expect(answer.status, `${url}: ${answer.text}`).toBe(200);
          expect(answer.text).toBe('kept bytes');
        }
      } finally {
        fs.rmSync(filler);
      }
    });

    it('skips the archive entries whose records find no room, with that reason, and keeps the ones extracted', async () => {
      const { owner, dataDir } = disk;
      const entries = Array.from({ length: 400 }, (_, i) => ({ name: `note-${i}.txt`, data: `note ${i}` }));
      const uploaded = await uploadFile(owner, 'notes.zip', await zipBytes(entries), { type: 'application/zip' });
      expect(uploaded.status, uploaded.text).toBe(200);
      const fileId = new URL(uploaded.body.data.downloadUrl as string).pathname.split('/').at(-2)!;
      const filler = path.join(dataDir, 'filler');
      fs.writeFileSync(filler, Buffer.alloc(disk.free() - 64 * 1024));
      const extracted = await owner.post(`/api/archives/${fileId}/extract`, {});
      fs.rmSync(filler);
      // The files made before the database filled up are in the answer, as they are in the account.
      expect(extracted.status, extracted.text).toBe(201);
      const { files, skipped } = extracted.body.data as { files: unknown[]; skipped: Array<{ path: string; reason: string }> };
      expect(skipped.length, 'entries skipped').toBeGreaterThan(0);
      expect(new Set(skipped.map((s) => s.reason))).toEqual(new Set(['the server is out of storage space']));
      expect(files.length + skipped.length).toBe(entries.length);
      const account = await owner.get('/api/account');
      const listed = await owner.get('/api/files?limit=1');
      expect(listed.body.pagination.total).toBe(1 + files.length);
      expect(await disk.storage.keys(dataDir, `files/${account.body.data.account.id}/`)).toHaveLength(1 + files.length);
    });
  });
}
