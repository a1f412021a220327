import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';
import { chunkedWithFirstPart, createToken, uploadFile } from '../support/uploads.ts';
import { startS3rver } from '../support/s3rver.ts';
import { DeleteBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { s3Env } from '../support/storage-env.ts';
import { startStallingProxy } from '../support/stalling-proxy.ts';
import { tarBytes } from '../support/archives.ts';

// A bucket that is missing, or refuses the credentials, is the operator's to mend: refused at
// start-up saying which setting, and a 503 (with the reason in the log) if it goes away later.
it('refuses to start on a bucket that does not exist or refuses the credentials, saying which setting to look at', async () => {
  const s3 = await startS3rver();
  try {
    await expect(startTestServer({ ...s3Env(s3), S3_BUCKET: 'no-such-bucket' })).rejects.toThrow('STORAGE=s3: the bucket "no-such-bucket" does not exist');
    // No credentials at all, here or in the AWS SDK's own places (AWS_* variables, a profile, the machine's role).
    const { S3_ACCESS_KEY_ID: _id, S3_SECRET_ACCESS_KEY: _secret, ...withoutCredentials } = s3Env(s3);
    await expect(startTestServer(withoutCredentials)).rejects.toThrow('STORAGE=s3: no credentials for the store: set S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (or give the machine AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile, or an instance role)');
    // A bucket holding none of the files the database lists (files on local disk, not copied into it).
    const local = await startTestServer();
    const owner = await signUp(local.baseUrl);
    expect((await uploadFile(owner, 'on-disk.txt', 'bytes on local disk')).status).toBe(200);
    await local.close();
    await expect(startTestServer(s3Env(s3), { databaseUrl: local.databaseUrl, dataDir: local.dataDir })).rejects.toThrow(/STORAGE=s3: the bucket \(.*\) holds none of the 1 newest files the database lists/);
  } finally {
    await s3.stop();
  }
});

it('starts within seconds on a store that accepts connections and answers nothing, and serves once it answers', async () => {
  const s3 = await startS3rver();
  const proxy = await startStallingProxy(s3.endpoint);
  try {
    // A library whose newest file the start looks for in the bucket.
    const first = await startTestServer({ ...s3Env(s3), S3_ENDPOINT: proxy.endpoint });
    const owner = await signUp(first.baseUrl);
    expect((await uploadFile(owner, 'kept.txt', 'kept bytes')).status).toBe(200);
    await first.close();
    proxy.stallAfter(0);
    const began = Date.now();
    const server = await startTestServer({ ...s3Env(s3), S3_ENDPOINT: proxy.endpoint }, { databaseUrl: first.databaseUrl, dataDir: first.dataDir });
    try {
      // 10 s for the access check, 10 s for the files: not the client's three attempts of 37.5 s each.
      expect(Date.now() - began).toBeLessThan(30_000);
      expect((await new Client(server.baseUrl).get('/api/health')).status).toBe(200);
    } finally {
      proxy.release();
      await server.close();
    }
  } finally {
    await proxy.close();
    await s3.stop();
  }
}, 90_000);

it('answers 503, not 500, when the bucket goes away under a running server, and logs why', async () => {
  const s3 = await startS3rver();
  const logged: Array<{ level: number; msg?: string; [field: string]: unknown }> = [];
  const server = await startTestServer({ ...s3Env(s3), LOG_LEVEL: 'info' }, undefined, logged);
  try {
    const owner = await signUp(server.baseUrl);
    const client = new S3Client({ endpoint: s3.endpoint, region: s3.region, forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    await client.send(new DeleteBucketCommand({ Bucket: s3.bucket }));
    client.destroy();
    const refused = await uploadFile(owner, 'nowhere.txt', 'no bucket to go to');
    expect([refused.status, refused.body.error]).toEqual([503, 'The file storage is unavailable right now; try again shortly']);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(logged.some((line) => line.level === 50 && line.msg?.startsWith('the file storage refuses Hoard: check S3_BUCKET'))).toBe(true);
    expect(logged.some((line) => line.msg === 'request failed')).toBe(false);
    expect(await server.ctx.db.selectFrom('files').select('id').execute()).toEqual([]);
  } finally {
    await server.close();
    await s3.stop();
  }
});

const jobOf = (server: TestServer, dedupeKey: string) => server.ctx.db.selectFrom('jobs').selectAll().where('dedupeKey', '=', dedupeKey).executeTakeFirst();

/**
 * Makes the job with `dedupeKey` due as on its tenth failed attempt and waits for the eleventh,
 * which the store refuses: the job must be waiting for a next one, up to an hour later, not dropped.
 */
async function refusedAnEleventhTime(server: TestServer, dedupeKey: string): Promise<void> {
  await server.ctx.db.updateTable('jobs').set({ attempts: 10, runAt: Date.now() }).where('dedupeKey', '=', dedupeKey).execute();
  await expect.poll(async () => (await jobOf(server, dedupeKey))?.attempts, { timeout: 20_000 }).toBe(11);
  await expect.poll(async () => (await jobOf(server, dedupeKey))?.leasedBy, { timeout: 20_000 }).toBeNull();
  const waiting = await jobOf(server, dedupeKey);
  expect(waiting?.lastError).toBeTruthy();
  // Tried again at most an hour apart (±20 %), as any failed job, and not given up.
  expect(Number(waiting!.runAt) - Date.now()).toBeGreaterThan(30 * 60_000);
  expect(Number(waiting!.runAt) - Date.now()).toBeLessThan(75 * 60_000);
}

/** Makes the job with `dedupeKey` due now and waits until it has run to its end. */
async function runNow(server: TestServer, dedupeKey: string): Promise<void> {
  await server.ctx.db.updateTable('jobs').set({ runAt: Date.now() }).where('dedupeKey', '=', dedupeKey).execute();
  await expect.poll(async () => (await jobOf(server, dedupeKey)) ?? null, { timeout: 20_000 }).toBeNull();
}

it('keeps trying to remove the bytes of a deleted file however long the store is down, and removes them once it is back', async () => {
  const s3 = await startS3rver();
  const server = await startTestServer(s3Env(s3));
  try {
    const owner = await signUp(server.baseUrl);
    const uploaded = await uploadFile(owner, 'deleted.txt', 'bytes nobody will reference');
    expect(uploaded.status, uploaded.text).toBe(200);
    const { id, storageKey } = await server.ctx.db.selectFrom('files').select(['id', 'storageKey']).where('userId', '=', owner.userId).executeTakeFirstOrThrow();
    // The deletion removes the bytes at once when it can; the store is down, so its job is left to.
    s3.outage(true);
    expect((await owner.delete(`/api/files/${id}`)).status).toBe(204);
    expect(await jobOf(server, `storage-cleanup:${storageKey}`)).toMatchObject({ type: 'storage.cleanup' });
    // As it is after ten failed attempts, about 85 minutes into an outage: the default back-off
    // dropped the job then, and the bytes stayed in the bucket with nothing left to remove them.
    await refusedAnEleventhTime(server, `storage-cleanup:${storageKey}`);
    s3.outage(false);
    expect(await server.ctx.storage.stat(storageKey)).not.toBeNull();
    await runNow(server, `storage-cleanup:${storageKey}`);
    expect(await server.ctx.storage.stat(storageKey)).toBeNull();
  } finally {
    await server.close();
    await s3.stop();
  }
});

it('keeps trying to remove the parts of a stale chunked upload however long the store is down', async () => {
  const s3 = await startS3rver();
  const server = await startTestServer(s3Env(s3));
  try {
    const owner = await signUp(server.baseUrl);
    const token = await createToken(owner, ['files:upload']);
    const { uploadId } = await chunkedWithFirstPart(server.baseUrl, token, 'big.bin', 10, Buffer.from('hello'));
    const session = server.ctx.db.selectFrom('chunkSessions').selectAll().where('id', '=', uploadId);
    const { storageUploadId } = await session.executeTakeFirstOrThrow();
    expect(await s3.pendingUploadIds()).toContain(storageUploadId);

    s3.outage(true);
    // Stale, and swept for the eleventh time: the default back-off gave the sweep up after ten,
    // and the parts stayed in the bucket (where S3 bills for them) with no session sweep left.
    await server.ctx.db.updateTable('chunkSessions').set({ lastActivityAt: Date.now() - 2 * 3600_000 }).where('id', '=', uploadId).execute();
    await refusedAnEleventhTime(server, `chunk-session:${uploadId}`);
    s3.outage(false);
    expect(await session.executeTakeFirst()).toBeDefined();
    expect(await s3.pendingUploadIds()).toContain(storageUploadId);
    await runNow(server, `chunk-session:${uploadId}`);
    await expect.poll(async () => (await session.executeTakeFirst()) ?? null, { timeout: 20_000 }).toBeNull();
    expect(await s3.pendingUploadIds()).not.toContain(storageUploadId);
  } finally {
    await server.close();
    await s3.stop();
  }
});

// An object store that cannot be reached (stopped, restarting, a network fault) is the storage's
// state, not the request's: 503 with Retry-After, which upload tools and scripts retry on.
it('answers 503 with Retry-After while the object store cannot be reached, and keeps no record of a refused upload', async () => {
  const s3 = await startS3rver();
  const server = await startTestServer(s3Env(s3));
  try {
    const owner = await signUp(server.baseUrl);
    const uploaded = await uploadFile(owner, 'kept.txt', 'kept bytes');
    expect(uploaded.status, uploaded.text).toBe(200);
    const { rawUrl, downloadUrl } = (uploaded.body as { data: { rawUrl: string; downloadUrl: string } }).data;
    const paths = [new URL(rawUrl).pathname, new URL(downloadUrl).pathname];
    await s3.stop();
    for (const path of paths) {
      const response = await owner.get(path);
      expect(response.status, `${path}: ${response.text}`).toBe(503);
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(response.text).toMatch(/storage/i);
    }
    for (const path of paths) {
      // The answer is an error, not the file: none of the file's caching or naming headers, which
      // would let a cache keep the error for the file, or a browser save it under the file's name.
      const response = await owner.get(path);
      expect(response.status).toBe(503);
      for (const header of ['etag', 'last-modified', 'content-disposition', 'accept-ranges', 'content-range']) expect(response.headers.get(header), `${path}: ${header}`).toBeNull();
      expect(response.headers.get('cache-control'), path).toBe('no-store');
    }
    // Making an archive of a file whose bytes cannot be read right now is the store's state, not a
    // missing file the client should drop from its selection.
    const fileId = (await server.ctx.db.selectFrom('files').select('id').where('userId', '=', owner.userId).executeTakeFirstOrThrow()).id;
    const archive = await owner.post('/api/archives', { fileIds: [fileId] });
    expect(archive.status, archive.text).toBe(503);
    expect(Number(archive.headers.get('retry-after'))).toBeGreaterThan(0);
    const refused = await uploadFile(owner, 'new.txt', 'new bytes');
    expect(refused.status, refused.text).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // The refused upload left no record behind.
    const listed = await owner.get('/api/files?search=new.txt');
    expect(listed.status).toBe(200);
    expect((listed.body as { pagination: { total: number } }).pagination.total).toBe(0);
  } finally {
    await server.close();
  }
});

it('answers 503 to an upload the object store went away from in the middle, keeping no record of it', async () => {
  const s3 = await startS3rver();
  const server = await startTestServer({ ...s3Env(s3), UPLOAD_RATE_LIMIT: '0' });
  try {
    const owner = await signUp(server.baseUrl);
    // 24 MiB in 1 MiB pieces, paced, so the store can be cut off while parts are going up.
    const boundary = 'outageboundary';
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent === 0) controller.enqueue(head);
        if (sent === 24) {
          controller.enqueue(tail);
          controller.close();
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
        controller.enqueue(randomBytes(1024 * 1024));
        sent++;
        if (sent === 12) await s3.cutOff();
      },
    });
    const answer = await fetch(`${server.baseUrl}/api/files`, {
      method: 'POST',
      body,
      duplex: 'half',
      headers: { cookie: owner.cookieHeader(), origin: server.baseUrl, 'content-type': `multipart/form-data; boundary=${boundary}` },
    } as RequestInit).catch((error: unknown) => error as Error);
    expect(answer).toBeInstanceOf(Response);
    const response = answer as Response;
    expect(response.status, await response.clone().text()).toBe(503);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await server.ctx.db.selectFrom('files').select('id').where('userId', '=', owner.userId).execute()).length).toBe(0);
  } finally {
    await server.close();
  }
});

