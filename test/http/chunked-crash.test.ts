import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { serverProcess } from '../support/server-process.ts';
import { signUp } from '../support/client.ts';
import { createToken } from '../support/uploads.ts';
import { providers, storageUnderTest, type StorageUnderTest } from '../support/stored-objects.ts';
import { sendRequest, type HttpAnswer } from '../support/raw-http.ts';

const MiB = 1024 * 1024;
const HOUR = 3600_000;

type Answer = HttpAnswer;

/** One request on its own connection; a body may be a stream that never ends. Rejects if the connection dies. */
const send = (url: string, method: string, headers: Record<string, string>, body?: Buffer | Readable): Promise<Answer> => sendRequest(url, method, headers, body);

const json = (token: string, value: unknown) => {
  const body = Buffer.from(JSON.stringify(value));
  return { headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': String(body.length) }, body };
};

/** Sends `length` bytes, then nothing more: the request stays open until its connection dies. */
function stalling(length: number): Readable {
  let sent = false;
  return new Readable({
    read() {
      if (!sent) this.push(randomBytes(length));
      sent = true;
    },
  });
}

describe.each(providers)('a server killed during chunked completions (%s storage)', (provider) => {
  let storage: StorageUnderTest;
  beforeAll(async () => {
    storage = await storageUnderTest(provider);
  });
  afterAll(async () => {
    await storage?.stop();
  });

  it('leaves every session completable or cleanly refused (409), and no byte behind once cleaned up', { timeout: 180_000 }, async () => {
    const dying = await serverProcess({ UPLOAD_RATE_LIMIT: '0', ...storage.env }, 'hoard-crash-');
    const { baseUrl, databaseUrl, dataDir } = dying;
    let restarted: TestServer | undefined;
    try {
      await dying.start();
      const owner = await signUp(baseUrl);
      const token = await createToken(owner, ['files:upload']);
      const auth = { authorization: `Bearer ${token}` };

      // Sessions of two parts sent out of order (so assembling copies bytes), S3's minimum part size first.
      const sessions: Array<{ uploadId: string; sha256: string; parts: Array<{ PartNumber: number; ETag: string }> }> = [];
      for (let i = 0; i < 8; i++) {
        const first = randomBytes(5 * MiB);
        const second = randomBytes(3 * MiB + i);
        const init = json(token, { filename: `crash-${i}.bin`, size: first.length + second.length, mimeType: 'application/octet-stream' });
        const started = await send(`${baseUrl}/api/files/chunks`, 'POST', init.headers, init.body);
        expect(started.status, started.text).toBe(200);
        const uploadId = started.body.data.uploadId as string;
        const parts = [];
        for (const [number, data] of [[2, second], [1, first]] as const) {
          const put = await send(`${baseUrl}/api/files/chunks/${uploadId}/part/${number}`, 'PUT', { ...auth, 'content-type': 'application/octet-stream', 'content-length': String(data.length) }, data);
          expect(put.status, put.text).toBe(200);
          parts.push({ PartNumber: number, ETag: put.body.data.etag as string });
        }
        sessions.push({ uploadId, sha256: createHash('sha256').update(first).update(second).digest('hex'), parts });
      }
      const tmpFiles = () => walk(path.join(dataDir, 'tmp')).filter((file) => (fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0) >= MiB).length;
      const before = tmpFiles();
      // Two more sessions with a part on its way (without a length, so S3 parts are spooled to DATA_DIR/tmp).
      const interrupted: string[] = [];
      const stalled: Array<Promise<unknown>> = [];
      for (let i = 0; i < 2; i++) {
        const init = json(token, { filename: `stalled-${i}.bin`, size: 10 * MiB });
        const started = await send(`${baseUrl}/api/files/chunks`, 'POST', init.headers, init.body);
        expect(started.status, started.text).toBe(200);
        interrupted.push(started.body.data.uploadId);
        stalled.push(send(`${baseUrl}/api/files/chunks/${started.body.data.uploadId}/part/${i + 1}`, 'PUT', { ...auth, 'content-type': 'application/octet-stream' }, stalling(3 * MiB)).catch(() => undefined));
      }
      // Both are being written to DATA_DIR/tmp.
      await vi.waitFor(() => expect(tmpFiles()).toBe(before + 2), { timeout: 10_000, interval: 20 });

      // Every completion at once; the process dies as soon as the first has answered.
      const first: Array<Answer | null> = sessions.map(() => null);
      const completions = sessions.map((session, index) => {
        const body = json(token, { parts: session.parts });
        return send(`${baseUrl}/api/files/chunks/${session.uploadId}/complete`, 'POST', body.headers, body.body).then(
          (answer) => void (first[index] = answer),
          () => undefined,
        );
      });
      await Promise.race(completions);
      await dying.kill();
      await Promise.all([...completions, ...stalled]);
      for (const answer of first) if (answer) expect(answer.status, answer.text).toBe(200);

      // Another process takes over: each completion is repeated.
      restarted = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0' }, { databaseUrl, dataDir });
      const server = restarted;
      const retried = await Promise.all(
        sessions.map((session) => {
          const body = json(token, { parts: session.parts });
          return send(`${server.baseUrl}/api/files/chunks/${session.uploadId}/complete`, 'POST', body.headers, body.body);
        }),
      );
      const completedIds: string[] = [];
      for (const [index, answer] of retried.entries()) {
        expect([200, 409], answer.text).toContain(answer.status);
        if (answer.status === 409) {
          expect(first[index]).toBeNull();
          expect(answer.body.error).toMatch(/start a new upload/);
          continue;
        }
        const raw = await fetch(answer.body.rawUrl);
        expect(raw.status).toBe(200);
        expect(createHash('sha256').update(Buffer.from(await raw.arrayBuffer())).digest('hex')).toBe(sessions[index]!.sha256);
        if (first[index]) expect(new URL(answer.body.rawUrl).pathname).toBe(new URL(first[index]!.body.rawUrl).pathname);
        completedIds.push(answer.body.downloadUrl.split('/').at(-2));
      }

      // Time passes: the interrupted uploads expire, the safety nets fall due, and what the dead
      // process left in DATA_DIR/tmp ages past the sweep's safe age.
      const past = Date.now() - 2 * HOUR;
      await server.ctx.db.updateTable('chunkSessions').set({ lastActivityAt: past }).where('id', 'in', interrupted).execute();
      await server.ctx.db.updateTable('jobs').set({ runAt: past }).where('type', 'in', ['storage.cleanup', 'chunks.sweep', 'storage.tmpSweep']).execute();
      for (const file of walkAll(path.join(dataDir, 'tmp'))) fs.utimesSync(file, past / 1000, past / 1000);
      await server.jobs.runDueJobs();

      await vi.waitFor(
        async () => {
          const files = await server.ctx.db.selectFrom('files').select(['id', 'storageKey', 'size']).where('userId', '=', owner.userId).execute();
          expect(files.map((f) => f.id).sort()).toEqual([...completedIds].sort());
          expect((await storage.keys(dataDir, `files/${owner.userId}/`)).sort()).toEqual(files.map((f) => f.storageKey).sort());
          expect(await storage.leftovers(dataDir)).toEqual([]);
          const user = await server.ctx.db.selectFrom('users').select('usedBytes').where('id', '=', owner.userId).executeTakeFirstOrThrow();
          expect(Number(user.usedBytes)).toBe(files.reduce((sum, f) => sum + Number(f.size), 0));
          expect(await server.ctx.db.selectFrom('chunkSessions').select('id').where('userId', '=', owner.userId).where('state', '!=', 'completed').execute()).toEqual([]);
        },
        { timeout: 20_000, interval: 200 },
      );
    } finally {
      dying.stop();
      await restarted?.close();
    }
  });
});

/** Files under `dir`. */
function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? walk(full) : [full];
  });
}

/** Files and directories under `dir`. */
function walkAll(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? [...walkAll(full), full] : [full];
  });
}
