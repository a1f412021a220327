/**
 * The body rules of every archive route (contract §9; spec, Limits, "Archive body"): 16 KiB at most
 * (413), complete within 5 seconds of the start of the request (408, connection closed), checked
 * with a real socket that trickles its body; and the order of the work: body, validation and file
 * authorization first, archive capacity after, so a client mistake gets its 4xx while every slot is
 * held and a valid request gets 503 with Retry-After.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';
import { uploadFile, type UploadOptions } from '../support/uploads.ts';
import { RawConnection, requestHead, sleep } from '../support/raw-http.ts';

async function zipBytes(entries: Array<{ name: string; data: string | Buffer }>): Promise<Uint8Array> {
  const file = new yazl.ZipFile();
  for (const entry of entries) file.addBuffer(Buffer.from(entry.data), entry.name);
  file.end();
  const chunks: Buffer[] = [];
  for await (const chunk of file.outputStream) chunks.push(chunk as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}

const KIB = 1024;
/** 32 MiB of zeros, a few kB deflated: a client that does not read it holds its response, and its slot, open. */
const BIG = 32 * 1024 * 1024;
const DEADLINE_MS = 5000;
/** The deadline and a slow, shared machine: the answer must come by then, and not before the deadline. */
const LATE_BY_MS = 2000;
const PASSWORD = 'open sesame';

/** The body of the first response on a connection, sent in chunks (an entry streams without Content-Length). */
async function chunkedBody(connection: RawConnection): Promise<string> {
  while (!connection.text().includes('\r\n0\r\n\r\n')) {
    if (connection.isClosed) throw new Error(`connection closed before the last chunk: ${JSON.stringify(connection.text().slice(0, 300))}`);
    await sleep(20);
  }
  let rest = connection.text().slice(connection.text().indexOf('\r\n\r\n') + 4);
  let body = '';
  for (;;) {
    const line = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, line), 16);
    if (size === 0) return body;
    body += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 2 + size + 2);
  }
}

