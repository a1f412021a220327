import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { startTestServer } from '../support/server.ts';
import { signUp } from '../support/client.ts';
import { uploadFile } from '../support/uploads.ts';
import { startS3rver } from '../support/s3rver.ts';
import { s3Env } from '../support/storage-env.ts';

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