// A store that accepts connections and then answers nothing (a frozen process, a gateway that lost
// its upstream) is given up on like a client that sends nothing: after REQUEST_IDLE_TIMEOUT_MS of
// silence, per attempt of the S3 client, the request is answered 503.
it('answers 503 soon when the object store stops answering, keeps no record of the upload, and serves again once it answers', async () => {
  const s3 = await startS3rver();
  const server = await startTestServer({ ...s3Env(s3), REQUEST_IDLE_TIMEOUT_MS: '1000' });
  try {
    const owner = await signUp(server.baseUrl);
    const uploaded = await uploadFile(owner, 'kept.txt', 'kept bytes');
    expect(uploaded.status, uploaded.text).toBe(200);
    const { downloadUrl } = (uploaded.body as { data: { downloadUrl: string } }).data;
    const { id } = await server.ctx.db.selectFrom('files').select('id').where('userId', '=', owner.userId).executeTakeFirstOrThrow();
    const before = (await owner.get('/api/account')).body.data.account.usedBytes;
    s3.freeze();
    const started = Date.now();
    const download = await owner.get(new URL(downloadUrl).pathname);
    expect(download.status, download.text).toBe(503);
    expect(Number(download.headers.get('retry-after'))).toBeGreaterThan(0);
    const refused = await uploadFile(owner, 'new.txt', 'new bytes');
    expect(refused.status, refused.text).toBe(503);
    const archive = await owner.post('/api/archives', { fileIds: [id] });
    expect(archive.status, archive.text).toBe(503);
    // Three requests, each at most the S3 client's attempts of one idle time-out: well under a minute.
    expect(Date.now() - started).toBeLessThan(45_000);
    s3.thaw();
    expect((await server.ctx.db.selectFrom('files').select('name').where('userId', '=', owner.userId).execute()).map((f) => f.name)).toEqual(['kept.txt']);
    expect((await owner.get('/api/account')).body.data.account.usedBytes).toBe(before);
    const again = await owner.get(new URL(downloadUrl).pathname);
    expect(again.status).toBe(200);
    expect(again.text).toBe('kept bytes');
  } finally {
    s3.thaw();
    await server.close();
    await s3.stop();
  }
});