describe('archive request bodies', () => {
  let server: TestServer;
  let host: string;
  let owner: Awaited<ReturnType<typeof signUp>>;
  let urlId: string;
  let bundle: { id: string; manifest: string; entry: string; page: string };
  let hidden: { manifest: string; entry: string };
  let locked: { manifest: string; entry: string };

  beforeAll(async () => {
    server = await startTestServer({ UPLOAD_RATE_LIMIT: '0', ARCHIVE_CONCURRENCY: '1' });
    host = new URL(server.baseUrl).host;
    owner = await signUp(server.baseUrl);
    urlId = (await owner.get('/api/auth/me')).body.data.user.urlId;
    const zip = await zipBytes([
      { name: 'docs/readme.md', data: '# Hello' },
      { name: 'big.bin', data: Buffer.alloc(BIG) },
    ]);
    bundle = await upload('bundle.zip', zip);
    hidden = await upload('hidden.zip', zip, { fields: { visibility: 'PRIVATE' } });
    locked = await upload('locked.zip', zip, { fields: { password: PASSWORD } });
  });
  afterAll(async () => {
    await server?.close();
  });

  async function upload(name: string, content: Uint8Array, options: UploadOptions = {}) {
    const response = await uploadFile(owner, name, content, { type: 'application/zip', ...options });
    expect(response.status, response.text).toBe(200);
    const base = `/api/share/${urlId}/${encodeURIComponent(name)}/archive`;
    return { id: response.body.data.downloadUrl.split('/').at(-2) as string, manifest: base, entry: `${base}/entry`, page: `/${urlId}/${encodeURIComponent(name)}` };
  }
  const anonymous = () => new Client(server.baseUrl);

  describe('the 16 KiB limit', () => {
    it('answers 413 for a longer body, declared or chunked, JSON or form, and closes the connection', async () => {
      const big = JSON.stringify({ path: 'x'.repeat(17 * KIB) });
      const declared = await anonymous().request('POST', bundle.entry, { body: big, headers: { 'content-type': 'application/json' } });
      expect(declared.status).toBe(413);
      expect(declared.body).toEqual({ success: false, error: 'The request body is too large: archive routes take at most 16 KiB' });
      expect(declared.headers.get('connection')).toBe('close');

      const manifest = await anonymous().request('POST', bundle.manifest, { body: JSON.stringify({ password: 'p'.repeat(20 * KIB) }), headers: { 'content-type': 'application/json' } });
      expect(manifest.status).toBe(413);

      const formBody = await anonymous().request('POST', bundle.entry, { body: `path=${'y'.repeat(17 * KIB)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(formBody.status).toBe(413);
      expect(formBody.body).toEqual({ success: false, error: expect.stringContaining('16 KiB') });

      // Without Content-Length the bytes are counted as they come.
      // The owner's routes have the same limit: it comes with every archive route's policy row.
      const extract = await owner.post(`/api/archives/${bundle.id}/extract`, { paths: Array.from({ length: 400 }, (_, i) => `entries/${String(i).padStart(40, '0')}.txt`) });
      expect(extract.status).toBe(413);
      expect(extract.body).toEqual({ success: false, error: 'The request body is too large: archive routes take at most 16 KiB' });
      const create = await owner.post('/api/archives', { fileIds: Array.from({ length: 500 }, (_, i) => `file-${String(i).padStart(40, '0')}`) });
      expect(create.status).toBe(413);

      const chunked = await fetch(server.baseUrl + bundle.entry, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: new ReadableStream({
          start(controller) {
            for (let i = 0; i < 20; i += 1) controller.enqueue(new TextEncoder().encode(i === 0 ? '{"path":"' : 'z'.repeat(KIB)));
            controller.enqueue(new TextEncoder().encode('"}'));
            controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit);
      expect(chunked.status).toBe(413);
      expect(await chunked.json()).toEqual({ success: false, error: expect.stringContaining('16 KiB') });
    });

    it('reads a body under the limit (and validates it: a 4,097-character path is a 400)', async () => {
      const answer = await anonymous().post(bundle.entry, { path: 'x'.repeat(4097), password: 'p'.repeat(1024) });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ success: false, error: expect.stringMatching(/^body\.path/) });
    });
  });

  describe('the 5-second deadline (a real socket)', () => {
    const body = JSON.stringify({ path: 'docs/readme.md' });

    /** Sends the body two bytes a second (each well within the idle time: never idle, only slow) until the server closes. */
    async function trickle(target: string, payload: string, headers: Record<string, string> = {}) {
      const connection = await RawConnection.open(server.baseUrl);
      const started = Date.now();
      await connection.send(requestHead('POST', target, host, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers }));
      let sent = 0;
      while (!connection.isClosed && sent < payload.length) {
        await connection.send(payload.slice(sent, sent + 2)).catch(() => undefined);
        sent += 2;
        await sleep(1000);
      }
      await connection.closed;
      return { elapsed: Date.now() - started, complete: sent >= payload.length, response: await connection.nextResponse() };
    }

    it('answers 408 and closes the connection when the body trickles past 5 seconds after the request started (share routes and the owner\'s extraction)', async () => {
      const session = { cookie: owner.cookieHeader(), origin: server.baseUrl };
      const slow = await Promise.all([
        trickle(bundle.entry, body),
        trickle(bundle.manifest, JSON.stringify({ password: 'not needed for a public file' })),
        trickle(`/api/archives/${bundle.id}/extract`, JSON.stringify({ paths: ['docs/readme.md'], folderId: null }), session),
      ]);
      for (const { elapsed, complete, response } of slow) {
        expect(complete).toBe(false);
        expect(elapsed).toBeGreaterThanOrEqual(DEADLINE_MS - 100);
        expect(elapsed).toBeLessThan(DEADLINE_MS + LATE_BY_MS);
        expect(response.status).toBe(408);
        expect(response.headers.connection).toBe('close');
        expect(response.json).toEqual({ success: false, error: 'The request body was not complete within 5 seconds of the request; archive routes wait no longer' });
      }
      // The interrupted extraction made nothing.
      expect(await server.ctx.db.selectFrom('files').select('name').where('name', '=', 'readme.md').execute()).toEqual([]);
    });

    it('counts the 5 seconds from the start of the request: a body sent whole but late is a 408 too', async () => {
      const connection = await RawConnection.open(server.baseUrl);
      const started = Date.now();
      await connection.send(requestHead('POST', bundle.manifest, host, { 'content-type': 'application/json', 'content-length': 2 }));
      await sleep(DEADLINE_MS + 500);
      await connection.send('{}').catch(() => undefined);
      const response = await connection.nextResponse();
      expect(response.status).toBe(408);
      expect(Date.now() - started).toBeLessThan(DEADLINE_MS + LATE_BY_MS + 500);
      await connection.closed;
    });

    it('answers a slow body that is complete within 5 seconds', async () => {
      const connection = await RawConnection.open(server.baseUrl);
      const started = Date.now();
      await connection.send(requestHead('POST', bundle.entry, host, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }));
      // The body in five pieces over about three seconds.
      const piece = Math.ceil(body.length / 5);
      for (let at = 0; at < body.length; at += piece) {
        await sleep(600);
        await connection.send(body.slice(at, at + piece));
      }
      const response = await connection.nextResponse();
      expect(Date.now() - started).toBeLessThan(DEADLINE_MS);
      expect(response.status).toBe(200);
      expect(response.headers['content-disposition']).toMatch(/^attachment; filename="readme.md"/);
      expect(await chunkedBody(connection)).toBe('# Hello');
      // Answered in time, the connection stays open for the next request.
      await sleep(DEADLINE_MS - (Date.now() - started) + 500);
      expect(connection.isClosed).toBe(false);
      connection.destroy();
    });
  });

  it('while every slot is held: client mistakes still get their 4xx, a valid request 503 with Retry-After, the share page no tree', async () => {
    // A client that does not read a 32 MiB entry holds the one slot (ARCHIVE_CONCURRENCY=1).
    const controller = new AbortController();
    const held = await fetch(server.baseUrl + bundle.entry, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ path: 'big.bin' }), signal: controller.signal });
    expect(held.status).toBe(200);
    try {
      const busy = await anonymous().post(bundle.manifest, {});
      expect(busy.status).toBe(503);
      expect(busy.headers.get('retry-after')).toBe('5');
      expect(busy.body).toEqual({ success: false, error: expect.stringContaining('try again') });
      expect((await anonymous().post(bundle.entry, { path: 'docs/readme.md' })).status).toBe(503);

      const mistakes: Array<[string, Promise<Awaited<ReturnType<Client['post']>>>, number]> = [
        ['unknown body property', anonymous().post(bundle.manifest, { paths: ['x'] }), 400],
        ['no entry path', anonymous().post(bundle.entry, {}), 400],
        ['a body over 16 KiB', anonymous().post(bundle.entry, { path: 'x'.repeat(17 * KIB) }), 413],
        ['a named token', anonymous().post(bundle.manifest, {}, { headers: { authorization: 'Bearer svc_whatever' } }), 401],
        ['Basic credentials', anonymous().post(bundle.entry, { path: 'docs/readme.md' }, { headers: { authorization: 'Basic x' } }), 401],
        ['a missing file', anonymous().post(`/api/share/${urlId}/no-such.zip/archive`, {}), 404],
        ['a private file', anonymous().post(hidden.manifest, {}), 404],
        ['a password file without its password', anonymous().post(locked.entry, { path: 'docs/readme.md' }), 403],
        ['a password file with a wrong one', anonymous().post(locked.manifest, { password: 'wrong guess' }), 403],
        ["an unknown property on the owner's extraction", owner.post(`/api/archives/${bundle.id}/extract`, { everything: true }), 400],
        ["a body over 16 KiB on the owner's extraction", owner.post(`/api/archives/${bundle.id}/extract`, { paths: ['p'.repeat(17 * KIB)] }), 413],
      ];
      for (const [what, answer, status] of mistakes) expect((await answer).status, what).toBe(status);

      // The page is served all the same, without the tree it has no slot to read, and kept by no
      // cache, so the next visit may have its tree.
      const page = await anonymous().get(bundle.page);
      expect(page.status).toBe(200);
      expect(page.text).not.toContain('class="archive"');
      expect(page.headers.get('cache-control')).toBe('private, no-store');
    } finally {
      // The client goes away: the slot comes back. (The unread answer is referred to up to here: one
      // garbage collected has its body cancelled by fetch, which gave the slot back too early.)
      controller.abort();
      await held.body?.cancel().catch(() => undefined);
    }
    await expect.poll(async () => (await anonymous().post(bundle.manifest, {})).status, { timeout: 10_000 }).toBe(200);
    const page = await anonymous().get(bundle.page);
    expect(page.text).toContain('class="archive"');
    expect(page.headers.get('cache-control')).toBe('public, max-age=60');
  });
});
