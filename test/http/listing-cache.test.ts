import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { createToken, PNG_1X1, uploadFile } from '../support/uploads.ts';

// The listing cache (src/listing/listing-cache.ts) keeps listing responses while the account's
// listing version is unchanged. Each test reads a listing (so it is kept), changes something the
// listing shows through the product's own routes, and reads the same listing again: it must show
// the change, on this process and on another one sharing the database.

let server: TestServer;
let other: TestServer;
let admin: Awaited<ReturnType<typeof signUp>>;
let token: string;

beforeAll(async () => {
  server = await startTestServer({ UPLOAD_RATE_LIMIT: '0' });
  // A second process on the same database and data directory, with its own cache.
  other = await startTestServer({ UPLOAD_RATE_LIMIT: '0' }, { databaseUrl: server.databaseUrl, dataDir: server.dataDir });
  admin = await signUp(server.baseUrl);
  token = await createToken(admin, ['files:read']);
});
afterAll(async () => {
  await other.close();
  await server.close();
});

const list = (base: string, params = 'limit=100', bearer = token) => new Client(base).get(`/api/files?${params}`, { token: bearer });
const byName = (body: { data: Array<{ name: string }> }, name: string) => body.data.find((f) => f.name === name) as Record<string, any> | undefined;

async function upload(name: string, content: string | Uint8Array = 'cached listing', type = 'text/plain') {
  const response = await uploadFile(admin, name, content, { type });
  expect(response.status, response.text).toBe(200);
  return { id: (response.body.data.downloadUrl as string).split('/').at(-2)!, rawUrl: response.body.data.rawUrl as string };
}

/** Reads the listing twice (the second read is served from the cache), then returns the reader. */
async function keptListing(base = server.baseUrl, params = 'limit=100') {
  const first = await list(base, params);
  const second = await list(base, params);
  expect(second.status).toBe(200);
  expect(second.text).toBe(first.text);
  return () => list(base, params);
}

