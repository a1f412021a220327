import { expect, it } from 'vitest';
import { startTestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';
import { chunkedWithFirstPart, createToken } from '../support/uploads.ts';
import { startS3rver } from '../support/s3rver.ts';
import { s3Env } from '../support/storage-env.ts';

// A completion whose lease ran out while its process still worked on it (an event loop that stood
// still, a database that did not take its renewals) is taken over by the next completion request.
// Then two completions of one session run at once, and whichever loses must leave the winner's file
// whole. The object store holds each assembly back for seconds (s3rver's delayed completions), which
// is what lets the two overlap here; on local disk an assembly is too quick to be caught.
it("a completion that lost its lease leaves the file the completion that took over committed", async () => {
  const s3 = await startS3rver();
  const server = await startTestServer(s3Env(s3));
  try {
    const owner = await signUp(server.baseUrl);
    const token = await createToken(owner, ['files:upload']);
    const script = new Client(server.baseUrl);
    const bytes = Buffer.from('0123456789');
    const { uploadId, parts } = await chunkedWithFirstPart(server.baseUrl, token, 'taken-over.txt', bytes.length, bytes);
    const session = server.ctx.db.selectFrom('chunkSessions').selectAll().where('id', '=', uploadId);

    s3.delayCompletions(2_000);
    const first = script.post(`/api/files/chunks/${uploadId}/complete`, { parts }, { token });
    await expect.poll(async () => (await session.executeTakeFirstOrThrow()).state, { timeout: 5_000 }).toBe('completing');
    // The first completion's lease runs out while it waits for the store.
    await server.ctx.db.updateTable('chunkSessions').set({ completingUntil: Date.now() - 1 }).where('id', '=', uploadId).execute();
    const second = script.post(`/api/files/chunks/${uploadId}/complete`, { parts }, { token });
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
    const again = await script.post(`/api/files/chunks/${uploadId}/complete`, { parts }, { token });
    expect(again.status, again.text).toBe(200);
    expect((again.body as { rawUrl: string }).rawUrl).toBe(links.rawUrl);
    expect((await owner.get(new URL(links.rawUrl).pathname)).text).toBe(bytes.toString());
  } finally {
    await server.close();
    await s3.stop();
  }
});
