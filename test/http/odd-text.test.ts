import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/client.ts';
import { PNG_1X1, uploadFile } from '../support/uploads.ts';
import { zipBytes } from '../support/archives.ts';

// Every operation of the OpenAPI document, asked with values no client should send and some will:
// a NUL character (which PostgreSQL cannot store and SQLite's full-text query syntax cannot read), a
// lone surrogate (no UTF-8 can carry it) and 100,000 characters, in its path, in each query
// parameter and in each string of its JSON body, and numbers out of every range in each number of
// its body, one at a time, so that each reaches the code that reads it. A client mistake is a 4xx;
// none of them may be a 500.

type Schema = { $ref?: string; type?: string | string[]; properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[]; oneOf?: Schema[]; enum?: unknown[]; const?: unknown; format?: string; minimum?: number };
interface Operation {
  parameters?: Array<{ name: string; in: string }>;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}
type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };

let server: TestServer;
let document: Document;
let owner: Awaited<ReturnType<typeof signUp>>;
/** A real ID by the first segment after /api/, so that a body is read for a resource that exists. */
const idOf = (links: { downloadUrl: string }) => links.downloadUrl.split('/').at(-2)!;
const real = new Map<string, string>();

beforeAll(async () => {
  server = await startTestServer({ UPLOAD_RATE_LIMIT: '0' });
  owner = await signUp(server.baseUrl);
  document = (await owner.get('/api/openapi.json')).body as Document;
  const uploaded = await uploadFile(owner, 'odd.txt', 'odd text');
  expect(uploaded.status).toBe(200);
  real.set('files', idOf(uploaded.body.data));
  real.set('folders', (await owner.post('/api/folders', { name: 'odd folder' })).body.data.id);
  real.set('tags', (await owner.post('/api/tags', { name: 'odd tag' })).body.data.id);
  real.set('webhooks', (await owner.post('/api/webhooks', { name: 'odd hook', url: 'https://hooks.example.test/odd' })).body.data.id);
});
afterAll(() => server.close());

function resolve(schema: Schema | undefined): Schema {
  let current = schema ?? {};
  while (current.$ref) current = document.components.schemas[current.$ref.split('/').pop()!] ?? {};
  const options = current.anyOf ?? current.oneOf;
  if (options) return resolve(options.find((option) => resolve(option).type !== 'null') ?? options[0]);
  return current;
}

type Kind = 'string' | 'number';
/** What replaces the one value at `path`, of its kind. */
interface Odd {
  path: string;
  value: unknown;
}

/**
 * A value of `schema`: plain values throughout, except the one at `odd.path` (a path of keys and
 * indexes). Calls `leaf` with the path and kind of every string and number.
 */
function sample(schema: Schema | undefined, odd: Odd | null, leaf: (path: string, kind: Kind) => void, path = '', depth = 0): unknown {
  const s = resolve(schema);
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  switch (type) {
    case 'object':
      return depth > 4 ? {} : Object.fromEntries(Object.entries(s.properties ?? {}).map(([key, value]) => [key, sample(value, odd, leaf, `${path}.${key}`, depth + 1)]));
    case 'array':
      return [sample(s.items, odd, leaf, `${path}[0]`, depth + 1)];
    case 'integer':
    case 'number':
      leaf(path, 'number');
      return odd?.path === path ? odd.value : (s.minimum ?? 1);
    case 'boolean':
      return true;
    default: {
      leaf(path, 'string');
      const text = odd?.path === path ? String(odd.value) : 'plain';
      return s.format === 'email' ? `${text}@example.test` : text;
    }
  }
}

interface Asked {
  method: string;
  url: string;
  json: unknown;
}

/**
 * Each operation asked with `odd` in one place at a time: for text, in its path (written `inPath`
 * there) and in each query parameter; in each body value of its kind.
 */
function requests(kind: Kind, odd: unknown, inPath: string | null): Asked[] {
  const out: Asked[] = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      // Signing out would end the session the other requests use.
      if (path === '/api/auth/logout' || (path === '/api/auth/sessions' && method === 'delete')) continue;
      const id = real.get(path.split('/')[2] ?? '');
      const urlOf = (pathValue: string, query = '') => path.replace(/\{[^}]+\}/g, pathValue) + query;
      const body = operation.requestBody?.content?.['application/json']?.schema;
      const leaves: string[] = [];
      const plain = body === undefined ? undefined : sample(body, null, (leaf, leafKind) => leafKind === kind && leaves.push(leaf));
      const add = (url: string, json: unknown) => out.push({ method: method.toUpperCase(), url, json });
      if (inPath !== null && path.includes('{')) add(urlOf(`a${inPath}b`), plain);
      if (kind === 'string') {
        for (const parameter of operation.parameters ?? []) {
          if (parameter.in === 'query') add(urlOf(id ?? 'plain', `?${new URLSearchParams({ [parameter.name]: String(odd) })}`), plain);
        }
      }
      for (const leaf of leaves) add(urlOf(id ?? 'plain'), sample(body, { path: leaf, value: odd }, () => undefined));
    }
  }
  return out;
}