describe('listing cache', () => {
  it('keeps a listing and serves it unchanged while nothing changed', async () => {
    await upload('kept.txt');
    const before = server.ctx.listingCache.stats().entries;
    const read = await keptListing(server.baseUrl, 'limit=7&sortBy=oldest');
    expect(server.ctx.listingCache.stats().entries).toBe(before + 1);
    const again = await read();
    expect(again.headers.get('cache-control')).toBe('private, no-store');
    expect(again.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(byName(again.body, 'kept.txt')).toBeDefined();
  });

  it('shows a new upload, a rename, a visibility change and a deletion', async () => {
    const read = await keptListing();
    const { id } = await upload('fresh.txt');
    expect(byName((await read()).body, 'fresh.txt')?.id).toBe(id);

    expect((await admin.patch(`/api/files/${id}`, { name: 'renamed.txt', visibility: 'PRIVATE' })).status).toBe(200);
    const renamed = await read();
    expect(byName(renamed.body, 'fresh.txt')).toBeUndefined();
    expect(byName(renamed.body, 'renamed.txt')).toMatchObject({ id, visibility: 'PRIVATE' });

    expect((await admin.delete(`/api/files/${id}`)).status).toBe(204);
    expect(byName((await read()).body, 'renamed.txt')).toBeUndefined();
  });

  it('shows views and downloads counted by the public routes', async () => {
    const { id, rawUrl } = await upload('counted.png', PNG_1X1, 'image/png');
    const read = await keptListing();
    expect(byName((await read()).body, 'counted.png')).toMatchObject({ views: 0, downloads: 0 });

    expect((await fetch(rawUrl)).status).toBe(200);
    expect(byName((await read()).body, 'counted.png')).toMatchObject({ views: 1, downloads: 0 });
    expect((await fetch(`${server.baseUrl}/api/files/${id}/download`)).status).toBe(200);
    expect(byName((await read()).body, 'counted.png')).toMatchObject({ views: 1, downloads: 1 });
  });

  it('shows tags applied, renamed and deleted, and folder filters follow folders', async () => {
    const { id } = await upload('tagged.txt');
    const tag = (await admin.post('/api/tags', { name: 'cache-tag' })).body.data.tag;
    const folder = (await admin.post('/api/folders', { name: 'cache-folder' })).body.data.folder;
    const read = await keptListing();
    const inFolder = await keptListing(server.baseUrl, `folder=${folder.id}`);
    expect((await inFolder()).body.data).toEqual([]);

    expect((await admin.patch(`/api/files/${id}`, { tagIds: [tag.id], folderId: folder.id })).status).toBe(200);
    expect(byName((await read()).body, 'tagged.txt')).toMatchObject({ folderId: folder.id, tags: [{ id: tag.id, name: 'cache-tag' }] });
    expect((await inFolder()).body.data.map((f: { id: string }) => f.id)).toEqual([id]);

    expect((await admin.patch(`/api/tags/${tag.id}`, { name: 'renamed-tag' })).status).toBe(200);
    expect(byName((await read()).body, 'tagged.txt')?.tags).toEqual([{ id: tag.id, name: 'renamed-tag' }]);

    expect((await admin.delete(`/api/tags/${tag.id}`)).status).toBe(204);
    expect(byName((await read()).body, 'tagged.txt')?.tags).toEqual([]);

    expect((await admin.delete(`/api/folders/${folder.id}`)).status).toBe(204);
    expect(byName((await read()).body, 'tagged.txt')?.folderId).toBeNull();
    expect((await inFolder()).status).toBe(404);
  });

  it('shows new MIME types in GET /api/files/types', async () => {
    const types = () => new Client(server.baseUrl).get('/api/files/types', { token });
    await types();
    expect((await types()).body.data.types).not.toContain('application/x-cache-test');
    await upload('typed.bin', 'x', 'application/x-cache-test');
    expect((await types()).body.data.types).toContain('application/x-cache-test');
  });

  it('shows a change made by another process sharing the database', async () => {
    const { id } = await upload('shared.txt');
    const readHere = await keptListing(server.baseUrl);
    const readThere = await keptListing(other.baseUrl);

    // Renamed through the other process: this one's kept listing must not be served any more.
    const session = new Client(other.baseUrl);
    expect((await session.post('/api/auth/login', { email: admin.email, password: admin.password })).status).toBe(200);
    expect((await session.patch(`/api/files/${id}`, { name: 'shared-renamed.txt' })).status).toBe(200);
    expect(byName((await readHere()).body, 'shared-renamed.txt')?.id).toBe(id);
    expect(byName((await readThere()).body, 'shared-renamed.txt')?.id).toBe(id);

    // And the other way round.
    expect((await admin.delete(`/api/files/${id}`)).status).toBe(204);
    expect(byName((await readThere()).body, 'shared-renamed.txt')).toBeUndefined();
  });

  it('is as fresh for a browser session and for the legacy upload credential as for a named token', async () => {
    const legacy = (await admin.get('/api/profile/upload-token')).body.data.uploadToken as string;
    const readers = [() => admin.get('/api/files?limit=100'), () => new Client(server.baseUrl).get('/api/files?limit=100', { token: legacy })];
    for (const read of readers) {
      await read();
      await read();
    }
    const { id } = await upload('seen-by-every-credential.txt');
    for (const read of readers) expect(byName((await read()).body, 'seen-by-every-credential.txt')?.id).toBe(id);
    expect((await admin.patch(`/api/files/${id}`, { name: 'renamed-for-every-credential.txt' })).status).toBe(200);
    for (const read of readers) {
      const body = (await read()).body;
      expect(byName(body, 'seen-by-every-credential.txt')).toBeUndefined();
      expect(byName(body, 'renamed-for-every-credential.txt')?.id).toBe(id);
    }
  });

  it('never serves one account the listing kept for another', async () => {
    await upload('mine.txt');
    const mine = await keptListing(server.baseUrl, 'limit=5');
    expect(byName((await mine()).body, 'mine.txt')).toBeDefined();

    await admin.patch('/api/settings', { registration: 'open' });
    const stranger = await signUp(server.baseUrl, uniqueEmail('stranger'));
    const strangerToken = await createToken(stranger, ['files:read']);
    const theirs = await list(server.baseUrl, 'limit=5', strangerToken);
    expect(theirs.status).toBe(200);
    expect(theirs.body.data).toEqual([]);
    expect(theirs.body.pagination.total).toBe(0);
  });

  it('can be turned off', async () => {
    const uncached = await startTestServer({ LISTING_CACHE_MB: '0' }, { databaseUrl: server.databaseUrl, dataDir: server.dataDir });
    try {
      const first = await list(uncached.baseUrl);
      expect(first.status).toBe(200);
      expect((await list(uncached.baseUrl)).text).toBe(first.text);
      expect(uncached.ctx.listingCache.stats()).toEqual({ entries: 0, bytes: 0 });
    } finally {
      await uncached.close();
    }
  });
});
