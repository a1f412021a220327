import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';
import { uploadFile, uploadingMember } from '../support/uploads.ts';
import { storageEnv, storageKinds } from '../support/storage-env.ts';

const MiB = 1024 * 1024;
const HOUR = 3600_000;

describe.each(storageKinds)('chunked uploads against the quota and the declared size (%s storage)', (kind) => {
  let server: TestServer;
  let stopStorage: () => Promise<void>;
  let admin: Awaited<ReturnType<typeof signUp>>;

  beforeAll(async () => {
    const storage = await storageEnv(kind);
    stopStorage = storage.stop;
    server = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0', CHUNKED_UPLOAD_TEMP_LIMIT: String(64 * MiB) });
    admin = await signUp(server.baseUrl);
  });
  afterAll(async () => {
    await server?.close();
    await stopStorage?.();
  });

  const member = (quotaBytes: number | null) => uploadingMember(admin, quotaBytes, 'quota');
  const start = (who: { scripted: Client; token: string }, size: number) => who.scripted.post('/api/files/chunks', { filename: 'part.bin', size }, { token: who.token });
  const putPart = (who: { scripted: Client; token: string }, uploadId: string, partNumber: number, data: Buffer) =>
    who.scripted.request('PUT', `/api/files/chunks/${uploadId}/part/${partNumber}`, { body: data, token: who.token, headers: { 'content-type': 'application/octet-stream' } });
  const complete = (who: { scripted: Client; token: string }, uploadId: string, parts: Array<{ PartNumber: number; ETag: string }>) =>
    who.scripted.post(`/api/files/chunks/${uploadId}/complete`, { parts }, { token: who.token });
  const usedBytes = async (userId: string) => Number((await server.ctx.db.selectFrom('users').select('usedBytes').where('id', '=', userId).executeTakeFirstOrThrow()).usedBytes);
  const expire = (uploadId: string) => server.ctx.db.updateTable('chunkSessions').set({ lastActivityAt: Date.now() - 2 * HOUR }).where('id', '=', uploadId).execute();

  it('reserves the declared size of open sessions: six 1 MiB sessions on a 1 MiB quota open one, and a single upload finds no room', async () => {
    const who = await member(MiB);
    const answers = await Promise.all(Array.from({ length: 6 }, () => start(who, MiB)));
    const opened = answers.filter((a) => a.status === 200);
    expect(opened).toHaveLength(1);
    for (const refused of answers.filter((a) => a.status !== 200)) {
      expect(refused.status, refused.text).toBe(413);
      // The room is held, not used: the message says where it went, as the account's usage does not show it.
      expect(refused.body.error).toBe(`The upload exceeds your storage quota (0 bytes left; 1 MiB more are held by your unfinished chunked uploads until they complete, are cancelled or lapse after an hour without activity)`);
    }
    const uploadId = opened[0]!.body.data.uploadId as string;
    const single = await uploadFile(who.session, 'one.txt', 'x');
    expect(single.status).toBe(413);
    expect(single.body.error).toMatch(/quota \(0 bytes left; 1 MiB more are held by your unfinished chunked uploads/);

    // Completion replaces the reservation with the real charge.
    const data = randomBytes(MiB);
    const part = await putPart(who, uploadId, 1, data);
    expect(part.status, part.text).toBe(200);
    expect((await complete(who, uploadId, [{ PartNumber: 1, ETag: part.body.data.etag }])).status).toBe(200);
    expect(await usedBytes(who.userId)).toBe(MiB);
    expect((await start(who, 1)).status).toBe(413);
  });

  it('releases the reservation of a session that expired, before and after its sweep', async () => {
    const who = await member(MiB);
    const first = await start(who, MiB);
    expect(first.status).toBe(200);
    expect((await start(who, MiB)).status).toBe(413);
    await expire(first.body.data.uploadId);
    expect((await uploadFile(who.session, 'now.txt', 'x'.repeat(100))).status).toBe(200);
    await server.ctx.db.updateTable('jobs').set({ runAt: Date.now() - HOUR }).where('dedupeKey', '=', `chunk-session:${first.body.data.uploadId}`).execute();
    await server.jobs.runDueJobs();
    await expect.poll(() => server.ctx.db.selectFrom('chunkSessions').select('id').where('id', '=', first.body.data.uploadId).executeTakeFirst(), { timeout: 10_000 }).toBeUndefined();
    const second = await start(who, MiB - 100);
    expect(second.status, second.text).toBe(200);
    expect(await usedBytes(who.userId)).toBe(100);
  });

  it('never stores more than the declared size: of eight parallel 1 MiB parts on a 1 MiB session, one is taken', async () => {
    const who = await member(null);
    const started = await start(who, MiB);
    expect(started.status).toBe(200);
    const uploadId = started.body.data.uploadId as string;
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => putPart(who, uploadId, i + 1, randomBytes(MiB))));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    for (const refused of answers.filter((a) => a.status !== 200)) {
      expect(refused.status, refused.text).toBe(413);
      expect(refused.body.error).toMatch(/declared size/);
    }
    const parts = await server.ctx.db.selectFrom('chunkParts').select(['partNumber', 'size']).where('sessionId', '=', uploadId).execute();
    expect(parts.reduce((sum, p) => sum + Number(p.size), 0)).toBe(MiB);
    // The refused parts' room is free again, and nothing of theirs is held.
    expect(await server.ctx.db.selectFrom('chunkPartReservations').select('id').where('sessionId', '=', uploadId).execute()).toEqual([]);
    const taken = answers.findIndex((a) => a.status === 200);
    expect((await complete(who, uploadId, [{ PartNumber: taken + 1, ETag: answers[taken]!.body.data.etag }])).status).toBe(200);
  });

  it('caps unfinished sessions per account at 20 (429 with Retry-After: when the oldest expires)', async () => {
    const who = await member(null);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const answer = await start(who, 10);
      expect(answer.status, answer.text).toBe(200);
      ids.push(answer.body.data.uploadId);
    }
    // The oldest was last active 50 minutes ago: it expires, and frees its place, in 10 minutes.
    await server.ctx.db.updateTable('chunkSessions').set({ lastActivityAt: Date.now() - 50 * 60_000 }).where('id', '=', ids[5]!).execute();
    const refused = await start(who, 10);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(590);
    expect(retryAfter).toBeLessThanOrEqual(600);
    expect(refused.body.error).toMatch(/20 unfinished chunked uploads/);
    await expire(ids[0]!);
    expect((await start(who, 10)).status).toBe(200);
  });

  if (kind === 's3') {
    it('signs the named size of a presigned part as its Content-Length and reserves its room', async () => {
      const who = await member(null);
      const started = await start(who, 6 * MiB);
      expect(started.status).toBe(200);
      const uploadId = started.body.data.uploadId as string;
      const urlFor = (partNumber: number, size?: number) =>
        who.scripted.get(`/api/files/chunks/${uploadId}/part/${partNumber}${size === undefined ? '' : `?size=${size}`}`, { token: who.token });

      const first = await urlFor(1, 5 * MiB);
      expect(first.status, first.text).toBe(200);
      const signed = new URL(first.body.data.url);
      expect(signed.searchParams.get('X-Amz-SignedHeaders')!.split(';')).toContain('content-length');
      // Only 1 MiB of the declared size is left for other parts, by URL or through the server.
      const second = await urlFor(2, 2 * MiB);
      expect(second.status).toBe(413);
      expect(second.body.error).toMatch(/declared size/);
      expect((await putPart(who, uploadId, 2, randomBytes(2 * MiB))).status).toBe(413);
      expect((await urlFor(2, 65 * MiB)).status).toBe(413);
      expect((await urlFor(2, -1 as number)).status).toBe(400);
      // Asking again for part 1 replaces its reservation rather than adding one.
      expect((await urlFor(1, 5 * MiB)).status).toBe(200);
      const last = await urlFor(2, MiB);
      expect(last.status, last.text).toBe(200);
      // Without a size, the URL binds no length (the parts' sizes are checked at completion).
      expect(new URL((await urlFor(2)).body.data.url).searchParams.get('X-Amz-SignedHeaders')).toBe('host');

      const parts = [];
      for (const [number, answer, size] of [[1, first, 5 * MiB], [2, last, MiB]] as const) {
        const put = await fetch(answer.body.data.url, { method: 'PUT', body: randomBytes(size) });
        expect(put.status).toBe(200);
        parts.push({ PartNumber: number, ETag: put.headers.get('etag')! });
      }
      const done = await complete(who, uploadId, parts);
      expect(done.status, done.text).toBe(200);
      expect(await server.ctx.db.selectFrom('chunkPartReservations').select('id').where('sessionId', '=', uploadId).execute()).toEqual([]);
    });
  }

  it("keeps one account to a quarter of the instance's room for unfinished uploads, so others still have theirs", async () => {
    const greedy = await member(null);
    const other = await member(null);
    // A quarter of 64 MiB: one session of any allowed size always may, a second only within 16 MiB.
    const first = await start(greedy, 12 * MiB);
    expect(first.status, first.text).toBe(200);
    const second = await start(greedy, 12 * MiB);
    expect(second.status).toBe(429);
    expect(second.body.error).toMatch(/^Your unfinished chunked uploads hold 12 MiB; one account may hold at most 16 MiB of unfinished uploads/);
    // When its own oldest session would expire: an hour from its last activity.
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(3500);
    expect((await start(greedy, 4 * MiB)).status).toBe(200);
    // Another account still finds room.
    const theirs = await start(other, 30 * MiB);
    expect(theirs.status, theirs.text).toBe(200);
    // Their sessions lapse, leaving the instance's room to the tests after this one.
    const live = await server.ctx.db.selectFrom('chunkSessions').select('id').where('userId', 'in', [greedy.userId, other.userId]).where('state', '!=', 'completed').execute();
    expect(live).toHaveLength(3);
    for (const { id } of live) await expire(id);
  });

  it("refuses new sessions past the instance's temporary storage limit (429), across accounts", async () => {
    const one = await member(null);
    const other = await member(null);
    const big = await start(one, 40 * MiB);
    expect(big.status, big.text).toBe(200);
    const refused = await start(other, 30 * MiB);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.body.error).toMatch(/no room left for chunked uploads/);
    await expire(big.body.data.uploadId);
    expect((await start(other, 30 * MiB)).status).toBe(200);
  });
});