// What is not silence of the store: a reader that takes the bytes slowly (Hoard stops reading from
// the store while the client's buffers are full), and a store that assembles a large upload before
// it answers. Neither may be cut by the time-out for a store that stops answering.
it('never cuts a slow but steady download, nor a completion the store takes long to answer', async () => {
  const s3 = await startS3rver();
  const server = await startTestServer({ ...s3Env(s3), REQUEST_IDLE_TIMEOUT_MS: '1000', UPLOAD_RATE_LIMIT: '0' });
  try {
    const owner = await signUp(server.baseUrl);
    const bytes = randomBytes(16 * 1024 * 1024);
    const uploaded = await uploadFile(owner, 'large.bin', bytes);
    expect(uploaded.status, uploaded.text).toBe(200);
    // Read at about 1 MiB/s: the 16 MiB take 16 s, with the store's reads held back well past 1.25 s.
    const received = await new Promise<{ status: number; size: number; complete: boolean }>((resolve, reject) => {
      const url = new URL((uploaded.body as { data: { downloadUrl: string } }).data.downloadUrl);
      const request = http.get(url, { headers: { cookie: owner.cookieHeader() } }, (response) => {
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          response.pause();
          setTimeout(() => response.resume(), Math.ceil(chunk.length / 1024));
        });
        response.on('end', () => resolve({ status: response.statusCode!, size, complete: response.complete }));
        response.on('error', () => resolve({ status: response.statusCode!, size, complete: false }));
      });
      request.on('error', reject);
    });
    expect(received).toEqual({ status: 200, size: bytes.length, complete: true });

    // A chunked upload whose completion the store answers after 3 s of silence.
    s3.delayCompletions(3000);
    const token = await createToken(owner, ['files:upload', 'files:read']);
    const script = new Client(server.baseUrl);
    const parts = [randomBytes(5 * 1024 * 1024), randomBytes(1024)];
    const started = await script.post('/api/files/chunks', { filename: 'slow.bin', size: parts[0]!.length + parts[1]!.length }, { token });
    expect(started.status, started.text).toBe(200);
    const { uploadId } = started.body.data as { uploadId: string };
    const etags = [];
    for (const [i, part] of parts.entries()) {
      const put = await script.request('PUT', `/api/files/chunks/${uploadId}/part/${i + 1}`, { body: part, token, headers: { 'content-type': 'application/octet-stream' } });
      expect(put.status, put.text).toBe(200);
      etags.push({ PartNumber: i + 1, ETag: put.body.data.etag as string });
    }
    const completed = await script.post(`/api/files/chunks/${uploadId}/complete`, { parts: etags }, { token });
    expect(completed.status, completed.text).toBe(200);
  } finally {
    s3.delayCompletions(0);
    await server.close();
    await s3.stop();
  }
}, 60_000);

