import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storageEnv, storageKinds } from '../support/storage-env.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/client.ts';
import { createToken, uploadFile } from '../support/uploads.ts';

/**
 * Hoard reads request bodies as they are sent and decodes no content coding. A body sent with one
 * (`Content-Encoding: gzip`) is refused with a 400 (the specification lists no 415) before any of it is read, rather
 * than stored compressed as a chunk's bytes or failing as JSON that does not parse.
 */
describe.each(storageKinds)('request bodies with a Content-Encoding (%s storage)', (kind) => {
  let server: TestServer;
  let stopStorage: () => Promise<void>;
  let owner: Awaited<ReturnType<typeof signUp>>;
  let token: string;

  beforeAll(async () => {
    const storage = await storageEnv(kind);
    stopStorage = storage.stop;
    server = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0' });
    owner = await signUp(server.baseUrl);
    token = await createToken(owner, ['files:upload', 'files:read']);
  });
  afterAll(async () => {
    await server?.close();
    await stopStorage?.();
  });

  const bearer = () => ({ authorization: `Bearer ${token}` });
  const fileCount = async () => (await owner.get('/api/files?limit=1')).body.pagination.total as number;

  async function startChunked(size: number): Promise<string> {
    const answer = await fetch(`${server.baseUrl}/api/files/chunks`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify({ filename: 'hello.txt', size }),
    });
    const body = (await answer.json()) as { data: { uploadId: string } };
    expect(answer.status, JSON.stringify(body)).toBe(200);
    return body.data.uploadId;
  }

  it('refuses a chunk sent gzip-encoded with a 400, and stores the part when it is sent as it is', async () => {
    const text = Buffer.from('hello world');
    const uploadId = await startChunked(text.length);
    const partUrl = `${server.baseUrl}/api/files/chunks/${uploadId}/part/1`;
    const refused = await fetch(partUrl, { method: 'PUT', headers: { ...bearer(), 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' }, body: gzipSync(text) });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('accept-encoding')).toBe('identity');
    expect(await refused.json()).toEqual({ error: 'Content-Encoding "gzip" is not supported: send the body as it is, without a content coding' });

    const stored = await fetch(partUrl, { method: 'PUT', headers: { ...bearer(), 'content-type': 'application/octet-stream', 'content-encoding': 'identity' }, body: text });
    const etag = ((await stored.json()) as { data: { etag: string } }).data.etag;
    expect(stored.status).toBe(200);
    const done = await fetch(`${server.baseUrl}/api/files/chunks/${uploadId}/complete`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify({ parts: [{ PartNumber: 1, ETag: etag }] }),
    });
    const links = (await done.json()) as { downloadUrl: string };
    expect(done.status).toBe(200);
    const bytes = await fetch(links.downloadUrl, { headers: bearer() });
    expect(bytes.status).toBe(200);
    expect(Buffer.from(await bytes.arrayBuffer()).toString()).toBe('hello world');
  });

  it('refuses an upload form sent with a content coding, and keeps no file', async () => {
    const before = await fileCount();
    const refused = await uploadFile(owner, 'note.txt', 'hello', { token, headers: { 'content-encoding': 'br' } });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body).toEqual({ error: 'Content-Encoding "br" is not supported: send the body as it is, without a content coding' });
    expect(await fileCount()).toBe(before);
    const plain = await uploadFile(owner, 'note.txt', 'hello', { token, headers: { 'content-encoding': 'Identity' } });
    expect(plain.status, plain.text).toBe(200);
    expect(await fileCount()).toBe(before + 1);
  });

  it('refuses a JSON body with a content coding in the route\'s error shape, whether or not it is signed in', async () => {
    const body = gzipSync(JSON.stringify({ name: 'Travel' }));
    const headers = { 'content-type': 'application/json', 'content-encoding': 'gzip, identity' };
    const session = await owner.request('POST', '/api/folders', { body, headers });
    expect(session.status, session.text).toBe(400);
    expect(session.body).toEqual({ success: false, error: 'Content-Encoding "gzip, identity" is not supported: send the body as it is, without a content coding' });
    // Who is asking is decided first, as for a body of a type no route reads.
    const stranger = await fetch(`${server.baseUrl}/api/folders`, { method: 'POST', headers: { ...headers, origin: server.baseUrl }, body });
    expect(stranger.status).toBe(401);
    expect((await owner.get('/api/folders')).body.data.folders).toEqual([]);
  });

  it('ignores the header on a request that has no body', async () => {
    const answer = await owner.get('/api/files?limit=1', { headers: { 'content-encoding': 'gzip' } });
    expect(answer.status, answer.text).toBe(200);
    const emptyDelete = await owner.request('DELETE', '/api/files/nothing-here', { headers: { 'content-encoding': 'gzip', 'content-length': '0' } });
    expect(emptyDelete.status, emptyDelete.text).toBe(404);
  });
});