async function serverErrors(asked: Asked[]): Promise<string[]> {
  const failures: string[] = [];
  for (const { method, url, json } of asked) {
    const answer = await owner.request(method, url, json === undefined ? {} : { json });
    if (answer.status >= 500) failures.push(`${method} ${url.slice(0, 200)} ${JSON.stringify(json)?.slice(0, 200)} → ${answer.status} ${answer.text.slice(0, 200)}`);
  }
  return failures;
}

describe('values no client should send', () => {
  it('answers a NUL character with a 400 that says where it is', async () => {
    const cases: Array<[string, string, unknown, string]> = [
      ['GET', '/api/files?search=a%00b', undefined, 'query.search'],
      ['DELETE', '/api/tags/a%00b', undefined, 'path.id'],
      ['PATCH', `/api/tags/${real.get('tags')}`, { name: 'a\u0000b' }, 'body.name'],
      ['POST', '/api/auth/login', { email: 'a\u0000b@example.test', password: 'whatever' }, 'body.email'],
    ];
    for (const [method, url, json, where] of cases) {
      const answer = await owner.request(method, url, json === undefined ? {} : { json });
      expect([answer.status, answer.body.error], url).toEqual([400, `${where}: text must not contain the NUL character (U+0000)`]);
    }
  });

  it('answers a NUL character in an upload\'s text fields or file name as in any other text', async () => {
    const fields: Record<string, string> = { password: 'a\u0000b', tagIds: '["a\u0000b"]', expiresAt: '2030-01-01T00:00:00Z\u0000', visibility: 'PUBLIC\u0000' };
    for (const [name, value] of Object.entries(fields)) {
      const answer = await uploadFile(owner, 'odd.txt', 'odd', { fields: { [name]: value } });
      expect([answer.status, answer.body?.error], name).toEqual([400, `fields.${name}: text must not contain the NUL character (U+0000)`]);
    }
    // A file name is made safe as any name is (control characters dropped).
    const named = await uploadFile(owner, 'a\u0000b.txt', 'odd');
    expect(named.status, named.text).toBe(200);
    expect(named.body.data.name).toBe('ab.txt');
    // So is the name of an archive's entry, which a ZIP stores with its length and may hold one.
    const zip = await uploadFile(owner, 'odd.zip', await zipBytes([{ name: 'c\u0000d.txt', data: 'entry' }]), { type: 'application/zip' });
    expect(zip.status, zip.text).toBe(200);
    const manifest = await owner.get(`/api/archives/${idOf(zip.body.data)}`);
    expect(manifest.status, manifest.text).toBe(200);
    expect(manifest.body.data.entries.map((e: { path: string }) => e.path)).toEqual(['c\u0000d.txt']);
    const extracted = await owner.post(`/api/archives/${idOf(zip.body.data)}/extract`, {});
    expect(extracted.status, extracted.text).toBe(201);
    expect(extracted.body.data.files.map((f: { name: string }) => f.name)).toEqual(['cd.txt']);
  });

  for (const [label, odd, inPath] of [
    ['a NUL character', 'a\u0000b', '%00'],
    ['a lone surrogate', 'a\ud800b', '%ED%A0%80'],
    ['100,000 characters', 'x'.repeat(100_000), null],
  ] as const) {
    it(`is a client mistake or harmless in the path, each query parameter and each body string of every operation: ${label}`, async () => {
      const asked = requests('string', odd, inPath);
      expect(asked.length).toBeGreaterThan(100);
      expect(await serverErrors(asked)).toEqual([]);
    });
  }

  it('answers JSON nested deeper than any body needs with a 400, on every operation that reads JSON', async () => {
    const deep = `${'['.repeat(65)}${']'.repeat(65)}`;
    let asked = 0;
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (!operation.requestBody?.content?.['application/json']) continue;
        const url = path.replace(/\{[^}]+\}/g, real.get(path.split('/')[2] ?? '') ?? 'plain');
        const answer = await owner.request(method.toUpperCase(), url, { body: deep, headers: { 'content-type': 'application/json' } });
        expect([answer.status, answer.body?.error], `${method} ${url}`).toEqual([400, 'The request body nests JSON deeper than 64 levels']);
        asked++;
      }
    }
    expect(asked).toBeGreaterThan(30);
    // Also on a route anyone may ask, nested as deep as a body of 20 KB can (it overflowed the stack).
    const anonymous = await fetch(`${server.baseUrl}/api/auth/login`, { method: 'POST', body: `${'['.repeat(10_000)}${']'.repeat(10_000)}`, headers: { 'content-type': 'application/json', origin: server.baseUrl } });
    expect([anonymous.status, await anonymous.json()]).toEqual([400, { success: false, error: 'The request body nests JSON deeper than 64 levels' }]);
    // 64 levels are read as JSON, and judged by the route's schema.
    const nested = `${'['.repeat(64)}${']'.repeat(64)}`;
    const judged = await owner.request('POST', '/api/tags', { body: nested, headers: { 'content-type': 'application/json' } });
    expect([judged.status, judged.body.error]).toEqual([400, expect.stringMatching(/^body: /)]);
  });

  it('numbers out of every range are client mistakes or harmless in each body number of every operation', async () => {
    for (const odd of [1e300, -1e300, 2 ** 63, 0.5, -1]) {
      const asked = requests('number', odd, null);
      expect(asked.length).toBeGreaterThanOrEqual(5);
      expect(await serverErrors(asked), String(odd)).toEqual([]);
    }
  });
});

