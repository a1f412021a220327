import { createCipheriv, createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { createToken, uploadFile } from '../support/uploads.ts';
import { storageEnv, storageKinds } from '../support/storage-env.ts';
import type { S3rverHandle } from '../support/s3rver.ts';
import { withoutEveryonePermission } from '../support/roles.ts';
import { sendRequest, type HttpAnswer } from '../support/raw-http.ts';

const MiB = 1024 * 1024;
const HOUR = 3600_000;
const UPLOAD_ID = /^[a-z0-9]{1,100}$/;

// ---------------------------------------------------------------------------------------------
// Deterministic bytes: the AES-128-CTR keystream of a seed, so a part can be regenerated (or
// streamed) at will instead of being kept in memory.

const KEY = createHash('sha256').update('hoard chunked uploads').digest().subarray(0, 16);

function keystream(seed: number): (length: number) => Buffer {
  const iv = Buffer.alloc(16);
  iv.writeUInt32BE(seed, 0);
  const cipher = createCipheriv('aes-128-ctr', KEY, iv);
  return (length) => cipher.update(Buffer.alloc(length));
}

const bytes = (seed: number, length: number) => keystream(seed)(length);

/** `length` deterministic bytes generated as they are read, 1 MiB at a time; each chunk also feeds `hash`. */
function byteStream(seed: number, length: number, hash?: Hash): Readable {
  const next = keystream(seed);
  let left = length;
  return new Readable({
    read() {
      if (left === 0) return void this.push(null);
      const chunk = next(Math.min(MiB, left));
      left -= chunk.length;
      hash?.update(chunk);
      this.push(chunk);
    },
  });
}

/** Sends `length` bytes and then stalls: the body never ends, so only a server that judges it while streaming can answer. */
function stallingStream(seed: number, length: number): Readable {
  const next = keystream(seed);
  let left = length;
  return new Readable({
    read() {
      if (left === 0) return;
      const chunk = next(Math.min(MiB, left));
      left -= chunk.length;
      this.push(chunk);
    },
  });
}

/** `data`'s first half at once, the rest only once `gate` opens: a part still arriving while other requests run. */
function gatedStream(data: Buffer, gate: Promise<void>): Readable {
  const half = Math.floor(data.length / 2);
  let sent = 0;
  return new Readable({
    read() {
      if (sent === 0) {
        sent = 1;
        this.push(data.subarray(0, half));
      } else if (sent === 1) {
        sent = 2;
        void gate.then(() => {
          this.push(data.subarray(half));
          this.push(null);
        });
      }
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Callers and requests.

/** Who calls: a named token (a script) or a browser session. */
interface Caller {
  auth: Record<string, string>;
  session: boolean;
}
const withToken = (token: string): Caller => ({ auth: { authorization: `Bearer ${token}` }, session: false });
const withSession = (client: Client): Caller => ({ auth: { cookie: client.cookieHeader() }, session: true });
const anonymous: Caller = { auth: {}, session: false };

type Answer = HttpAnswer;

function headersFor(base: string, caller: Caller, method: string, extra: Record<string, string> = {}): Record<string, string> {
  return { ...caller.auth, ...(caller.session && method !== 'GET' ? { origin: base } : {}), ...extra };
}

/**
 * A request over node:http, so a body can be streamed (with or without Content-Length) and an early
 * answer read while it is still being sent. One connection per request (no keep-alive): a stalled
 * body is dropped with its connection, and no connection is left for the server's close to wait on.
 * `sink` receives the response body instead of it being collected (large downloads).
 */
const send = (url: string, method: string, headers: Record<string, string>, body?: Buffer | Readable, sink?: (chunk: Buffer) => void): Promise<Answer> =>
  sendRequest(url, method, headers, body, sink ? { sink } : {});

/** The bytes (or their sha256 and count) of a GET. */
async function download(url: string, headers: Record<string, string> = {}): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const answer = await send(url, 'GET', headers, undefined, (chunk) => chunks.push(chunk));
  expect(answer.status, answer.text).toBe(200);
  return Buffer.concat(chunks);
}
async function sha256Of(url: string, headers: Record<string, string> = {}): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  const answer = await send(url, 'GET', headers, undefined, (chunk) => {
    hash.update(chunk);
    size += chunk.length;
  });
  expect(answer.status, answer.text).toBe(200);
  return { sha256: hash.digest('hex'), size };
}

function api(base: string, caller: Caller, method: string, route: string, json?: unknown, extra: Record<string, string> = {}): Promise<Answer> {
  const headers = headersFor(base, caller, method, extra);
  if (json === undefined) return send(base + route, method, headers);
  const body = Buffer.from(JSON.stringify(json));
  return send(base + route, method, { ...headers, 'content-type': 'application/json', 'content-length': String(body.length) }, body);
}

interface PartOptions {
  /** Stream without Content-Length (chunked transfer encoding). */
  chunked?: boolean;
  /** Content-Length to declare for a streamed body. */
  length?: number;
  contentType?: string;
}

function putPartAt(base: string, caller: Caller, uploadId: string, partNumber: number | string, data: Buffer | Readable, options: PartOptions = {}): Promise<Answer> {
  const headers = headersFor(base, caller, 'PUT', { 'content-type': options.contentType ?? 'application/octet-stream' });
  if (Buffer.isBuffer(data) && !options.chunked) headers['content-length'] = String(data.length);
  if (!Buffer.isBuffer(data) && options.length !== undefined && !options.chunked) headers['content-length'] = String(options.length);
  const body = options.chunked && Buffer.isBuffer(data) ? Readable.from([data]) : data;
  return send(`${base}/api/files/chunks/${uploadId}/part/${partNumber}`, 'PUT', headers, body);
}

const etagOf = (answer: Answer) => {
  expect(answer.status, answer.text).toBe(200);
  return answer.body.data.etag as string;
};

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const fileIdOf = (links: { downloadUrl: string }) => links.downloadUrl.split('/').at(-2)!;

describe.each(storageKinds)('chunked uploads on %s storage', (kind) => {
  let server: TestServer;
  let s3: S3rverHandle | undefined;
  let stopStorage: () => Promise<void>;
  let storageEnvVars: Record<string, string>;
  let admin: Awaited<ReturnType<typeof signUp>>;
  let everyone: { id: string; permissions: string[] };
  const serverEnv = () => ({ ...storageEnvVars, UPLOAD_RATE_LIMIT: '0', WEBHOOK_ALLOW_PRIVATE: 'true' });

  beforeAll(async () => {
    const storage = await storageEnv(kind);
    stopStorage = storage.stop;
    s3 = storage.s3;
    storageEnvVars = storage.env;
    server = await startTestServer(serverEnv());
    admin = await signUp(server.baseUrl);
    await admin.patch('/api/settings', { registration: 'open' });
    const roles = (await admin.get('/api/roles')).body.data.roles;
    everyone = roles.find((r: { systemKey: string }) => r.systemKey === 'everyone');
  });
  afterAll(async () => {
    await server?.close();
    await stopStorage?.();
  });

  /** A non-administrator account made by the administrator (POST /api/users), signed in with a browser session. */
  async function member(): Promise<Client & { userId: string }> {
    const email = uniqueEmail('chunks');
    const password = 'correct horse battery';
    const created = await admin.post('/api/users', { email, password, emailVerified: true });
    expect(created.status, created.text).toBe(201);
    const client = new Client(server.baseUrl);
    expect((await client.post('/api/auth/login', { email, password })).status).toBe(200);
    return Object.assign(client, { userId: created.body.data.user.id as string });
  }
  /** A member and a files:upload token of theirs. */
  async function scripted(extra: Record<string, unknown> = {}) {
    const user = await member();
    const token = await createToken(user, ['files:upload'], extra);
    return { user, token, caller: withToken(token) };
  }
  const withoutPermission = <T,>(permission: string, work: () => Promise<T>) => withoutEveryonePermission(admin, everyone, permission, work);
  const recordOf = async (owner: Client, links: { downloadUrl: string }) => {
    const response = await owner.patch(`/api/files/${fileIdOf(links)}`, {});
    expect(response.status).toBe(200);
    return response.body.data.file;
  };
  /** The raw bytes of a file, read through the owner's session download. */
  const contentOf = (owner: Client, links: { downloadUrl: string }) => download(links.downloadUrl, withSession(owner).auth);

  // Chunk routes against the main server.
  const start = (caller: Caller, body: unknown, extra?: Record<string, string>, query = '') => api(server.baseUrl, caller, 'POST', `/api/files/chunks${query}`, body, extra);
  async function started(caller: Caller, body: Record<string, unknown>, extra?: Record<string, string>): Promise<string> {
    const answer = await start(caller, { filename: 'file.bin', ...body }, extra);
    expect(answer.status, answer.text).toBe(200);
    return answer.body.data.uploadId;
  }
  const partUrlQuery = (caller: Caller, query: string) => api(server.baseUrl, caller, 'GET', `/api/files/chunks?${query}`);
  const partUrlPath = (caller: Caller, uploadId: string, partNumber: number | string) => api(server.baseUrl, caller, 'GET', `/api/files/chunks/${uploadId}/part/${partNumber}`);
  const putPart = (caller: Caller, uploadId: string, partNumber: number | string, data: Buffer | Readable, options?: PartOptions) => putPartAt(server.baseUrl, caller, uploadId, partNumber, data, options);
  const complete = (caller: Caller, uploadId: string, body: Record<string, unknown>, extra?: Record<string, string>) => api(server.baseUrl, caller, 'POST', `/api/files/chunks/${uploadId}/complete`, body, extra);
  const completeWrapped = (caller: Caller, uploadId: string, body: Record<string, unknown>, extra?: Record<string, string>) => api(server.baseUrl, caller, 'PUT', '/api/files/chunks', { uploadId, ...body }, extra);
  /** Every part route and both completion routes for one session, with the statuses they answered. */
  async function allRoutes(caller: Caller, uploadId: string, parts: unknown[] = [{ PartNumber: 1, ETag: 'x' }]): Promise<Record<string, number>> {
    return {
      partUrlQuery: (await partUrlQuery(caller, `uploadId=${uploadId}&partNumber=1`)).status,
      partUrlPath: (await partUrlPath(caller, uploadId, 1)).status,
      putPart: (await putPart(caller, uploadId, 1, Buffer.from('x'))).status,
      complete: (await complete(caller, uploadId, { parts })).status,
      completeWrapped: (await completeWrapped(caller, uploadId, { parts })).status,
    };
  }
  const everyRoute = (status: number) => ({ partUrlQuery: status, partUrlPath: status, putPart: status, complete: status, completeWrapped: status });

  const sessionRow = (uploadId: string) => server.ctx.db.selectFrom('chunkSessions').selectAll().where('id', '=', uploadId).executeTakeFirst();
  const lastActivity = async (uploadId: string) => (await sessionRow(uploadId))!.lastActivityAt;
  const setSession = (uploadId: string, values: { lastActivityAt?: number; storageTarget?: string | null }) =>
    server.ctx.db.updateTable('chunkSessions').set(values).where('id', '=', uploadId).execute();
  const fileCount = async (userId: string) => (await server.ctx.db.selectFrom('files').select('id').where('userId', '=', userId).execute()).length;
  /** Temporary files of part uploads (local: unfinished part files; s3: spooled chunked bodies). */
  async function partLeftovers(uploadId: string): Promise<string[]> {
    const tmp = path.join(server.dataDir, 'tmp');
    const spooled = fs.readdirSync(tmp).filter((name) => name.startsWith('part-'));
    const partsDir = path.join(tmp, 'multipart', (await sessionRow(uploadId))!.storageUploadId);
    const partial = fs.existsSync(partsDir) ? fs.readdirSync(partsDir).filter((name) => name.startsWith('tmp-')) : [];
    return [...spooled, ...partial];
  }
  const storedObject = async (uploadId: string) => server.ctx.storage.stat((await sessionRow(uploadId))!.fileKey);
  async function fileReadyDeliveries(fileId: string): Promise<number> {
    const rows = await server.ctx.db.selectFrom('webhookDeliveries').select(['body', 'eventType', 'test']).where('eventType', '=', 'file.ready').execute();
    return rows.filter((row) => !row.test && JSON.parse(row.body).data.id === fileId).length;
  }

  // -------------------------------------------------------------------------------------------
  describe('initialization (POST /api/files/chunks)', () => {
    it('takes a strict JSON body, ignores copyFormat and answers exactly {data: {uploadId, fileKey}}', async () => {
      const { caller } = await scripted();
      const ok = await start(caller, { filename: 'a.txt', mimeType: 'text/plain', size: 10, copyFormat: { anything: true }, visibility: 'PRIVATE' });
      expect(ok.status, ok.text).toBe(200);
      expect(Object.keys(ok.body)).toEqual(['data']);
      expect(Object.keys(ok.body.data).sort()).toEqual(['fileKey', 'uploadId']);
      expect(ok.body.data.uploadId).toMatch(UPLOAD_ID);
      expect(typeof ok.body.data.fileKey).toBe('string');
      expect((await start(caller, { filename: 'a.txt', size: 10, copyFormat: 'retired' })).status).toBe(200);

      const unknown = await start(caller, { filename: 'a.txt', size: 10, colour: 'blue' });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toMatch(/colour/);
      for (const size of [0, -1, 1.5, '10', null]) {
        const bad = await start(caller, { filename: 'a.txt', size });
        expect(bad.status, JSON.stringify(size)).toBe(400);
        expect(bad.body.error).toMatch(/size/);
      }
      expect((await start(caller, { filename: 'a.txt' })).status).toBe(400);
      expect((await start(caller, { filename: 'a.txt', size: 10, visibility: 'SECRET' })).status).toBe(400);
      // A mimeType that is no MIME type is refused at the start, not after every part was sent.
      for (const mimeType of ['bad mime', 'image', 'text/plain/extra']) {
        const bad = await start(caller, { filename: 'a.txt', size: 10, mimeType });
        expect([bad.status, bad.body.error], mimeType).toEqual([400, `The declared file type "${mimeType}" is not a MIME type`]);
      }
      expect((await start(caller, { filename: 'a.txt', size: 10, mimeType: 'Text/Plain; charset=utf-8' })).status).toBe(200);
    });

    it('refuses a size over the instance limit or the remaining quota with 413', async () => {
      const { caller: sized } = await scripted();
      await admin.patch('/api/settings', { maxUploadSizeBytes: 1000 });
      try {
        const tooBig = await start(sized, { filename: 'big.bin', size: 1001 });
        expect(tooBig.status).toBe(413);
        expect(tooBig.body.error).toMatch(/maximum upload size/);
        expect((await start(sized, { filename: 'fits.bin', size: 1000 })).status).toBe(200);
      } finally {
        await admin.patch('/api/settings', { maxUploadSizeBytes: 1073741824 });
      }
      const { user, caller } = await scripted();
      expect((await admin.patch(`/api/users/${user.userId}`, { quotaBytes: 100 })).status).toBe(200);
      expect((await uploadFile(user, 'used.txt', 'x'.repeat(60))).status).toBe(200);
      const overQuota = await start(caller, { filename: 'q.bin', size: 41 });
      expect(overQuota.status).toBe(413);
      expect(overQuota.body.error).toMatch(/quota/);
      expect((await start(caller, { filename: 'q.bin', size: 40 })).status).toBe(200);
    });

    it('applies the selectors and permission rules of POST /api/files', async () => {
      const { user, caller } = await scripted();
      const other = await member();
      const profile = (await user.post('/api/upload-profiles', { name: 'p', options: {} })).body.data.profile;
      const folder = (await user.post('/api/folders', { name: 'f' })).body.data.folder;
      const tag = (await user.post('/api/tags', { name: 't' })).body.data.tag;
      const tagged = (await user.post('/api/upload-profiles', { name: 'tagged', options: { tagIds: [tag.id] } })).body.data.profile;
      const foreignProfile = (await other.post('/api/upload-profiles', { name: 'theirs', options: {} })).body.data.profile;
      const foreignFolder = (await other.post('/api/folders', { name: 'theirs' })).body.data.folder;
      const body = { filename: 'a.txt', size: 1 };

      expect((await start(caller, body, { 'X-Upload-Profile': profile.id, 'X-Upload-Folder': folder.id })).status).toBe(200);
      expect((await start(caller, body, {}, `?profileId=${profile.id}&folderId=${folder.id}`)).status).toBe(200);
      expect((await start(caller, body, { 'X-Upload-Profile': 'none', 'X-Upload-Folder': 'none' })).status).toBe(200);
      expect((await start(caller, body, { 'X-Upload-Profile': profile.id }, '?profileId=none')).status).toBe(400);
      // A header sent twice reaches the server joined by ", ": it names no profile, and says so.
      const twice = await start(caller, body, { 'X-Upload-Profile': `${profile.id}, ${profile.id}` });
      expect([twice.status, twice.body.error]).toEqual([400, 'X-Upload-Profile: give the header once, with one value']);
      for (const [extra, query, message] of [
        [{ 'X-Upload-Profile': 'nosuchprofile' }, '', /profile/i],
        [{ 'X-Upload-Profile': foreignProfile.id }, '', /profile/i],
        [{}, `?profileId=${foreignProfile.id}`, /profile/i],
        [{ 'X-Upload-Folder': 'nosuchfolder' }, '', /folder/i],
        [{ 'X-Upload-Folder': foreignFolder.id }, '', /folder/i],
        [{}, `?folderId=${foreignFolder.id}`, /folder/i],
      ] as const) {
        const answer = await start(caller, body, extra, query);
        expect(answer.status, JSON.stringify([extra, query])).toBe(404);
        expect(answer.body.error).toMatch(message);
      }

      await withoutPermission('folders.manage', async () => {
        const refused = await start(caller, body, { 'X-Upload-Folder': folder.id });
        expect(refused.status).toBe(403);
        expect(refused.body).toEqual({ error: 'You do not have permission to perform this action.' });
        expect((await start(caller, body, { 'X-Upload-Folder': 'none' })).status).toBe(200);
      });
      await withoutPermission('tags.manage', async () => {
        expect((await start(caller, body, { 'X-Upload-Profile': tagged.id })).status).toBe(403);
      });
      await withoutPermission('files.upload', async () => {
        expect((await start(caller, body)).status).toBe(403);
      });
      expect((await start(caller, body, { 'X-Upload-Folder': folder.id })).status).toBe(200);
    });

    it('answers 401 without credentials or with a token lacking files:upload, on every chunk route', async () => {
      const { user, caller } = await scripted();
      const uploadId = await started(caller, { size: 1 });
      const readOnly = withToken(await createToken(user, ['files:read', 'urls:read', 'urls:write']));
      for (const who of [anonymous, readOnly, withToken('svc_nosuchtoken')]) {
        const answer = await start(who, { filename: 'a.txt', size: 1 });
        expect(answer.status).toBe(401);
        expect(answer.body).toEqual({ error: 'Unauthorized' });
        expect(await allRoutes(who, uploadId)).toEqual(everyRoute(401));
      }
      // The session cookie works too (Origin checked as for any state change).
      expect((await started(withSession(user), { size: 1 })).length).toBeGreaterThan(0);
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('durable, shared sessions', () => {
    it('starts on one process and finishes on another that shares the database and storage', async () => {
      const other = await startTestServer(serverEnv(), { databaseUrl: server.databaseUrl, dataDir: server.dataDir });
      try {
        const { user, caller } = await scripted();
        const first = bytes(1, 5 * MiB);
        const second = bytes(2, 1000);
        const uploadId = await started(caller, { filename: 'shared.bin', size: first.length + second.length });
        const etag1 = etagOf(await putPartAt(server.baseUrl, caller, uploadId, 1, first));
        expect((await api(other.baseUrl, caller, 'GET', `/api/files/chunks/${uploadId}/part/2`)).status).toBe(200);
        const etag2 = etagOf(await putPartAt(other.baseUrl, caller, uploadId, 2, second));
        const done = await api(other.baseUrl, caller, 'POST', `/api/files/chunks/${uploadId}/complete`, { parts: [{ PartNumber: 1, ETag: etag1 }, { PartNumber: 2, ETag: etag2 }] });
        expect(done.status, done.text).toBe(200);
        expect(done.body.size).toBe(first.length + second.length);
        // The first process serves the file the second one committed.
        const links = { downloadUrl: done.body.downloadUrl.replace(other.baseUrl, server.baseUrl) };
        expect(sha256(await contentOf(user, links))).toBe(sha256(Buffer.concat([first, second])));
        // And answers a repeated completion with the same file.
        const again = await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etag1 }, { PartNumber: 2, ETag: etag2 }] });
        expect(again.body.downloadUrl).toBe(links.downloadUrl);
      } finally {
        await other.close();
      }
    });

    it('expires after an hour without activity: part URLs, part uploads and completion give 404', async () => {
      const { caller } = await scripted();
      const uploadId = await started(caller, { size: 1 });
      const etag = etagOf(await putPart(caller, uploadId, 1, Buffer.from('x')));
      await setSession(uploadId, { lastActivityAt: Date.now() - HOUR - 60_000 });
      expect(await allRoutes(caller, uploadId, [{ PartNumber: 1, ETag: etag }])).toEqual(everyRoute(404));
      // Nothing was refreshed by the refused requests.
      expect(await lastActivity(uploadId)).toBeLessThan(Date.now() - HOUR);
    });

    it('part URL requests and part uploads refresh the inactivity timer; completion does not', async () => {
      const { caller } = await scripted();
      const uploadId = await started(caller, { size: 1 });
      const halfAnHourAgo = () => Date.now() - HOUR / 2;

      for (const refresh of [
        () => partUrlQuery(caller, `uploadId=${uploadId}&partNumber=1`),
        () => partUrlPath(caller, uploadId, 1),
        () => putPart(caller, uploadId, 1, Buffer.from('x')),
      ]) {
        await setSession(uploadId, { lastActivityAt: halfAnHourAgo() });
        const before = Date.now();
        expect((await refresh()).status).toBe(200);
        expect(await lastActivity(uploadId)).toBeGreaterThanOrEqual(before);
      }
      // The sweep moved with the activity.
      const job = await server.ctx.db.selectFrom('jobs').select('runAt').where('dedupeKey', '=', `chunk-session:${uploadId}`).executeTakeFirstOrThrow();
      expect(job.runAt).toBeGreaterThan(Date.now() + HOUR - 60_000);

      const etag = etagOf(await putPart(caller, uploadId, 1, Buffer.from('y')));
      const stamp = halfAnHourAgo();
      await setSession(uploadId, { lastActivityAt: stamp });
      expect((await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etag }] })).status).toBe(200);
      expect(await lastActivity(uploadId)).toBe(stamp);
      expect((await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etag }] })).status).toBe(200);
      expect(await lastActivity(uploadId)).toBe(stamp);
    });

    it('a stale session is swept: its row, its parts and its temporary storage are removed', async () => {
      const { caller } = await scripted();
      const uploadId = await started(caller, { size: 10 });
      etagOf(await putPart(caller, uploadId, 1, Buffer.from('hello')));
      const { storageUploadId } = (await sessionRow(uploadId))!;
      const partsDir = path.join(server.dataDir, 'tmp', 'multipart', storageUploadId);
      if (kind === 'local') expect(fs.existsSync(partsDir)).toBe(true);
      else expect(await s3!.pendingUploadIds()).toContain(storageUploadId);

      const past = Date.now() - 2 * HOUR;
      await setSession(uploadId, { lastActivityAt: past });
      const moved = await server.ctx.db.updateTable('jobs').set({ runAt: past }).where('dedupeKey', '=', `chunk-session:${uploadId}`).executeTakeFirst();
      expect(Number(moved.numUpdatedRows)).toBe(1);
      await server.jobs.runDueJobs();
      // The process's own poller may have claimed the job first: wait for whichever runs it.
      await expect.poll(() => sessionRow(uploadId), { timeout: 10_000 }).toBeUndefined();
      expect(await server.ctx.db.selectFrom('chunkParts').select('partNumber').where('sessionId', '=', uploadId).execute()).toEqual([]);
      if (kind === 'local') expect(fs.existsSync(partsDir)).toBe(false);
      else expect(await s3!.pendingUploadIds()).not.toContain(storageUploadId);
      expect((await partUrlPath(caller, uploadId, 1)).status).toBe(404);
    });
  });

  describe('account deletion', () => {
    it("removes the stored parts of the account's unfinished chunked uploads", async () => {
      const { user, caller } = await scripted();
      const uploadId = await started(caller, { size: 10 });
      etagOf(await putPart(caller, uploadId, 1, Buffer.from('hello')));
      const { storageUploadId } = (await sessionRow(uploadId))!;
      const partsDir = path.join(server.dataDir, 'tmp', 'multipart', storageUploadId);
      const stored = async () => (kind === 'local' ? fs.existsSync(partsDir) : (await s3!.pendingUploadIds()).includes(storageUploadId));
      expect(await stored()).toBe(true);

      expect((await admin.delete(`/api/users/${user.userId}`)).status).toBe(204);
      expect(await sessionRow(uploadId)).toBeUndefined();
      await server.jobs.runDueJobs();
      // The process's own poller may have claimed the job first: wait for whichever runs it.
      await expect.poll(stored, { timeout: 10_000 }).toBe(false);
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('part URLs', () => {
    it('validates uploadId and partNumber with 400 on every route', async () => {
      const { caller } = await scripted();
      const uploadId = await started(caller, { size: 1 });
      for (const badId of ['ABC', 'a-b', 'a_b', '%C3%A4']) {
        expect(await allRoutes(caller, badId), badId).toEqual(everyRoute(400));
      }
      for (const badNumber of ['0', '10001', 'x', '1.5', '-1']) {
        expect((await partUrlQuery(caller, `uploadId=${uploadId}&partNumber=${badNumber}`)).status, badNumber).toBe(400);
        expect((await partUrlPath(caller, uploadId, badNumber)).status, badNumber).toBe(400);
        expect((await putPart(caller, uploadId, badNumber, Buffer.from('x'))).status, badNumber).toBe(400);
      }
      expect((await partUrlQuery(caller, `uploadId=${uploadId}`)).status).toBe(400);
      expect((await partUrlQuery(caller, 'partNumber=1')).status).toBe(400);
      expect((await partUrlQuery(caller, '')).status).toBe(400);
      expect((await partUrlQuery(caller, `uploadId=${uploadId}&partNumber=10000`)).status).toBe(200);
      expect((await partUrlPath(caller, 'a'.repeat(100), 1)).status).toBe(404);
    });

    it('answers 400, not the router\'s 414, for an uploadId of 101 characters', async () => {
      const { caller } = await scripted();
      expect(await allRoutes(caller, 'a'.repeat(101))).toEqual(everyRoute(400));
    });

    it('gives 404 for an unknown session and for a session of another account', async () => {
      const { caller } = await scripted();
      const { caller: stranger } = await scripted();
      expect(await allRoutes(caller, 'nosuchupload0')).toEqual(everyRoute(404));
      const uploadId = await started(caller, { size: 1 });
      const etag = etagOf(await putPart(caller, uploadId, 1, Buffer.from('x')));
      expect(await allRoutes(stranger, uploadId, [{ PartNumber: 1, ETag: etag }])).toEqual(everyRoute(404));
      // The owner is unaffected.
      expect((await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etag }] })).status).toBe(200);
    });

    it('gives 409 when the storage target changed or was never recorded', async () => {
      const { caller } = await scripted();
      const uploadId = await started(caller, { size: 1 });
      const etag = etagOf(await putPart(caller, uploadId, 1, Buffer.from('x')));
      const parts = [{ PartNumber: 1, ETag: etag }];
      await setSession(uploadId, { storageTarget: kind === 'local' ? 'local:/somewhere/else' : 's3:http://elsewhere.example/bucket' });
      expect(await allRoutes(caller, uploadId, parts)).toEqual(everyRoute(409));
      await setSession(uploadId, { storageTarget: null });
      const noProvenance = await complete(caller, uploadId, { parts });
      expect(noProvenance.body.error).toMatch(/new upload/);
      expect(await allRoutes(caller, uploadId, parts)).toEqual(everyRoute(409));
      expect((await sessionRow(uploadId))!.state).toBe('open');
    });

    if (kind === 's3') {
      it('goes on with a session recorded by a process that spells the same bucket\'s endpoint differently, and sweeps its parts', async () => {
        // Another machine with S3_ENDPOINT=HTTP://localhost:<port>/ for the same store and bucket.
        const respelled = `s3:${s3!.endpoint.replace('http://127.0.0.1', 'HTTP://LocalHost')}//${s3!.bucket}`;
        const { caller } = await scripted();
        const uploadId = await started(caller, { size: 10 });
        await setSession(uploadId, { storageTarget: respelled });
        expect((await partUrlPath(caller, uploadId, 1)).status).toBe(200);
        etagOf(await putPart(caller, uploadId, 1, Buffer.from('hello')));
        const { storageUploadId } = (await sessionRow(uploadId))!;
        expect(await s3!.pendingUploadIds()).toContain(storageUploadId);

        // Abandoned, it is swept here, and its parts go from the bucket with it.
        const past = Date.now() - 2 * HOUR;
        await setSession(uploadId, { lastActivityAt: past });
        await server.ctx.db.updateTable('jobs').set({ runAt: past }).where('dedupeKey', '=', `chunk-session:${uploadId}`).execute();
        await server.jobs.runDueJobs();
        await expect.poll(() => sessionRow(uploadId), { timeout: 10_000 }).toBeUndefined();
        await expect.poll(() => s3!.pendingUploadIds(), { timeout: 10_000 }).not.toContain(storageUploadId);
      });
    }

    if (kind === 'local') {
      it('gives the local:// marker in both forms', async () => {
        const { caller } = await scripted();
        const uploadId = await started(caller, { size: 1 });
        const query = await partUrlQuery(caller, `uploadId=${uploadId}&partNumber=3`);
        expect(query.status).toBe(200);
        expect(Object.keys(query.body).sort()).toEqual(['presignedUrl', 'url']);
        expect(query.body.url).toMatch(/^local:\/\//);
        expect(query.body.presignedUrl).toBe(query.body.url);
        const byPath = await partUrlPath(caller, uploadId, 3);
        expect(byPath.body).toEqual({ data: { url: expect.stringMatching(/^local:\/\//) } });
      });
    }

    if (kind === 's3') {
      it('presigns a one-hour URL without checksum parameters; a part PUT to it without the token completes the upload', async () => {
        const { user, caller } = await scripted();
        const first = bytes(3, 5 * MiB);
        const last = bytes(4, 777);
        const uploadId = await started(caller, { filename: 'direct.bin', size: first.length + last.length });

        const query = await partUrlQuery(caller, `uploadId=${uploadId}&partNumber=1`);
        expect(query.status).toBe(200);
        expect(Object.keys(query.body).sort()).toEqual(['presignedUrl', 'url']);
        expect(query.body.presignedUrl).toBe(query.body.url);
        const byPath = await partUrlPath(caller, uploadId, 2);
        expect(Object.keys(byPath.body)).toEqual(['data']);
        expect(Object.keys(byPath.body.data)).toEqual(['url']);
        for (const raw of [query.body.url as string, byPath.body.data.url as string]) {
          const url = new URL(raw);
          expect(url.origin).toBe(new URL(s3!.endpoint).origin);
          expect(url.searchParams.get('X-Amz-Expires')).toBe('3600');
          expect([...url.searchParams.keys()].filter((name) => /checksum/i.test(name))).toEqual([]);
        }
        expect(new URL(query.body.url).searchParams.get('partNumber')).toBe('1');

        // Plain PUTs, no bearer token, straight to object storage.
        const put1 = await fetch(query.body.url, { method: 'PUT', body: first as Uint8Array<ArrayBuffer> });
        expect(put1.status).toBe(200);
        const put2 = await fetch(byPath.body.data.url, { method: 'PUT', body: last as Uint8Array<ArrayBuffer> });
        expect(put2.status).toBe(200);
        const etag1 = put1.headers.get('etag')!;
        const etag2 = put2.headers.get('etag')!;
        expect(etag1).toBeTruthy();

        // A wrong ETag for a directly uploaded part is still caught, and the session stays usable.
        const wrong = await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etag1 }, { PartNumber: 2, ETag: '"0123456789abcdef0123456789abcdef"' }] });
        expect(wrong.status).toBe(400);
        const done = await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etag1 }, { PartNumber: 2, ETag: etag2 }] });
        expect(done.status, done.text).toBe(200);
        expect(done.body.size).toBe(first.length + last.length);
        expect(sha256(await contentOf(user, done.body))).toBe(sha256(Buffer.concat([first, last])));
      });

      it('never commits a file whose assembled size differs from the declared one', async () => {
        const { user, caller } = await scripted();
        const uploadId = await started(caller, { filename: 'swapped.bin', size: 1000 });
        const throughServer = etagOf(await putPart(caller, uploadId, 1, bytes(50, 1000)));
        // The same part number replaced straight on object storage, with fewer bytes.
        const url = (await partUrlPath(caller, uploadId, 1)).body.data.url;
        expect((await fetch(url, { method: 'PUT', body: bytes(51, 10) as Uint8Array<ArrayBuffer> })).status).toBe(200);
        const { fileKey } = (await sessionRow(uploadId))!;
        const answer = await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: throughServer }] });
        expect(answer.status).toBe(400);
        expect(await fileCount(user.userId)).toBe(0);
        expect(await server.ctx.storage.stat(fileKey)).toBeNull();
      });

      it('checks the declared size of directly uploaded parts before assembling them', async () => {
        const { user, caller } = await scripted();
        const data = bytes(5, 2000);
        const uploadId = await started(caller, { filename: 'size.bin', size: data.length });
        const url = (await partUrlPath(caller, uploadId, 1)).body.data.url;
        const short = await fetch(url, { method: 'PUT', body: data.subarray(0, 1500) as Uint8Array<ArrayBuffer> });
        const mismatch = await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: short.headers.get('etag') }] });
        expect(mismatch.status).toBe(400);
        expect(mismatch.body.error).toMatch(/declared/);
        const full = await fetch(url, { method: 'PUT', body: data as Uint8Array<ArrayBuffer> });
        const done = await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: full.headers.get('etag') }] });
        expect(done.status, done.text).toBe(200);
        expect(sha256(await contentOf(user, done.body))).toBe(sha256(data));
      });
    }
  });

  // -------------------------------------------------------------------------------------------
  describe('PUT part', () => {
    it('takes raw application/octet-stream bytes and answers {data: {etag}}', async () => {
      const { user, caller } = await scripted();
      const uploadId = await started(caller, { filename: 'hello.txt', size: 11 });
      const answer = await putPart(caller, uploadId, 1, Buffer.from('hello world'));
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ data: { etag: expect.any(String) } });
      expect(answer.body.data.etag.length).toBeGreaterThan(0);
      const text = await putPart(caller, uploadId, 1, Buffer.from('hello world'), { contentType: 'text/plain' });
      expect(text.status).toBe(400);
      const form = await putPart(caller, uploadId, 1, Buffer.from('--x\r\n\r\n--x--\r\n'), { contentType: 'multipart/form-data; boundary=x' });
      expect(form.status).toBe(400);
      // The answer says what the route reads.
      expect(form.body).toEqual({ error: 'Unsupported Content-Type: multipart/form-data; boundary=x; send the body as application/octet-stream' });
      // Raw bytes are read by the part route alone: the completion routes beside it answer 400.
      const raw = Buffer.from(JSON.stringify({ uploadId, parts: [{ PartNumber: 1, ETag: answer.body.data.etag }] }));
      for (const [method, route] of [['PUT', '/api/files/chunks'], ['POST', `/api/files/chunks/${uploadId}/complete`]] as const) {
        const refused = await send(server.baseUrl + route, method, headersFor(server.baseUrl, caller, method, { 'content-type': 'application/octet-stream', 'content-length': String(raw.length) }), raw);
        expect(refused.status, `${method} ${route}: ${refused.text}`).toBe(400);
        expect(refused.body).toEqual({ error: 'Unsupported Content-Type: application/octet-stream; send the body as application/json' });
      }
      const done = await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: answer.body.data.etag }] });
      expect(done.status).toBe(200);
      expect((await contentOf(user, done.body)).toString()).toBe('hello world');
      // A browser session may upload parts too.
      const viaSession = await started(withSession(user), { size: 2 });
      expect((await putPart(withSession(user), viaSession, 1, Buffer.from('ab'))).status).toBe(200);
    });

    it('refuses a part over 64 MiB with 413, from Content-Length and while streaming', async () => {
      const { caller } = await scripted();
      const uploadId = await started(caller, { size: 100 * MiB });
      const declared = await putPart(caller, uploadId, 1, byteStream(6, 64 * MiB + 1), { length: 64 * MiB + 1 });
      expect(declared.status).toBe(413);
      expect(declared.body.error).toMatch(/64 MiB/);
      const streamed = await putPart(caller, uploadId, 1, stallingStream(6, 64 * MiB + 1), { chunked: true });
      expect(streamed.status).toBe(413);
      expect(streamed.body.error).toMatch(/64 MiB/);
      expect(await server.ctx.db.selectFrom('chunkParts').select('partNumber').where('sessionId', '=', uploadId).execute()).toEqual([]);
      expect(await partLeftovers(uploadId)).toEqual([]);
      // The session is still usable.
      expect((await putPart(caller, uploadId, 1, Buffer.from('x'), { chunked: true })).status).toBe(200);
    }, 60_000);

    it('refuses parts whose running total passes the declared size, while streaming', async () => {
      const { user, caller } = await scripted();
      const uploadId = await started(caller, { filename: 'total.bin', size: 1000 });
      const first = bytes(7, 600);
      const etag1 = etagOf(await putPart(caller, uploadId, 1, first));
      const byLength = await putPart(caller, uploadId, 2, bytes(8, 401));
      expect(byLength.status).toBe(413);
      expect(byLength.body.error).toMatch(/declared size/);
      const streamed = await putPart(caller, uploadId, 2, stallingStream(8, 500), { chunked: true });
      expect(streamed.status).toBe(413);
      expect(streamed.body.error).toMatch(/declared size/);
      expect(await partLeftovers(uploadId)).toEqual([]);
      // Exactly up to the declared size is fine, and a replaced part does not count against itself.
      const second = bytes(8, 400);
      const etag2 = etagOf(await putPart(caller, uploadId, 2, second, { chunked: true }));
      expect(etagOf(await putPart(caller, uploadId, 2, second))).toBe(etag2);
      if (kind === 's3') {
        // S3 cannot assemble a small non-final part; the size rule is checked first, so this is the 5 MiB answer.
        expect((await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etag1 }, { PartNumber: 2, ETag: etag2 }] })).status).toBe(400);
      } else {
        const done = await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etag1 }, { PartNumber: 2, ETag: etag2 }] });
        expect(done.status, done.text).toBe(200);
        expect(sha256(await contentOf(user, done.body))).toBe(sha256(Buffer.concat([first, second])));
      }
    });

    it('replaces a part sent again under the same number', async () => {
      const { user, caller } = await scripted();
      const uploadId = await started(caller, { filename: 'replaced.txt', size: 4 });
      const old = etagOf(await putPart(caller, uploadId, 1, Buffer.from('aaaa')));
      const fresh = etagOf(await putPart(caller, uploadId, 1, Buffer.from('bbbb')));
      expect(fresh).not.toBe(old);
      const stale = await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: old }] });
      expect(stale.status).toBe(400);
      const done = await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: fresh }] });
      expect(done.status, done.text).toBe(200);
      expect((await contentOf(user, done.body)).toString()).toBe('bbbb');
    });

    /** A part sent while the test holds back its second half; `release()` lets it finish. */
    async function partArriving(caller: Caller, uploadId: string, partNumber: number, data: Buffer) {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const answer = putPart(caller, uploadId, partNumber, gatedStream(data, gate), { length: data.length });
      // Its room is reserved before its first byte is stored.
      for (let i = 0; ; i++) {
        const held = await server.ctx.db.selectFrom('chunkPartReservations').select('id').where('sessionId', '=', uploadId).where('partNumber', '=', partNumber).execute();
        if (held.length > 0) break;
        if (i > 200) throw new Error('the part never reserved its room');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      return { answer, release };
    }

    it('counts a part sent again while others arrive once against the declared size, not twice', async () => {
      const { caller } = await scripted();
      // 5 MiB: S3 assembles no smaller part before another.
      const uploadId = await started(caller, { filename: 'resent.bin', size: 5 * MiB + 1000 });
      const first = bytes(31, 5 * MiB);
      etagOf(await putPart(caller, uploadId, 1, first));
      // The client lost part 1's answer and sends it again while it sends part 2.
      const again = await partArriving(caller, uploadId, 1, first);
      const second = await putPart(caller, uploadId, 2, bytes(32, 1000));
      again.release();
      expect(second.status, second.text).toBe(200);
      expect((await again.answer).status).toBe(200);
    });

    it('takes one copy of a part at a time: a second copy sent while the first arrives gets 409, and the first one counts', async () => {
      const { user, caller } = await scripted();
      const uploadId = await started(caller, { filename: 'twice.bin', size: 2000 });
      const first = bytes(33, 1000);
      const etag1 = etagOf(await putPart(caller, uploadId, 1, first));
      const second = bytes(34, 1000);
      const arriving = await partArriving(caller, uploadId, 2, second);
      const copy = await putPart(caller, uploadId, 2, second);
      expect(copy.status).toBe(409);
      expect(copy.body.error).toMatch(/^Part 2 is still arriving in an earlier request/);
      // Unlike the specification's other 409s the session goes on: the answer says when to look again,
      // at most the 20 seconds a reservation lives between renewals.
      expect(Number(copy.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(copy.headers['retry-after'])).toBeLessThanOrEqual(20);
      // The words say the same wait as the header, also for a part held longer (by an earlier
      // version of Hoard, whose reservations lived 5 minutes, cut off by its stop).
      await server.ctx.db.updateTable('chunkPartReservations').set({ liveUntil: Date.now() + 290_000 }).where('sessionId', '=', uploadId).where('partNumber', '=', 2).execute();
      const held = await putPart(caller, uploadId, 2, second);
      expect(held.status).toBe(409);
      const wait = Number(held.headers['retry-after']);
      expect(wait).toBeGreaterThan(280);
      expect(held.body.error).toBe(`Part 2 is still arriving in an earlier request; send it again once that request is answered (a request cut off frees the part within ${wait} seconds)`);
      arriving.release();
      const etag2 = etagOf(await arriving.answer);
      // Before, both were answered 200 and each removed the other's file: the part was gone.
      if (kind === 'local') {
        const done = await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etag1 }, { PartNumber: 2, ETag: etag2 }] });
        expect(done.status, done.text).toBe(200);
        expect(sha256(await contentOf(user, done.body))).toBe(sha256(Buffer.concat([first, second])));
      }
      // Two copies sent at once: either one waits for the other, or one is refused; what is answered 200 completes.
      const raced = await started(caller, { filename: 'raced.bin', size: 10 });
      const statuses = (await Promise.all([putPart(caller, raced, 1, Buffer.alloc(10, 2)), putPart(caller, raced, 1, Buffer.alloc(10, 2))])).map((a) => a.status).sort();
      expect([[200, 200], [200, 409]]).toContainEqual(statuses);
      const stored = await server.ctx.db.selectFrom('chunkParts').select('etag').where('sessionId', '=', raced).executeTakeFirstOrThrow();
      const done = await complete(caller, raced, { parts: [{ PartNumber: 1, ETag: stored.etag }] });
      expect(done.status, done.text).toBe(200);
    });

    it("holds a part a dead request was receiving until its room lapses, then takes the re-send, counted once", async () => {
      const { caller } = await scripted();
      const uploadId = await started(caller, { filename: 'crashed.bin', size: 2000 });
      etagOf(await putPart(caller, uploadId, 1, bytes(33, 1000)));
      // What a process killed while part 2 arrived leaves: its reservation, until it lapses.
      const dead = `dead${Date.now()}`;
      await server.ctx.db.insertInto('chunkPartReservations').values({ id: dead, sessionId: uploadId, partNumber: 2, bytes: 1000, liveUntil: Date.now() + 12_500 }).execute();
      const held = await putPart(caller, uploadId, 2, bytes(34, 1000));
      expect(held.status).toBe(409);
      // When the dead request's room lapses.
      expect(['12', '13']).toContain(held.headers['retry-after']);
      await server.ctx.db.updateTable('chunkPartReservations').set({ liveUntil: Date.now() - 1 }).where('id', '=', dead).execute();
      const resent = await putPart(caller, uploadId, 2, bytes(34, 1000));
      expect(resent.status, resent.text).toBe(200);
    });

    it('completes after a part still arriving has arrived, never under it', async () => {
      const { user, caller } = await scripted();
      const uploadId = await started(caller, { filename: 'late.bin', size: 1000 });
      const data = bytes(35, 1000);
      const etag = etagOf(await putPart(caller, uploadId, 1, data));
      const again = await partArriving(caller, uploadId, 1, data);
      const done = complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etag }] });
      await new Promise((resolve) => setTimeout(resolve, 600));
      again.release();
      const part = await again.answer;
      expect(part.status, part.text).toBe(200);
      const answer = await done;
      expect(answer.status, answer.text).toBe(200);
      expect(sha256(await contentOf(user, answer.body))).toBe(sha256(data));
    });

    it('answers 409 to a part sent while the upload is being completed', async () => {
      const { caller } = await scripted();
      const uploadId = await started(caller, { size: 1 });
      etagOf(await putPart(caller, uploadId, 1, Buffer.from('x')));
      // A completion holding its lease, as one assembling the parts does.
      await server.ctx.db.updateTable('chunkSessions').set({ state: 'completing', completingUntil: Date.now() + 30_000 }).where('id', '=', uploadId).execute();
      const during = await putPart(caller, uploadId, 1, Buffer.from('y'));
      expect([during.status, during.body.error]).toEqual([409, 'This upload is being completed; repeat the completion to get its file']);
      // It passes: the completion under way ends one way or the other within its lease.
      expect(during.headers['retry-after']).toBe('10');
      expect((await putPart(caller, uploadId, 2, Buffer.from('y'), { chunked: true })).status).toBe(409);
    });

    it('answers 409 on a completed session', async () => {
      const { caller } = await scripted();
      const uploadId = await started(caller, { size: 1 });
      const etag = etagOf(await putPart(caller, uploadId, 1, Buffer.from('x')));
      expect((await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etag }] })).status).toBe(200);
      const again = await putPart(caller, uploadId, 1, Buffer.from('y'));
      expect(again.status).toBe(409);
      expect(again.body.error).toMatch(/completed/);
      expect((await putPart(caller, uploadId, 2, Buffer.from('y'), { chunked: true })).status).toBe(409);
      expect((await partUrlPath(caller, uploadId, 2)).status).toBe(409);
      expect((await partUrlQuery(caller, `uploadId=${uploadId}&partNumber=2`)).status).toBe(409);
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('completion', () => {
    it('answers upload links unwrapped (POST …/complete) and as {data} (PUT /api/files/chunks)', async () => {
      const { user, caller } = await scripted();
      const urlId = (await user.get('/api/auth/me')).body.data.user.urlId;
      const a = await started(caller, { filename: 'one.txt', mimeType: 'text/plain', size: 3 });
      const etagA = etagOf(await putPart(caller, a, 1, Buffer.from('one')));
      const unwrapped = await complete(caller, a, { parts: [{ PartNumber: 1, ETag: etagA }] });
      expect(unwrapped.status).toBe(200);
      expect(Object.keys(unwrapped.body).sort()).toEqual(['copyText', 'downloadUrl', 'name', 'pageUrl', 'rawUrl', 'size', 'type', 'url']);
      expect(unwrapped.body).toMatchObject({ name: 'one.txt', size: 3, type: 'text/plain', url: `${server.baseUrl}/${urlId}/one.txt`, rawUrl: `${server.baseUrl}/api/files/${urlId}/one.txt` });

      const b = await started(caller, { filename: 'two.txt', size: 3 });
      const etagB = etagOf(await putPart(caller, b, 1, Buffer.from('two')));
      const wrapped = await completeWrapped(caller, b, { parts: [{ PartNumber: 1, ETag: etagB }] });
      expect(wrapped.status).toBe(200);
      expect(Object.keys(wrapped.body)).toEqual(['data']);
      expect(wrapped.body.data).toMatchObject({ name: 'two.txt', size: 3, type: 'text/plain' });
      expect((await download(wrapped.body.data.rawUrl)).toString()).toBe('two');
      expect((await completeWrapped(caller, b, { parts: [{ PartNumber: 1, ETag: etagB }] })).body.data.downloadUrl).toBe(wrapped.body.data.downloadUrl);
      expect((await completeWrapped(caller, 'X', { parts: [] })).status).toBe(400);
      expect((await api(server.baseUrl, caller, 'PUT', '/api/files/chunks', { parts: [{ PartNumber: 1, ETag: etagB }] })).status).toBe(400);
    });

    it('refuses a bad part list with 400 and leaves the session open', async () => {
      const { user, caller } = await scripted();
      const uploadId = await started(caller, { filename: 'p.txt', size: 2 });
      const etag = etagOf(await putPart(caller, uploadId, 1, Buffer.from('ok')));
      for (const body of [
        { parts: [] },
        {},
        { parts: [{ PartNumber: 0, ETag: etag }] },
        { parts: [{ PartNumber: 10001, ETag: etag }] },
        { parts: [{ PartNumber: 1.5, ETag: etag }] },
        { parts: [{ PartNumber: '1', ETag: etag }] },
        { parts: [{ PartNumber: 1 }] },
        { parts: [{ PartNumber: 1, ETag: 'ffffffffffffffffffffffffffffffff' }] },
        { parts: [{ PartNumber: 1, ETag: etag }, { PartNumber: 2, ETag: etag }] },
        { parts: [{ PartNumber: 1, ETag: etag }, { PartNumber: 1, ETag: 'ffffffffffffffffffffffffffffffff' }] },
        // Fields completion cannot change (naming, expiry) are refused, not silently ignored.
        { parts: [{ PartNumber: 1, ETag: etag }], filename: 'renamed.txt' },
        { parts: [{ PartNumber: 1, ETag: etag }], expiresAt: '2030-01-01T00:00:00Z' },
        { parts: [{ PartNumber: 1, ETag: etag }], uploadId: 'someotheruploadid' },
      ]) {
        const answer = await complete(caller, uploadId, body);
        expect(answer.status, JSON.stringify(body)).toBe(400);
        expect(answer.body.error).toBeTruthy();
      }
      const wrapped = await completeWrapped(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etag }], filename: 'renamed.txt' });
      expect([wrapped.status, wrapped.body.error]).toEqual([400, 'body: unknown field "filename"']);
      expect((await sessionRow(uploadId))!.state).toBe('open');
      expect(await fileCount(user.userId)).toBe(0);
      expect(await storedObject(uploadId)).toBeNull();
      // The body PUT /api/files/chunks takes, uploadId included, completes on this route too.
      const done = await complete(caller, uploadId, { uploadId, parts: [{ PartNumber: 1, ETag: `"${etag}"` }] });
      expect(done.status, done.text).toBe(200);
    });

    it('assembles the unique parts in PartNumber order from a shuffled, repeated list', async () => {
      const { user, caller } = await scripted();
      const parts = [bytes(11, 5 * MiB), bytes(12, 5 * MiB), bytes(13, 1234)];
      const uploadId = await started(caller, { filename: 'ordered.bin', size: parts.reduce((n, p) => n + p.length, 0) });
      const etags: string[] = [];
      for (const index of [2, 0, 1]) etags[index] = etagOf(await putPart(caller, uploadId, index + 1, parts[index]!));
      const list = [3, 1, 2, 1, 3, 2].map((n) => ({ PartNumber: n, ETag: etags[n - 1]! }));
      const done = await complete(caller, uploadId, { parts: list });
      expect(done.status, done.text).toBe(200);
      expect(sha256(await contentOf(user, done.body))).toBe(sha256(Buffer.concat(parts)));
    });

    it('refuses an assembled size other than the declared one, and the session stays usable', async () => {
      const { user, caller } = await scripted();
      const uploadId = await started(caller, { filename: 'ten.txt', size: 10 });
      const short = etagOf(await putPart(caller, uploadId, 1, Buffer.from('123456')));
      const answer = await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: short }] });
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatch(/declared/);
      // Mended by sending the part again: nothing says the upload has ended.
      expect(answer.body.error).not.toMatch(/ended/);
      expect(await fileCount(user.userId)).toBe(0);
      const full = etagOf(await putPart(caller, uploadId, 1, Buffer.from('1234567890')));
      const done = await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: full }] });
      expect(done.status, done.text).toBe(200);
      expect((await contentOf(user, done.body)).toString()).toBe('1234567890');
    });

    it('a completion refused after assembly (quota, contradicted type) leaves no file, no bytes and no charge', async () => {
      const { user, caller } = await scripted();
      expect((await admin.patch(`/api/users/${user.userId}`, { quotaBytes: 100 })).status).toBe(200);
      const uploadId = await started(caller, { filename: 'quota.bin', size: 50 });
      const etag = etagOf(await putPart(caller, uploadId, 1, bytes(40, 50)));
      const { fileKey } = (await sessionRow(uploadId))!;
      // The session's room is reserved: no other upload can take it …
      expect((await uploadFile(user, 'meanwhile.txt', 'x'.repeat(60))).status).toBe(413);
      // … but the quota can be lowered meanwhile.
      expect((await admin.patch(`/api/users/${user.userId}`, { quotaBytes: 40 })).status).toBe(200);
      const overQuota = await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etag }] });
      expect(overQuota.status).toBe(413);
      expect(overQuota.body.error).toMatch(/quota/);
      // The parts are gone into the refused object: the answer says the upload has ended, and it has.
      expect(overQuota.body.error).toMatch(/This upload has ended; start a new one/);
      expect((await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etag }] })).status).toBe(404);
      expect(await fileCount(user.userId)).toBe(0);
      expect(await server.ctx.storage.stat(fileKey)).toBeNull();
      const usage = await server.ctx.db.selectFrom('users').select('usedBytes').where('id', '=', user.userId).executeTakeFirstOrThrow();
      expect(usage.usedBytes).toBe(0);

      const zip = Buffer.concat([Buffer.from('504b0304', 'hex'), Buffer.alloc(30, 1)]);
      const lie = await started(caller, { filename: 'photo.png', mimeType: 'image/png', size: zip.length });
      const lieKey = (await sessionRow(lie))!.fileKey;
      const lieAnswer = await complete(caller, lie, { parts: [{ PartNumber: 1, ETag: etagOf(await putPart(caller, lie, 1, zip)) }] });
      expect(lieAnswer.status).toBe(400);
      expect(lieAnswer.body.error).toMatch(/does not match/);
      expect(lieAnswer.body.error).toMatch(/This upload has ended; start a new one/);
      expect(await fileCount(user.userId)).toBe(0);
      expect(await server.ctx.storage.stat(lieKey)).toBeNull();
    });

    it('keeps a text mimeType for text whose first bytes spell a short binary signature, as POST /api/files does', async () => {
      const { user, caller } = await scripted();
      const text = Buffer.from('MZ is the signature of DOS executables.\n');
      const uploadId = await started(caller, { filename: 'mz.txt', mimeType: 'text/plain', size: text.length });
      const done = await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etagOf(await putPart(caller, uploadId, 1, text)) }] });
      expect(done.status, done.text).toBe(200);
      expect(await recordOf(user, done.body)).toMatchObject({ name: 'mz.txt', mimeType: 'text/plain' });
      expect((await contentOf(user, done.body)).equals(text)).toBe(true);
    });

    it('keeps profile, folder and naming from the start, and applies the allowed sharing overrides', async () => {
      const { user, caller } = await scripted();
      const profile = (await user.post('/api/upload-profiles', { name: 'hidden', options: { visibility: 'PRIVATE', shareStyle: 'minimal' } })).body.data.profile;
      const other = (await user.post('/api/upload-profiles', { name: 'random', options: { visibility: 'PUBLIC', randomizeFileUrls: true } })).body.data.profile;
      const folder = (await user.post('/api/folders', { name: 'start' })).body.data.folder;
      const elsewhere = (await user.post('/api/folders', { name: 'elsewhere' })).body.data.folder;
      const selectors = { 'X-Upload-Profile': profile.id, 'X-Upload-Folder': folder.id };
      /** A session with its one part uploaded, ready to complete. */
      async function ready(name: string) {
        const uploadId = await started(caller, { filename: name, size: 1 }, selectors);
        const etag = etagOf(await putPart(caller, uploadId, 1, Buffer.from('x')));
        return { uploadId, finish: (completion: Record<string, unknown>) => complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etag }], ...completion }) };
      }
      const upload = async (name: string, completion: Record<string, unknown>) => (await ready(name)).finish(completion);

      const fixedStart = await started(caller, { filename: 'report.txt', size: 1 }, selectors);
      const fixedEtag = etagOf(await putPart(caller, fixedStart, 1, Buffer.from('x')));
      // The profile changes after the start: the session keeps its snapshot.
      await user.patch(`/api/upload-profiles/${profile.id}`, { options: { visibility: 'PUBLIC', randomizeFileUrls: true } });
      const fixed = await complete(caller, fixedStart, { parts: [{ PartNumber: 1, ETag: fixedEtag }] }, { 'X-Upload-Profile': other.id, 'X-Upload-Folder': elsewhere.id });
      expect(fixed.status, fixed.text).toBe(200);
      expect(fixed.body.name).toBe('report.txt');
      expect(await recordOf(user, fixed.body)).toMatchObject({ name: 'report.txt', folderId: folder.id, visibility: 'PRIVATE', hasPassword: false });
      await user.patch(`/api/upload-profiles/${profile.id}`, { options: { visibility: 'PRIVATE', shareStyle: 'minimal' } });

      const shared = await upload('shared.txt', { visibility: 'PUBLIC', password: 'hunter22' });
      expect(shared.status, shared.text).toBe(200);
      expect(await recordOf(user, shared.body)).toMatchObject({ folderId: folder.id, visibility: 'PUBLIC', hasPassword: true });
      expect((await upload('bad.txt', { visibility: 'HIDDEN' })).status).toBe(400);

      // Permissions are those of the completion: started with files.share and folders.manage, finished without.
      const forced = await ready('forced.txt');
      await withoutPermission('files.share', async () => {
        const answer = await forced.finish({ visibility: 'PUBLIC' });
        expect(answer.status, answer.text).toBe(200);
        expect((await recordOf(user, answer.body)).visibility).toBe('PRIVATE');
      });
      const inFolder = await ready('folder.txt');
      await withoutPermission('folders.manage', async () => {
        expect((await inFolder.finish({})).status).toBe(403);
        expect((await sessionRow(inFolder.uploadId))!.state).toBe('open');
      });
      expect((await inFolder.finish({})).status).toBe(200);
    });

    it('counts an expiration preset from the completion, when the file is made, not from the start', async () => {
      const { user, caller } = await scripted();
      const uploadId = await started(caller, { filename: 'hour.txt', size: 4, expiration: 'HOUR' });
      const etag = etagOf(await putPart(caller, uploadId, 1, Buffer.from('hour')));
      // A slow upload: the parts took a while.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const done = await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etag }] });
      expect(done.status, done.text).toBe(200);
      const record = await recordOf(user, done.body);
      expect(Date.parse(record.expiresAt) - Date.parse(record.uploadedAt)).toBe(HOUR);
      // An expiresAt given as an instant stays that instant.
      const at = new Date(Date.now() + 2 * HOUR).toISOString().replace(/\.\d+Z$/, '.000Z');
      const fixedId = await started(caller, { filename: 'fixed.txt', size: 1, expiresAt: at });
      const fixedEtag = etagOf(await putPart(caller, fixedId, 1, Buffer.from('f')));
      const fixed = await complete(caller, fixedId, { parts: [{ PartNumber: 1, ETag: fixedEtag }] });
      expect((await recordOf(user, fixed.body)).expiresAt).toBe(at);
    });

    it('keeps a file password only hashed while it uploads; the password opens the file, one given at completion replaces it', async () => {
      const { user, caller } = await scripted();
      const unlock = (links: { downloadUrl: string }, password: string) => api(server.baseUrl, anonymous, 'POST', `/api/files/${fileIdOf(links)}/unlock`, { password });
      const uploadId = await started(caller, { filename: 'locked.txt', size: 1, password: 'Kept-Only-As-A-Hash-1' });
      const etag = etagOf(await putPart(caller, uploadId, 1, Buffer.from('x')));
      const open = (await sessionRow(uploadId))!.options;
      expect(open).not.toContain('Kept-Only-As-A-Hash-1');
      expect(JSON.parse(open)).toMatchObject({ password: null, passwordHash: expect.stringMatching(/^\$argon2id\$/) });
      const done = await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etag }] });
      expect(done.status, done.text).toBe(200);
      expect((await sessionRow(uploadId))!.options).not.toContain('Kept-Only-As-A-Hash-1');
      expect((await recordOf(user, done.body)).hasPassword).toBe(true);
      expect((await unlock(done.body, 'wrong password')).status).toBe(403);
      expect((await unlock(done.body, 'Kept-Only-As-A-Hash-1')).status).toBe(204);

      const replacedId = await started(caller, { filename: 'replaced.txt', size: 1, password: 'The-First-Password-2' });
      const replacedEtag = etagOf(await putPart(caller, replacedId, 1, Buffer.from('y')));
      const replaced = await complete(caller, replacedId, { parts: [{ PartNumber: 1, ETag: replacedEtag }], password: 'The-Second-Password-3' });
      expect(replaced.status, replaced.text).toBe(200);
      expect((await unlock(replaced.body, 'The-First-Password-2')).status).toBe(403);
      expect((await unlock(replaced.body, 'The-Second-Password-3')).status).toBe(204);
    });

    it('refuses the sharing options of a completion in its URL, on both routes: they go in its body', async () => {
      const { user, caller } = await scripted();
      const uploadId = await started(caller, { filename: 'query.txt', size: 1 });
      const parts = [{ PartNumber: 1, ETag: etagOf(await putPart(caller, uploadId, 1, Buffer.from('q'))) }];
      const message = 'is an upload option: send it as a form field of the upload (or in the JSON body of a chunked upload), not in the URL';
      const unwrapped = await api(server.baseUrl, caller, 'POST', `/api/files/chunks/${uploadId}/complete?visibility=PRIVATE`, { parts });
      expect([unwrapped.status, unwrapped.body.error]).toEqual([400, `query.visibility: ${message}`]);
      const wrapped = await api(server.baseUrl, caller, 'PUT', '/api/files/chunks?password=hunter22', { uploadId, parts });
      expect([wrapped.status, wrapped.body.error]).toEqual([400, `query.password: ${message}`]);
      expect((await sessionRow(uploadId))!.state).toBe('open');
      // In the body, as the contract has it.
      const done = await complete(caller, uploadId, { parts, visibility: 'PRIVATE' });
      expect(done.status, done.text).toBe(200);
      expect((await recordOf(user, done.body)).visibility).toBe('PRIVATE');
    });

    it("checks the snapshot's expiry at completion: its action's permission, and an instant already past", async () => {
      const { user, caller } = await scripted();
      const ready = async (body: Record<string, unknown>) => {
        const uploadId = await started(caller, { filename: 'expiring.txt', size: 1, ...body });
        const etag = etagOf(await putPart(caller, uploadId, 1, Buffer.from('e')));
        return { uploadId, finish: () => complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etag }] }) };
      };
      const deleting = await ready({ expiration: 'DAY', expiryAction: 'DELETE' });
      const hiding = await ready({ expiration: 'DAY', expiryAction: 'SET_PRIVATE' });
      await withoutPermission('files.delete', async () => {
        expect((await deleting.finish()).status).toBe(403);
        expect((await sessionRow(deleting.uploadId))!.state).toBe('open');
      });
      await withoutPermission('files.share', async () => {
        expect((await hiding.finish()).status).toBe(403);
      });
      expect((await deleting.finish()).status).toBe(200);
      expect((await hiding.finish()).status).toBe(200);

      // An instant that passed while the parts arrived: a 400, as POST /api/files gives, not a file deleted at once.
      const soon = await ready({ expiresAt: new Date(Date.now() + 1500).toISOString() });
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const late = await soon.finish();
      expect(late.status, late.text).toBe(400);
      expect(late.body.error).toMatch(/expiresAt/);
      expect(await fileCount(user.userId)).toBe(2);
    });

    it('commits a file whose folder was deleted while it uploaded unfiled, as the folder\'s own files became', async () => {
      const { user, caller } = await scripted();
      const folder = (await user.post('/api/folders', { name: 'going' })).body.data.folder;
      const uploadId = await started(caller, { filename: 'late.txt', size: 4 }, { 'X-Upload-Folder': folder.id });
      const etag = etagOf(await putPart(caller, uploadId, 1, Buffer.from('late')));
      expect((await user.delete(`/api/folders/${folder.id}`)).status).toBe(204);
      const done = await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etag }] });
      expect(done.status, done.text).toBe(200);
      expect(await recordOf(user, done.body)).toMatchObject({ name: 'late.txt', folderId: null });
      expect((await contentOf(user, done.body)).toString()).toBe('late');
      const unfiled = await user.get('/api/files?folder=unfiled');
      expect(unfiled.body.pagination.total, unfiled.text).toBe(1);
    });

    it('binds a profile-bound token to its own sessions and refuses its overrides', async () => {
      const user = await member();
      const profile = (await user.post('/api/upload-profiles', { name: 'bound', options: { visibility: 'PRIVATE' } })).body.data.profile;
      const another = (await user.post('/api/upload-profiles', { name: 'another', options: {} })).body.data.profile;
      const bound = withToken(await createToken(user, ['files:upload'], { profileId: profile.id }));
      const boundElsewhere = withToken(await createToken(user, ['files:upload'], { profileId: another.id }));
      const unbound = withToken(await createToken(user, ['files:upload']));

      // Starting: the bound profile's options cannot be changed, and no expiresAt may be given.
      expect((await start(bound, { filename: 'x.txt', size: 1, visibility: 'PUBLIC' })).status).toBe(403);
      expect((await start(bound, { filename: 'x.txt', size: 1, expiresAt: null })).status).toBe(403);
      expect((await start(bound, { filename: 'x.txt', size: 1 }, { 'X-Upload-Profile': another.id })).status).toBe(403);
      expect((await start(bound, { filename: 'x.txt', size: 1 }, { 'X-Upload-Profile': 'none' })).status).toBe(403);
      const uploadId = await started(bound, { filename: 'bound.txt', size: 1 });
      expect((await sessionRow(uploadId))!.boundProfileId).toBe(profile.id);
      const etag = etagOf(await putPart(bound, uploadId, 1, Buffer.from('x')));
      const parts = [{ PartNumber: 1, ETag: etag }];
      expect(await allRoutes(boundElsewhere, uploadId, parts)).toEqual(everyRoute(403));

      const override = await complete(bound, uploadId, { parts, visibility: 'PUBLIC' });
      expect(override.status).toBe(403);
      const done = await complete(bound, uploadId, { parts });
      expect(done.status, done.text).toBe(200);
      expect((await recordOf(user, done.body)).visibility).toBe('PRIVATE');

      // A session started without the binding is out of the bound token's reach.
      const free = await started(unbound, { size: 1 });
      const freeEtag = etagOf(await putPart(unbound, free, 1, Buffer.from('x')));
      expect(await allRoutes(bound, free, [{ PartNumber: 1, ETag: freeEtag }])).toEqual(everyRoute(403));
      const fromSession = await started(withSession(user), { size: 1 });
      expect((await partUrlPath(bound, fromSession, 1)).status).toBe(403);
    });

    it('refuses a bound token the sessions it started once its profile is deleted, as its new uploads are, and lets it cancel them', async () => {
      const user = await member();
      const profile = (await user.post('/api/upload-profiles', { name: 'short-lived', options: {} })).body.data.profile;
      const bound = withToken(await createToken(user, ['files:upload'], { profileId: profile.id }));
      const uploadId = await started(bound, { filename: 'orphaned.txt', size: 1 });
      const etag = etagOf(await putPart(bound, uploadId, 1, Buffer.from('x')));
      expect((await user.delete(`/api/upload-profiles/${profile.id}`)).status).toBe(204);
      // Spec, Authentication 8: "uploads fail until it is replaced", a session begun before too.
      expect(await allRoutes(bound, uploadId, [{ PartNumber: 1, ETag: etag }])).toEqual(everyRoute(403));
      const refused = await complete(bound, uploadId, { parts: [{ PartNumber: 1, ETag: etag }] });
      expect(refused.body.error).toBe('The upload profile this token is bound to no longer exists; bind a new token');
      expect(await fileCount(user.userId)).toBe(0);
      // Giving it up is no upload: its room comes back at once.
      expect((await api(server.baseUrl, bound, 'DELETE', `/api/files/chunks/${uploadId}`)).status).toBe(204);
    });

    it('lets a bound token reach a session created with its profile by another token or a browser session', async () => {
      const user = await member();
      const profile = (await user.post('/api/upload-profiles', { name: 'shared', options: { visibility: 'PRIVATE' } })).body.data.profile;
      const another = (await user.post('/api/upload-profiles', { name: 'other', options: {} })).body.data.profile;
      const bound = withToken(await createToken(user, ['files:upload'], { profileId: profile.id }));
      const unbound = withToken(await createToken(user, ['files:upload']));

      const byToken = await started(unbound, { filename: 'handed-over.txt', size: 1 }, { 'X-Upload-Profile': profile.id });
      expect((await partUrlPath(bound, byToken, 1)).status).toBe(200);
      const first = etagOf(await putPart(bound, byToken, 1, Buffer.from('a')));
      const done = await complete(bound, byToken, { parts: [{ PartNumber: 1, ETag: first }] });
      expect(done.status, done.text).toBe(200);
      expect((await recordOf(user, done.body)).visibility).toBe('PRIVATE');

      const bySession = await started(withSession(user), { filename: 'from-browser.txt', size: 1 }, { 'X-Upload-Profile': profile.id });
      const etag = etagOf(await putPart(bound, bySession, 1, Buffer.from('c')));
      // The bound token cannot change what its profile fixes, whoever started the session.
      expect((await complete(bound, bySession, { parts: [{ PartNumber: 1, ETag: etag }], visibility: 'PUBLIC' })).status).toBe(403);
      expect((await complete(bound, bySession, { parts: [{ PartNumber: 1, ETag: etag }] })).status).toBe(200);

      // Another profile's session stays out of its reach.
      const elsewhere = await started(unbound, { size: 1 }, { 'X-Upload-Profile': another.id });
      expect((await partUrlPath(bound, elsewhere, 1)).status).toBe(403);
    });

    it('checks the token again at completion: revoked after the parts, it gets 403', async () => {
      const user = await member();
      const created = await user.post('/api/tokens', { name: 'revoke me', scopes: ['files:upload'] });
      const caller = withToken(created.body.data.secret);
      const uploadId = await started(caller, { filename: 'late.txt', size: 1 });
      const etag = etagOf(await putPart(caller, uploadId, 1, Buffer.from('x')));
      expect((await user.delete(`/api/tokens/${created.body.data.token.id}`)).status).toBe(204);
      const parts = [{ PartNumber: 1, ETag: etag }];
      const refused = await complete(caller, uploadId, { parts });
      expect(refused.status).toBe(403);
      expect((await completeWrapped(caller, uploadId, { parts })).status).toBe(403);
      // Other chunk routes treat the revoked token like any unknown credential.
      expect((await partUrlPath(caller, uploadId, 1)).status).toBe(401);
      expect(await fileCount(user.userId)).toBe(0);
      // The owner may still finish it with the browser session.
      expect((await complete(withSession(user), uploadId, { parts })).status).toBe(200);
    });

    it('a token that lapsed with no upload of its account begun before gets the generic 401 at completion, not a 403 saying it was real', async () => {
      const user = await member();
      const generic = [401, { error: 'Unauthorized' }];
      const answer = async (response: { status: number; body: unknown }) => [response.status, response.body];
      const parts = [{ PartNumber: 1, ETag: 'x' }];
      // Revoked before any session: a completion of any ID, real or not, is what an unknown token gets.
      const revoked = await user.post('/api/tokens', { name: 'revoked early', scopes: ['files:upload'] });
      expect((await user.delete(`/api/tokens/${revoked.body.data.token.id}`)).status).toBe(204);
      const unknown = withToken(`${revoked.body.data.secret.slice(0, -4)}zzzz`);
      for (const caller of [withToken(revoked.body.data.secret), unknown]) {
        expect(await answer(await complete(caller, 'abcdef', { parts }))).toEqual(generic);
        expect(await answer(await completeWrapped(caller, 'abcdef', { parts }))).toEqual(generic);
      }
      // Expired before the account's session began: the same.
      const expiring = await user.post('/api/tokens', { name: 'expired early', scopes: ['files:upload'], expiresAt: new Date(Date.now() + 60_000).toISOString() });
      await server.ctx.db.updateTable('apiTokens').set({ expiresAt: Date.now() - 1 }).where('id', '=', expiring.body.data.token.id).execute();
      const later = await started(withSession(user), { filename: 'later.txt', size: 1 });
      expect(await answer(await complete(withToken(expiring.body.data.secret), later, { parts }))).toEqual(generic);
    });

    it('a revocation answered while a completion commits is never followed by that completion\'s file', async () => {
      // A completion with a password hashes it (slow) before its commit; the token used to be
      // checked before that, so a revocation in between went unseen and the file was made after it.
      const user = await member();
      for (const delay of [0, 15, 30, 45, 60, 90]) {
        const created = await user.post('/api/tokens', { name: `racing ${delay}`, scopes: ['files:upload'] });
        const caller = withToken(created.body.data.secret);
        const uploadId = await started(caller, { filename: `race-${delay}.txt`, size: 1 });
        const etag = etagOf(await putPart(caller, uploadId, 1, Buffer.from('x')));
        const [done, revoked] = await Promise.all([
          complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etag }], password: 'a long file password' }),
          new Promise((resolve) => setTimeout(resolve, delay)).then(() => user.delete(`/api/tokens/${created.body.data.token.id}`)),
        ]);
        expect(revoked.status).toBe(204);
        expect([200, 403], done.text).toContain(done.status);
        if (done.status !== 200) continue;
        const token = ((await user.get('/api/tokens')).body.data.tokens as Array<{ id: string; revokedAt: string }>).find((t) => t.id === created.body.data.token.id)!;
        const record = await recordOf(user, done.body);
        expect(Date.parse(record.uploadedAt), `completion beside a revocation ${delay} ms later`).toBeLessThanOrEqual(Date.parse(token.revokedAt));
      }
    });

    it('emits file.ready once and returns the same file on repeated and concurrent completions', async () => {
      const { user, caller } = await scripted();
      const hook = await user.post('/api/webhooks', { name: 'receiver', url: 'http://127.0.0.1:9/' });
      expect(hook.status, hook.text).toBe(201);

      const uploadId = await started(caller, { filename: 'once.bin', size: 3000 });
      const etag = etagOf(await putPart(caller, uploadId, 1, bytes(20, 3000)));
      const parts = [{ PartNumber: 1, ETag: etag }];
      const first = await complete(caller, uploadId, { parts });
      expect(first.status).toBe(200);
      const again = await complete(caller, uploadId, { parts });
      const wrapped = await completeWrapped(caller, uploadId, { parts });
      expect(again.body).toEqual(first.body);
      expect(wrapped.body.data).toEqual(first.body);
      // A completed session answers with its file even after an hour without activity.
      await setSession(uploadId, { lastActivityAt: Date.now() - 2 * HOUR });
      expect((await complete(caller, uploadId, { parts })).body).toEqual(first.body);
      expect(await fileCount(user.userId)).toBe(1);
      expect(await fileReadyDeliveries(fileIdOf(first.body))).toBe(1);

      const racing = await started(caller, { filename: 'race.bin', size: 2 * MiB });
      const raceEtag = etagOf(await putPart(caller, racing, 1, bytes(21, 2 * MiB)));
      const raceParts = [{ PartNumber: 1, ETag: raceEtag }];
      const answers = await Promise.all(
        [0, 1, 2, 3, 4].map((i) => (i % 2 === 0 ? complete(caller, racing, { parts: raceParts }) : completeWrapped(caller, racing, { parts: raceParts }))),
      );
      const ok = answers.filter((a) => a.status === 200);
      expect(answers.map((a) => a.status), answers.map((a) => a.text).join('\n')).toEqual([200, 200, 200, 200, 200]);
      const named = new Set(ok.map((a) => (a.body.data ?? a.body).downloadUrl));
      expect(named.size).toBe(1);
      expect(await fileCount(user.userId)).toBe(2);
      expect(await fileReadyDeliveries(fileIdOf({ downloadUrl: [...named][0] as string }))).toBe(1);
      expect(await fileReadyDeliveries(fileIdOf(first.body))).toBe(1);
    });

    if (kind === 's3') {
      it('refuses a non-final part under 5 MiB with a 400 naming the rule, before completing', async () => {
        const { user, caller } = await scripted();
        const uploadId = await started(caller, { filename: 'small.bin', size: 2048 });
        const etag1 = etagOf(await putPart(caller, uploadId, 1, bytes(30, 1024)));
        const etag2 = etagOf(await putPart(caller, uploadId, 2, bytes(31, 1024)));
        const answer = await complete(caller, uploadId, { parts: [{ PartNumber: 1, ETag: etag1 }, { PartNumber: 2, ETag: etag2 }] });
        expect(answer.status).toBe(400);
        expect(answer.body.error).toMatch(/5 MiB/);
        // Not assembled: the multipart upload and the session are still there.
        const row = (await sessionRow(uploadId))!;
        expect(row.state).toBe('open');
        expect(await s3!.pendingUploadIds()).toContain(row.storageUploadId);
        // Replacing a part below a later one is refused as it arrives.
        const early = await putPart(caller, uploadId, 1, bytes(30, 1024));
        expect(early.status).toBe(400);
        expect(early.body.error).toMatch(/5 MiB/);

        // The same rule for parts PUT straight to object storage.
        const direct = await started(caller, { filename: 'direct-small.bin', size: 2048 });
        const etags: string[] = [];
        for (const n of [1, 2]) {
          const url = (await partUrlPath(caller, direct, n)).body.data.url;
          etags.push((await fetch(url, { method: 'PUT', body: bytes(32 + n, 1024) as Uint8Array<ArrayBuffer> })).headers.get('etag')!);
        }
        const directAnswer = await complete(caller, direct, { parts: etags.map((ETag, i) => ({ PartNumber: i + 1, ETag })) });
        expect(directAnswer.status).toBe(400);
        expect(directAnswer.body.error).toMatch(/5 MiB/);
        expect(await fileCount(user.userId)).toBe(0);
      });
    }
  });

  // -------------------------------------------------------------------------------------------
  describe('a large upload', () => {
    it('200 MiB in four 50 MiB parts reads back byte for byte', async () => {
      const { caller } = await scripted();
      const partSize = 50 * MiB;
      const total = 4 * partSize;
      const uploadId = await started(caller, { filename: 'large.bin', size: total });
      const expected = createHash('sha256');
      const parts: Array<{ PartNumber: number; ETag: string }> = [];
      for (let n = 1; n <= 4; n++) {
        const body = byteStream(100 + n, partSize, expected);
        if (kind === 's3' && n % 2 === 0) {
          // Every other part goes straight to object storage through its presigned URL.
          const url = (await partUrlPath(caller, uploadId, n)).body.data.url as string;
          const direct = await send(url, 'PUT', { 'content-length': String(partSize) }, body);
          expect(direct.status, direct.text).toBe(200);
          parts.push({ PartNumber: n, ETag: String(direct.headers.etag) });
        } else {
          parts.push({ PartNumber: n, ETag: etagOf(await putPart(caller, uploadId, n, body, { length: partSize })) });
        }
      }
      const done = await complete(caller, uploadId, { parts });
      expect(done.status, done.text).toBe(200);
      expect(done.body.size).toBe(total);
      const read = await sha256Of(done.body.rawUrl);
      expect(read.size).toBe(total);
      expect(read.sha256).toBe(expected.digest('hex'));
    }, 120_000);
  });
});