describe("the largest upload against the room for unfinished chunked uploads", () => {
  type Line = { level: number; msg?: string; [field: string]: unknown };
  const warnings = (lines: Line[]) => lines.filter((line) => line.level === 40 && /CHUNKED_UPLOAD_TEMP_LIMIT/.test(line.msg ?? '')).map((line) => line.msg);

  it('is told to the operator at start and when an administrator changes it, while one account could hold all of the room', async () => {
    const logged: Line[] = [];
    // The largest upload (1 GiB) is above the room: such a file can never go up in parts.
    const server = await startTestServer({ CHUNKED_UPLOAD_TEMP_LIMIT: String(64 * MiB), MAX_UPLOAD_SIZE: String(1024 * MiB) }, undefined, logged);
    const shared = { databaseUrl: server.databaseUrl, dataDir: server.dataDir };
    try {
      expect(warnings(logged)).toEqual([`The largest upload (${1024 * MiB} bytes) is more than CHUNKED_UPLOAD_TEMP_LIMIT (${64 * MiB} bytes): a file above it is always refused when sent in parts, as the web app sends every file over 32 MiB; raise CHUNKED_UPLOAD_TEMP_LIMIT to at least ${4096 * MiB} bytes (4 × the largest upload)`]);
      const admin = await signUp(server.baseUrl);
      logged.length = 0;
      // Within the room but above an account's quarter of it: two accounts' single sessions fill it.
      expect((await admin.patch('/api/settings', { maxUploadSizeBytes: 32 * MiB })).status).toBe(200);
      expect(warnings(logged)).toEqual([`The largest upload (${32 * MiB} bytes) is more than a quarter of CHUNKED_UPLOAD_TEMP_LIMIT (${64 * MiB} bytes): 2 accounts starting uploads of that size, without sending a byte, can hold all of its room, and every other account's large uploads are refused (429) until they finish or expire; raise CHUNKED_UPLOAD_TEMP_LIMIT to at least ${128 * MiB} bytes (4 × the largest upload)`]);
      // A change that leaves it as it was says it once only; within the quarter, nothing.
      expect((await admin.patch('/api/settings', { maxUploadSizeBytes: 32 * MiB, registration: 'open' })).status).toBe(200);
      expect(warnings(logged)).toHaveLength(1);
      expect((await admin.patch('/api/settings', { maxUploadSizeBytes: 16 * MiB })).status).toBe(200);
      expect(warnings(logged)).toHaveLength(1);
    } finally {
      await server.close();
    }
    const again: Line[] = [];
    const restarted = await startTestServer({ CHUNKED_UPLOAD_TEMP_LIMIT: String(64 * MiB) }, shared, again);
    await restarted.close();
    expect(again.length).toBeGreaterThan(0);
    expect(warnings(again)).toEqual([]);
    // Without a limit there is nothing to say.
    const unlimited: Line[] = [];
    const open = await startTestServer({ CHUNKED_UPLOAD_TEMP_LIMIT: '0', MAX_UPLOAD_SIZE: String(1024 * MiB) }, undefined, unlimited);
    await open.close();
    expect(unlimited.length).toBeGreaterThan(0);
    expect(warnings(unlimited)).toEqual([]);
  });
});