describe('names from every script', () => {
  const fileId = (links: { downloadUrl: string }) => links.downloadUrl.split('/').at(-2)!;
  const storedName = async (id: string) => (await owner.get(`/api/files?ids=${id}`)).body.data[0].name as string;

  it('cuts a long name between whole characters wherever it comes from, never leaving half an emoji', async () => {
    // What follows the last dot is emoji, no extension: the cut went through the middle of one
    // (a 500 for uploads and chunked completions, and a replacement character stored by a rename).
    const long = `${'a'.repeat(200)}.${'😀'.repeat(10)}`;
    const uploaded = await uploadFile(owner, long, 'long');
    expect(uploaded.status, uploaded.text).toBe(200);
    expect(uploaded.body.data.name).toBe('a'.repeat(200));

    const started = await owner.post('/api/files/chunks', { filename: long, mimeType: 'text/plain', size: 4 });
    expect(started.status, started.text).toBe(200);
    const uploadId = started.body.data.uploadId as string;
    const part = await owner.request('PUT', `/api/files/chunks/${uploadId}/part/1`, { body: Buffer.from('long'), headers: { 'content-type': 'application/octet-stream' } });
    expect(part.status, part.text).toBe(200);
    const completed = await owner.post(`/api/files/chunks/${uploadId}/complete`, { parts: [{ PartNumber: 1, ETag: part.body.data.etag }] });
    expect(completed.status, completed.text).toBe(200);
    expect(completed.body.name).toBe(`${'a'.repeat(198)}-1`);

    const renamed = await owner.patch(`/api/files/${fileId(uploaded.body.data)}`, { name: `${'c'.repeat(200)}.${'😀'.repeat(10)}` });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.data.file.name).toBe('c'.repeat(200));

    // An archive's entry of that name is extracted like any other (the rename freed the name), and
    // the entries after it too.
    const zip = await uploadFile(owner, 'long-names.zip', await zipBytes([{ name: 'one.txt', data: '1' }, { name: long, data: '2' }, { name: 'three.txt', data: '3' }]), { type: 'application/zip' });
    expect(zip.status, zip.text).toBe(200);
    const extracted = await owner.post(`/api/archives/${fileId(zip.body.data)}/extract`, {});
    expect(extracted.status, extracted.text).toBe(201);
    expect(extracted.body.data.files.map((f: { name: string }) => f.name)).toEqual(['one.txt', 'a'.repeat(200), 'three.txt']);

    // A name of many bytes is cut at 255 of them, which filesystems (and unzip) take.
    const wide = await uploadFile(owner, `${'東京'.repeat(100)}.png`, 'wide');
    expect(wide.status, wide.text).toBe(200);
    expect(Buffer.byteLength(wide.body.data.name)).toBeLessThanOrEqual(255);
    expect(wide.body.data.name).toMatch(/^(東京)+東?\.png$/u);

    // What follows a last dot in a sentence is no extension: a cut keeps the name's start, and a
    // second upload's number goes at its end.
    const sentence = `Dr. Smith's notes ${'on the thing '.repeat(15)}final`;
    const first = await uploadFile(owner, sentence, 'x');
    const second = await uploadFile(owner, sentence, 'y');
    expect(first.body.data.name).toBe(`Dr._Smiths_notes_${'on_the_thing_'.repeat(15)}final`.slice(0, 200));
    expect(second.body.data.name).toBe(`${first.body.data.name.slice(0, 198).replace(/[._-]+$/, '')}-1`);
  });

  it('keeps the joiners of emoji and words, drops direction overrides, and refuses a name with nothing to see', async () => {
    const kept = [
      ['👨‍👩‍👧 family.png', '👨‍👩‍👧_family.png'],
      ['👩🏽‍💻 dev.txt', '👩🏽‍💻_dev.txt'],
      ['\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F} england.txt', '\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}_england.txt'],
      ['می‌خواهم.txt', 'می‌خواهم.txt'],
      ['invoice\u202Egnp.exe', 'invoicegnp.exe'],
      ['\u200Dx\u200B.txt', 'x.txt'],
    ];
    for (const [sent, stored] of kept) {
      const answer = await uploadFile(owner, sent!, 'joined');
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body.data.name, sent).toBe(stored);
      expect(await storedName(fileId(answer.body.data))).toBe(stored);
    }
    // A search pasted from the name, joiners and all, finds it.
    const found = await owner.get(`/api/files?search=${encodeURIComponent('👨‍👩‍👧')}`);
    expect(found.body.data.map((f: { name: string }) => f.name)).toEqual(['👨‍👩‍👧_family.png']);

    // A name of a Hangul filler or a combining mark alone shows nothing: an upload is named `file`,
    // with the extension of its type, and a rename to it is refused.
    const blank = await uploadFile(owner, '\u3164', 'blank');
    expect(blank.body.data.name).toMatch(/^file(-\d+)?\.txt$/);
    // So is what curl reads from standard input (`-F file=@-`), which it names `-` and sends untyped.
    expect((await uploadFile(owner, '-', PNG_1X1, { type: 'application/octet-stream' })).body.data.name).toMatch(/^file(-\d+)?\.png$/);
    expect((await uploadFile(owner, '-', Uint8Array.from([0, 1, 2, 3]), { type: 'application/octet-stream' })).body.data.name).toMatch(/^file(-\d+)?\.bin$/);
    // Nor does a stem with nothing to see before a visible extension, which the name keeps.
    expect((await uploadFile(owner, '\u3164.txt', 'blank stem')).body.data.name).toMatch(/^file(-\d+)?\.txt$/);
    // A joiner beside the dot joins nothing: `a\u200d.txt` looked like `a.txt` and was another link.
    expect((await uploadFile(owner, 'joined\u200d.txt', 'joined')).body.data.name).toBe('joined.txt');
    const refused = await owner.patch(`/api/files/${fileId(blank.body.data)}`, { name: '\u0301' });
    expect(refused.status, refused.text).toBe(400);
    // Half of an emoji alone is no text either.
    const half = await owner.patch(`/api/files/${fileId(blank.body.data)}`, { name: 'a\ud83d.txt' });
    expect([half.status, half.body.error]).toEqual([400, 'name: must be valid Unicode text (it holds half of a character, a lone surrogate)']);
    // Nor as a chunked upload's file name, nor as an archive's name; a blank one is said to be blank.
    const chunked = await owner.post('/api/files/chunks', { filename: 'report\udc00.pdf', mimeType: 'application/pdf', size: 4 });
    expect([chunked.status, chunked.body.error]).toEqual([400, 'body.filename: must be valid Unicode text (it holds half of a character, a lone surrogate)']);
    for (const [name, problem] of [['half\ud83d', 'must be valid Unicode text (it holds half of a character, a lone surrogate)'], ['   ', 'must not be blank']]) {
      const archive = await owner.post('/api/archives', { fileIds: [fileId(blank.body.data)], name });
      expect([archive.status, archive.body.error]).toEqual([400, `body.name: ${problem}`]);
    }
    // Bounds and kinds in words of what passes, not the schema library's.
    const said = async (path: string, body: unknown) => (await owner.post(path, body)).body.error;
    expect(await said('/api/files/chunks', { filename: 'a.txt', mimeType: 'text/plain', size: 1.5 })).toBe('body.size: must be a whole number');
    expect(await said('/api/archives', { fileIds: [] })).toBe('body.fileIds: must not be empty: give at least one');
    expect(await said('/api/archives', { fileIds: [fileId(blank.body.data)], name: 'n'.repeat(201) })).toBe('body.name: must be at most 200 characters');
  });
});
