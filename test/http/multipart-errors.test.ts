import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';
import { createToken } from '../support/uploads.ts';
import { providers, storageUnderTest, type StorageUnderTest } from '../support/stored-objects.ts';

/**
 * A multipart body the parser cannot read is the client's mistake: a 400 that says what is wrong,
 * and, like any failed upload, no record, no bytes and no quota charge (contract §7).
 */
const boundary = 'hoardmultipartboundary';
const part = (headers: string, content: string) => `--${boundary}\r\n${headers}\r\n\r\n${content}\r\n`;
const fileHeaders = 'Content-Disposition: form-data; name="file"; filename="notes.txt"\r\nContent-Type: text/plain';
const fileContent = 'the content of the file, long enough to be cut in the middle';
const wellFormed = part('Content-Disposition: form-data; name="visibility"', 'PRIVATE') + part(fileHeaders, fileContent) + part('Content-Disposition: form-data; name="shareStyle"', 'minimal') + `--${boundary}--\r\n`;
const contentType = `multipart/form-data; boundary=${boundary}`;

/** A small deterministic generator (mulberry32), so a failing case can be replayed. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, below: (n: number) => Math.floor(next() * n) };
}

describe.each(providers)('unreadable multipart bodies on %s storage', (provider) => {
  let storage: StorageUnderTest;
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof signUp>>;
  let token: string;

  beforeAll(async () => {
    storage = await storageUnderTest(provider);
    server = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0' });
    owner = await signUp(server.baseUrl);
    token = await createToken(owner, ['files:upload']);
  });
  afterAll(async () => {
    await server?.close();
    await storage?.stop();
  });

  const send = (body: string | Buffer, type: string | null = contentType) =>
    new Client(server.baseUrl).request('POST', '/api/files', { token, body: typeof body === 'string' ? body : new Uint8Array(body), headers: type === null ? {} : { 'content-type': type } });

  const filesOf = () => server.ctx.db.selectFrom('files').select(['id', 'size', 'storageKey']).where('userId', '=', owner.userId).execute();
  const usedBytes = async () => (await server.ctx.db.selectFrom('users').select('usedBytes').where('id', '=', owner.userId).executeTakeFirstOrThrow()).usedBytes;

  /** Records, charge and stored objects agree: every stored object has its record and is charged once. */
  async function expectConsistent() {
    await vi.waitFor(
      async () => {
        const files = await filesOf();
        expect(await usedBytes()).toBe(files.reduce((sum, f) => sum + f.size, 0));
        expect((await storage.keys(server.dataDir, `files/${owner.userId}/`)).sort()).toEqual(files.map((f) => f.storageKey).sort());
        expect(await storage.leftovers(server.dataDir)).toEqual([]);
      },
      { timeout: 10_000, interval: 100 },
    );
  }

  it('accepts the well-formed body these cases start from', async () => {
    const response = await send(wellFormed);
    expect(response.status, response.text).toBe(200);
    expect(response.body.data.size).toBe(fileContent.length);
    await expectConsistent();
  });

  it.each([
    ['no boundary parameter', 'multipart/form-data', /boundary/],
    ['an empty boundary', 'multipart/form-data; boundary=', /boundary/],
    ['a boundary longer than 70 characters', `multipart/form-data; boundary=${'b'.repeat(300)}`, /boundary/],
    ['a boundary the body does not use', 'multipart/form-data; boundary=someotherboundary', /boundary|ended/],
  ])('answers 400 for a Content-Type with %s', async (_label, type, message) => {
    const before = (await filesOf()).length;
    const response = await send(wellFormed, type);
    expect(response.status, response.text).toBe(400);
    expect(response.body).toEqual({ error: expect.stringMatching(message) });
    expect(await filesOf()).toHaveLength(before);
    await expectConsistent();
  });

  const fileStart = wellFormed.indexOf(fileContent);
  it.each([
    ['in the middle of the file', wellFormed.slice(0, fileStart + 20)],
    ['in the middle of a part’s headers', wellFormed.slice(0, wellFormed.indexOf('filename="no'))],
    ['right after the file, before any delimiter', wellFormed.slice(0, fileStart + fileContent.length)],
    ['without the closing delimiter', wellFormed.slice(0, wellFormed.lastIndexOf(`--${boundary}--`))],
    ['with only the first delimiter', `--${boundary}\r\n`],
    ['that is not multipart at all', 'just some text, no delimiter anywhere'],
  ])('answers 400 for a body cut %s', async (_label, body) => {
    const before = (await filesOf()).length;
    const response = await send(body);
    expect(response.status, response.text).toBe(400);
    expect(response.body).toEqual({ error: expect.stringMatching(/multipart/i) });
    expect(await filesOf()).toHaveLength(before);
    await expectConsistent();
  });

  it('answers 400 with a clear message for a form with more parts than an upload has', async () => {
    const fields = Array.from({ length: 45 }, (_, i) => part(`Content-Disposition: form-data; name="field${i}"`, 'value')).join('');
    const response = await send(fields + part(fileHeaders, fileContent) + `--${boundary}--\r\n`);
    expect(response.status, response.text).toBe(400);
    expect(response.body).toEqual({ error: expect.stringMatching(/too many parts/) });
    await expectConsistent();
  });

  it('answers 400 for an option field longer than the parser keeps, instead of using it cut short', async () => {
    const before = (await filesOf()).length;
    const password = 'p'.repeat(64 * 1024 + 10);
    const response = await send(part('Content-Disposition: form-data; name="password"', password) + part(fileHeaders, fileContent) + `--${boundary}--\r\n`);
    expect(response.status, response.text).toBe(400);
    expect(response.body).toEqual({ error: expect.stringMatching(/password.*too long/) });
    expect(await filesOf()).toHaveLength(before);
    await expectConsistent();
  });

  it('never answers a 5xx to a few hundred truncated or mutated bodies', async () => {
    const random = generator(provider === 'local' ? 7 : 11);
    const source = Buffer.from(wellFormed);
    const mutations: Array<(body: Buffer) => Buffer> = [
      (b) => b.subarray(0, random.below(b.length)),
      (b) => {
        const copy = Buffer.from(b);
        for (let i = 0, n = 1 + random.below(4); i < n; i++) copy[random.below(copy.length)] = random.below(256);
        return copy;
      },
      (b) => {
        const from = random.below(b.length);
        return Buffer.concat([b.subarray(0, from), b.subarray(from + 1 + random.below(40))]);
      },
      (b) => {
        const at = random.below(b.length);
        return Buffer.concat([b.subarray(0, at), b.subarray(random.below(b.length), random.below(b.length)), b.subarray(at)]);
      },
      (b) => Buffer.from(b.toString('latin1').replaceAll('\r\n', random.next() < 0.5 ? '\n' : '\r\n\r\n'), 'latin1'),
    ];
    const types = [contentType, contentType, contentType, `multipart/form-data; boundary="${boundary}"`, `multipart/form-data; boundary=${boundary.slice(0, 10)}`, 'multipart/form-data; boundary', 'multipart/form-data;'];
    const statuses = new Map<number, number>();
    for (let i = 0; i < 300; i++) {
      let body: Buffer = source;
      for (let m = 0, n = 1 + random.below(2); m < n; m++) body = mutations[random.below(mutations.length)]!(body);
      const type = types[random.below(types.length)]!;
      const response = await send(body, type);
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      expect(response.status, `case ${i}: ${type} ${JSON.stringify(body.toString('latin1'))} → ${response.text}`).toBeLessThan(500);
      expect(response.headers.get('content-type'), `case ${i}`).toMatch(/^application\/json/);
    }
    // The mutations reached both outcomes: some bodies still parse, most do not.
    expect(statuses.get(400)).toBeGreaterThan(100);
    await expectConsistent();
  });
});
