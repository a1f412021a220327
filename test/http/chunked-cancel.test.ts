import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/client.ts';
import { createToken, uploadingMember } from '../support/uploads.ts';
import { providers, storageUnderTest, type StorageUnderTest } from '../support/stored-objects.ts';

const MiB = 1024 * 1024;

/**
 * DELETE /api/files/chunks/{uploadId} (docs/decisions.md, "Cancelling a chunked upload"): a session
 * given up frees the room its declared size held against the quota at once, and its parts go.
 */
describe.each(providers)('cancelling a chunked upload (%s storage)', (provider) => {
  let storage: StorageUnderTest;
  let server: TestServer;
  let admin: Awaited<ReturnType<typeof signUp>>;

  beforeAll(async () => {
    storage = await storageUnderTest(provider);
    server = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0' });
    admin = await signUp(server.baseUrl);
  });
  afterAll(async () => {
    await server?.close();
    await storage?.stop();
  });

  const member = (quotaBytes: number | null) => uploadingMember(admin, quotaBytes, 'cancel');
  type Member = Awaited<ReturnType<typeof member>>;
  const start = (who: Member, size: number, token = who.token) => who.scripted.post('/api/files/chunks', { filename: 'given-up.bin', size }, { token });
  const putPart = (who: Member, uploadId: string, partNumber: number, data: Buffer) =>
    who.scripted.request('PUT', `/api/files/chunks/${uploadId}/part/${partNumber}`, { body: data, token: who.token, headers: { 'content-type': 'application/octet-stream' } });
  const cancel = (who: Member, uploadId: string, token = who.token) => who.scripted.request('DELETE', `/api/files/chunks/${uploadId}`, { token });
  const sessionRow = (uploadId: string) => server.ctx.db.selectFrom('chunkSessions').select(['id', 'state']).where('id', '=', uploadId).executeTakeFirst();
  const storageUploadIdOf = async (uploadId: string) =>
    (await server.ctx.db.selectFrom('chunkSessions').select('storageUploadId').where('id', '=', uploadId).executeTakeFirstOrThrow()).storageUploadId;
  /**
   * What the storage still holds of one unfinished upload once the jobs due have run: its parts
   * (local: under DATA_DIR/tmp/multipart; s3: the multipart upload), and any part spooled to disk.
   */
  async function leftoversOf(storageUploadId: string): Promise<string[]> {
    await server.jobs.runDueJobs();
    return (await storage.leftovers(server.dataDir)).filter((left) => left.includes(storageUploadId) || path.basename(left).startsWith('part-'));
  }

  it('frees the declared size against the quota at once, and removes the parts stored', async () => {
    const who = await member(MiB);
    const started = await start(who, MiB);
    expect(started.status, started.text).toBe(200);
    const uploadId = started.body.data.uploadId as string;
    expect((await putPart(who, uploadId, 1, randomBytes(MiB / 2))).status).toBe(200);
    expect((await start(who, MiB)).status).toBe(413);
    const storageUploadId = await storageUploadIdOf(uploadId);
    expect(await leftoversOf(storageUploadId)).not.toEqual([]);

    const cancelled = await cancel(who, uploadId);
    expect(cancelled.status, cancelled.text).toBe(204);
    expect(cancelled.text).toBe('');
    expect(await sessionRow(uploadId)).toBeUndefined();
    await expect.poll(() => leftoversOf(storageUploadId), { timeout: 10_000 }).toEqual([]);

    // The room is free: the whole quota can be declared again, and nothing was charged.
    const again = await start(who, MiB);
    expect(again.status, again.text).toBe(200);
    const used = await server.ctx.db.selectFrom('users').select('usedBytes').where('id', '=', who.userId).executeTakeFirstOrThrow();
    expect(Number(used.usedBytes)).toBe(0);

    // The cancelled session is gone for every chunk route.
    expect((await putPart(who, uploadId, 2, randomBytes(16))).status).toBe(404);
    expect((await who.scripted.post(`/api/files/chunks/${uploadId}/complete`, { parts: [] }, { token: who.token })).status).toBe(404);
    const twice = await cancel(who, uploadId);
    expect(twice.status).toBe(404);
    expect(twice.body.error).toBe('Upload session not found');
    expect((await cancel(who, again.body.data.uploadId)).status).toBe(204);
  });

  it("answers 404 for another account's session and leaves it be; 400 for a malformed ID; 404 for an unknown one", async () => {
    const owner = await member(null);
    const stranger = await member(null);
    const started = await start(owner, 100);
    const uploadId = started.body.data.uploadId as string;
    const theirs = await cancel(stranger, uploadId);
    expect(theirs.status).toBe(404);
    expect(theirs.body.error).toBe('Upload session not found');
    expect(await sessionRow(uploadId)).toEqual({ id: uploadId, state: 'open' });
    expect((await putPart(owner, uploadId, 1, randomBytes(100))).status).toBe(200);

    const malformed = await cancel(owner, 'NOT-AN-ID');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toMatch(/uploadId/);
    expect((await cancel(owner, 'nosuchsession')).status).toBe(404);
    expect((await cancel(owner, uploadId)).status).toBe(204);
  });

  it('needs files:upload, and a token bound to a profile reaches only the sessions started with it', async () => {
    const who = await member(null);
    const started = await start(who, 100);
    const uploadId = started.body.data.uploadId as string;
    const reader = await createToken(who.session, ['files:read']);
    // A token without the scope gets the one generic 401 (spec, Errors).
    const unscoped = await cancel(who, uploadId, reader);
    expect(unscoped.status).toBe(401);
    expect((await who.scripted.request('DELETE', `/api/files/chunks/${uploadId}`)).status).toBe(401);

    const profile = (await who.session.post('/api/upload-profiles', { name: 'screenshots', options: {} })).body.data.profile;
    const bound = await createToken(who.session, ['files:upload'], { profileId: profile.id });
    const elsewhere = await cancel(who, uploadId, bound);
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.error).toMatch(/bound to an upload profile/);
    expect(await sessionRow(uploadId)).toEqual({ id: uploadId, state: 'open' });

    const own = await start(who, 100, bound);
    expect(own.status, own.text).toBe(200);
    expect((await cancel(who, own.body.data.uploadId, bound)).status).toBe(204);
    // The browser session cancels its own uploads too.
    expect((await who.session.request('DELETE', `/api/files/chunks/${uploadId}`)).status).toBe(204);
  });

  it('refuses a session completed or being completed (409), which keeps its file', async () => {
    const who = await member(null);
    const started = await start(who, 100);
    const uploadId = started.body.data.uploadId as string;
    const part = await putPart(who, uploadId, 1, randomBytes(100));
    const done = await who.scripted.post(`/api/files/chunks/${uploadId}/complete`, { parts: [{ PartNumber: 1, ETag: part.body.data.etag }] }, { token: who.token });
    expect(done.status, done.text).toBe(200);
    const late = await cancel(who, uploadId);
    expect(late.status).toBe(409);
    expect(late.body.error).toMatch(/completed/);
    expect(await server.ctx.db.selectFrom('files').select('id').where('userId', '=', who.userId).execute()).toHaveLength(1);

    const other = await start(who, 100);
    const otherId = other.body.data.uploadId as string;
    await server.ctx.db.updateTable('chunkSessions').set({ state: 'completing', completingUntil: Date.now() + 60_000 }).where('id', '=', otherId).execute();
    const busy = await cancel(who, otherId);
    expect([busy.status, busy.body.error, busy.headers.get('retry-after')]).toEqual([409, 'This upload is being completed; repeat the completion to get its file', '10']);
    expect(await sessionRow(otherId)).toEqual({ id: otherId, state: 'completing' });
  });

  it('turns away a part still arriving when its upload is cancelled, and keeps none of its bytes', async () => {
    const who = await member(4 * MiB);
    const started = await start(who, 2 * MiB);
    const uploadId = started.body.data.uploadId as string;
    const storageUploadId = await storageUploadIdOf(uploadId);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let step = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        step++;
        if (step === 1) return controller.enqueue(new Uint8Array(256 * 1024).fill(1));
        await released;
        controller.enqueue(new Uint8Array(256 * 1024).fill(2));
        controller.close();
      },
    });
    const answer = fetch(`${server.baseUrl}/api/files/chunks/${uploadId}/part/1`, {
      method: 'PUT',
      body,
      duplex: 'half',
      headers: { authorization: `Bearer ${who.token}`, 'content-type': 'application/octet-stream' },
    } as RequestInit);
    // The part is streaming once its room is reserved.
    await expect.poll(() => server.ctx.db.selectFrom('chunkPartReservations').select('id').where('sessionId', '=', uploadId).execute(), { timeout: 10_000 }).toHaveLength(1);
    expect((await cancel(who, uploadId)).status).toBe(204);
    release();
    const response = await answer;
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: string }).error).toMatch(/^Upload session not found/);
    expect(await server.ctx.db.selectFrom('chunkParts').select('partNumber').where('sessionId', '=', uploadId).execute()).toEqual([]);
    await expect.poll(() => leftoversOf(storageUploadId), { timeout: 10_000 }).toEqual([]);
    // Nothing of the session or its part holds room: the whole quota can be declared.
    expect((await start(who, 4 * MiB)).status).toBe(200);
  });
});