// A store that stops in the middle of the bytes of a read Hoard makes for itself (a share page's
// text preview, a thumbnail, an archive's manifest): no client's idle time ends it, so the read's
// own watch does, once the store has been silent while Hoard waited for bytes.
it('gives up on a read whose store stops sending in the middle of the bytes, while Hoard waits for them', async () => {
  const s3 = await startS3rver();
  const proxy = await startStallingProxy(s3.endpoint);
  const server = await startTestServer({ ...s3Env(s3), S3_ENDPOINT: proxy.endpoint, REQUEST_IDLE_TIMEOUT_MS: '1000' });
  try {
    const owner = await signUp(server.baseUrl);
    const uploaded = await uploadFile(owner, 'notes.txt', 'a line of text\n'.repeat(5000), { type: 'text/plain' });
    expect(uploaded.status, uploaded.text).toBe(200);
    const page = new URL((uploaded.body as { data: { pageUrl: string } }).data.pageUrl).pathname;
    expect((await owner.get(page)).status).toBe(200);
    // The answer's head and a little of its body get through, then nothing.
    proxy.stallAfter(2000);
    const started = Date.now();
    const stalled = await owner.get(page);
    expect(stalled.status, stalled.text.slice(0, 200)).toBe(503);
    expect(Date.now() - started).toBeLessThan(15_000);
    proxy.release();
  } finally {
    await server.close();
    await proxy.close();
    await s3.stop();
  }
}, 60_000);

