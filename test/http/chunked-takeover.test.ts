import { expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';
import { chunkedWithFirstPart, createToken } from '../support/uploads.ts';
import { startS3rver, type S3rverHandle } from '../support/s3rver.ts';
import { s3Env } from '../support/storage-env.ts';
import { chunkLimits } from '../../src/shared/chunk-limits.ts';

// A completion whose lease ran out while its process still worked on it (an event loop that stood
// still, a database that did not take its renewals) is taken over by the next completion request.
// Then two completions of one session run at once, and whichever loses must leave the winner's file
// whole. The object store holds each assembly back for seconds (s3rver's delayed completions), which
// is what lets the two overlap here; on local disk an assembly is too quick to be caught.
it("a completion that lost its lease leaves the file the completion that took over committed", async () => {
  const bytes = Buffer.from('0123456789');
  await uploadOnSlowStore('taken-over.txt', bytes, async ({ s3, server, owner, uploadId, complete, completing }) => {
    s3.delayCompletions(2_000);
    const first = complete();
    await completing();
    // The first completion's lease runs out while it waits for the store.
    await server.ctx.db.updateTable('chunkSessions').set({ completingUntil: Date.now() - 1 }).where('id', '=', uploadId).execute();
    const second = complete();
    const answers = await Promise.all([first, second]);
    s3.delayCompletions(0);

    // The request that took over committed the object the first one assembled; the first, having
    // lost its lease, made no file of its own, removed nothing, and answers the other's file.
    expect(answers.map((answer) => answer.status), answers.map((answer) => answer.text).join('\n')).toEqual([200, 200]);
    expect(answers[0]!.body).toEqual(answers[1]!.body);
    const made = [answers[1]!];
    const files = await server.ctx.db.selectFrom('files').select(['id', 'storageKey']).where('userId', '=', owner.userId).execute();
    expect(files).toHaveLength(1);
    expect(await server.ctx.storage.stat(files[0]!.storageKey)).toMatchObject({ size: bytes.length });
    const links = made[0]!.body as { rawUrl: string };
    const served = await owner.get(new URL(links.rawUrl).pathname);
    expect(served.status).toBe(200);
    expect(served.text).toBe(bytes.toString());
    // Completing again gives the same file.
    const again = await complete();
    expect(again.status, again.text).toBe(200);
    expect((again.body as { rawUrl: string }).rawUrl).toBe(links.rawUrl);
    expect((await owner.get(new URL(links.rawUrl).pathname)).text).toBe(bytes.toString());
  });
});

// A repeated completion waits for the one under way (10 minutes at most) and then answers 409. That
// 409 is not the specification's "start a new upload": the session goes on, and Retry-After says so
// (docs/decisions.md, "Parts and completion exclude each other"). The wait is shortened here, in
// this process's limits, for the second request only.
it('a completion that waited out another one under way answers 409 with Retry-After, and repeating it gets the file', async () => {
  const limits = chunkLimits as { completionWaitMs: number };
  const wait = limits.completionWaitMs;
  const bytes = Buffer.from('assembled slowly');
  await uploadOnSlowStore('slow.txt', bytes, async ({ s3, server, owner, complete, completing }) => {
    s3.delayCompletions(3_000);
    const first = complete();
    await completing();
    limits.completionWaitMs = 500;
    const waited = await complete().finally(() => (limits.completionWaitMs = wait));
    expect([waited.status, waited.body]).toEqual([409, { error: 'Another request is still completing this upload; repeat the completion later to get its file' }]);
    expect(waited.headers.get('retry-after')).toBe('10');

    const done = await first;
    s3.delayCompletions(0);
    expect(done.status, done.text).toBe(200);
    const repeated = await complete();
    expect(repeated.status, repeated.text).toBe(200);
    expect(repeated.body).toEqual(done.body);
    expect((await owner.get(new URL((done.body as { rawUrl: string }).rawUrl).pathname)).text).toBe(bytes.toString());
    expect(await server.ctx.db.selectFrom('files').select('id').where('userId', '=', owner.userId).execute()).toHaveLength(1);
  }).finally(() => (limits.completionWaitMs = wait));
});

/** A one-part chunked upload of `bytes` by a token, on a server whose object store is s3rver. */
async function uploadOnSlowStore(name: string, bytes: Buffer, run: (upload: Awaited<ReturnType<typeof begin>>) => Promise<void>): Promise<void> {
  const s3 = await startS3rver();
  const server = await startTestServer(s3Env(s3));
  try {
    await run(await begin(s3, server, name, bytes));
  } finally {
    await server.close();
    await s3.stop();
  }
}

async function begin(s3: S3rverHandle, server: TestServer, name: string, bytes: Buffer) {
  const owner = await signUp(server.baseUrl);
  const token = await createToken(owner, ['files:upload']);
  const script = new Client(server.baseUrl);
  const { uploadId, parts } = await chunkedWithFirstPart(server.baseUrl, token, name, bytes.length, bytes);
  const session = server.ctx.db.selectFrom('chunkSessions').selectAll().where('id', '=', uploadId);
  return {
    s3,
    server,
    owner,
    uploadId,
    complete: () => script.post(`/api/files/chunks/${uploadId}/complete`, { parts }, { token }),
    /** Once a completion holds the session (and waits for the store). */
    completing: () => expect.poll(async () => (await session.executeTakeFirstOrThrow()).state, { timeout: 5_000 }).toBe('completing'),
  };
}