// An archive whose store stops in the middle of its bytes is the store's state (503), not an archive
// that cannot be read (400): the ZIP's directory and a tar's stream alike.
it('answers 503, not 400, to an archive whose store stops in the middle of its bytes', async () => {
  const s3 = await startS3rver();
  const proxy = await startStallingProxy(s3.endpoint);
  const server = await startTestServer({ ...s3Env(s3), S3_ENDPOINT: proxy.endpoint, REQUEST_IDLE_TIMEOUT_MS: '1000', UPLOAD_RATE_LIMIT: '0' });
  try {
    const owner = await signUp(server.baseUrl);
    const entries = Array.from({ length: 40 }, (_, i) => ({ name: `part-${i}.bin`, data: randomBytes(8 * 1024) }));
    const tarFile = await tarBytes(entries);
    const uploaded = await uploadFile(owner, 'big.tar', tarFile, { type: 'application/x-tar' });
    expect(uploaded.status, uploaded.text).toBe(200);
    const id = (uploaded.body.data.downloadUrl as string).split('/').at(-2)!;
    expect((await owner.get(`/api/archives/${id}`)).status).toBe(200);
    proxy.stallAfter(64 * 1024);
    const stalled = await owner.get(`/api/archives/${id}`);
    expect(stalled.status, stalled.text).toBe(503);
    proxy.release();
    // An extraction the store stops in the middle of keeps what it made, and says where it stopped.
    proxy.stallAfter(96 * 1024);
    const extracted = await owner.post(`/api/archives/${id}/extract`, {});
    proxy.release();
    expect(extracted.status, extracted.text).toBe(201);
    const { files, skipped } = extracted.body.data as { files: Array<{ name: string }>; skipped: Array<{ path: string; reason: string }> };
    expect(files.length).toBeGreaterThan(0);
    expect(files.length).toBeLessThan(entries.length);
    expect(skipped).toEqual([{ path: expect.any(String), reason: 'the archive could not be read from storage right now: extraction stopped here; extract the rest later' }]);
  } finally {
    await server.close();
    await proxy.close();
    await s3.stop();
  }
}, 60_000);
