import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';
import { uploadFile } from '../support/uploads.ts';
import { everyoneRole, withoutEveryonePermission } from '../support/roles.ts';
import { fileRow } from '../support/file-rows.ts';

/**
 * Sharing a folder by a public address (docs/decisions.md, "Sharing a folder"): the page lists the
 * folder's own public files and nothing else, the address is the owner's to make and to end, and
 * no other account can read, make or end it.
 */
let server: TestServer;
let admin: Awaited<ReturnType<typeof signUp>>;

beforeAll(async () => {
  server = await startTestServer({ UPLOAD_RATE_LIMIT: '0' });
  admin = await signUp(server.baseUrl);
  expect((await admin.patch('/api/settings', { registration: 'open' })).status).toBe(200);
});
afterAll(() => server.close());

const folderOf = async (client: Client, name: string, parentId?: string) => {
  const made = await client.post('/api/folders', { name, ...(parentId ? { parentId } : {}) });
  expect(made.status, made.text).toBe(201);
  return made.body.data.folder.id as string;
};
const upload = async (client: Client, name: string, folderId: string | null, fields: Record<string, string> = {}) => {
  const answer = await uploadFile(client, name, `${name}\n`, { fields, ...(folderId ? { query: `folderId=${folderId}` } : {}) });
  expect(answer.status, answer.text).toBe(200);
  return answer.body.data as { url: string; downloadUrl: string };
};
/** The names a folder's page lists, in its order, and the page's own text. */
const pageOf = async (url: string) => {
  const response = await fetch(url);
  const text = await response.text();
  const names = [...text.matchAll(/<span class="name">([^<]*)<\/span>/g)].map((match) => match[1]);
  return { status: response.status, text, names, headers: response.headers };
};

describe('sharing a folder', () => {
  it('gives a public address listing the folder\'s own public files, newest first, each linking to its share page', async () => {
    const owner = await signUp(server.baseUrl);
    const folder = await folderOf(owner, 'Holiday 2026');
    const inside = await folderOf(owner, 'Private bits', folder);
    const first = await upload(owner, 'beach.txt', folder);
    const second = await upload(owner, 'sunset.txt', folder);
    await upload(owner, 'hidden.txt', folder, { visibility: 'PRIVATE' });
    await upload(owner, 'locked.txt', folder, { password: 'hunter22' });
    await upload(owner, 'deeper.txt', inside);
    await upload(owner, 'elsewhere.txt', null);
    // A file whose expiry has passed but whose expiry job has not run yet is not listed either.
    await server.ctx.db.insertInto('files').values(fileRow(owner.userId, 'expired-not-swept', { name: 'expired.txt', folderId: folder, expiresAt: Date.now() - 1000 })).execute();

    expect((await owner.get(`/api/folders/${folder}/share`)).body).toEqual({ success: true, data: { share: null } });
    const shared = await owner.put(`/api/folders/${folder}/share`);
    expect(shared.status, shared.text).toBe(201);
    const share = shared.body.data.share as { url: string; createdAt: string };
    expect(share.url).toMatch(new RegExp(`^${server.baseUrl}/folder/[a-z0-9]{16}$`));
    expect((await owner.get('/api/folder-shares')).body.data.shares).toEqual([{ folderId: folder, ...share }]);
    // Asked again, the address stays.
    const again = await owner.put(`/api/folders/${folder}/share`);
    expect([again.status, again.body.data.share]).toEqual([200, share]);
    expect((await owner.get(`/api/folders/${folder}/share`)).body.data.share).toEqual(share);

    const page = await pageOf(share.url);
    expect(page.status).toBe(200);
    expect(page.names).toEqual(['sunset.txt', 'beach.txt']);
    expect(page.text).toContain('<h1>Holiday 2026</h1>');
    expect(page.text).toContain(`href="${second.url}"`);
    expect(page.text).toContain(`href="${first.url}"`);
    expect(page.text).not.toContain(owner.email);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.text).toContain('<meta property="og:title" content="Holiday 2026">');

    // A file made private or moved out leaves the page; one made public joins it.
    const secondId = second.downloadUrl.split('/').at(-2)!;
    expect((await owner.patch(`/api/files/${secondId}`, { visibility: 'PRIVATE' })).status).toBe(200);
    expect((await pageOf(share.url)).names).toEqual(['beach.txt']);
    expect((await owner.patch(`/api/files/${secondId}`, { visibility: 'PUBLIC', folderId: null })).status).toBe(200);
    expect((await pageOf(share.url)).names).toEqual(['beach.txt']);

    // Stopped, the address is a 404 page; shared again, it is a new address.
    expect((await owner.delete(`/api/folders/${folder}/share`)).status).toBe(204);
    expect((await owner.delete(`/api/folders/${folder}/share`)).status).toBe(204);
    const gone = await pageOf(share.url);
    expect(gone.status).toBe(404);
    expect(gone.text).toContain('Folder not found');
    const renewed = (await owner.put(`/api/folders/${folder}/share`)).body.data.share as { url: string };
    expect(renewed.url).not.toBe(share.url);
    expect((await pageOf(renewed.url)).names).toEqual(['beach.txt']);

    // Deleting the folder ends its share.
    expect((await owner.delete(`/api/folders/${folder}`)).status).toBe(204);
    expect((await pageOf(renewed.url)).status).toBe(404);
  });

  it('stops working at its expiry, which can be moved or taken away keeping the address; shared again after it, a new address', async () => {
    const owner = await signUp(server.baseUrl);
    const folder = await folderOf(owner, 'Wedding');
    await upload(owner, 'toast.txt', folder);
    const share = async (body?: unknown) => {
      const answer = await owner.put(`/api/folders/${folder}/share`, body);
      return { status: answer.status, text: answer.text, share: answer.body.data?.share as { url: string; createdAt: string; expiresAt: string | null } };
    };
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const made = await share({ expiresAt: until });
    expect([made.status, made.share.expiresAt], made.text).toEqual([201, until]);
    const shown = await pageOf(made.share.url);
    expect(shown.names).toEqual(['toast.txt']);
    // The page says until when, as a file's page does: in UTC, with the exact instant.
    expect(shown.text).toContain(`Available until <time datetime="${until}">`);
    expect((await owner.get(`/api/folders/${folder}/share`)).body.data.share).toEqual(made.share);

    // Moved, kept when left out, taken away: the address stays the same throughout.
    const later = new Date(Date.now() + 7_200_000).toISOString();
    const moved = await share({ expiresAt: later });
    expect([moved.status, moved.share.url, moved.share.expiresAt]).toEqual([200, made.share.url, later]);
    expect((await share()).share.expiresAt).toBe(later);
    expect((await share({})).share.expiresAt).toBe(later);
    const never = await share({ expiresAt: null });
    expect([never.status, never.share.url, never.share.expiresAt]).toEqual([200, made.share.url, null]);
    expect((await pageOf(made.share.url)).text).not.toContain('Available until');
    for (const bad of [new Date(Date.now() - 1000).toISOString(), 'tomorrow', 5]) {
      const refused = await owner.put(`/api/folders/${folder}/share`, { expiresAt: bad });
      expect(refused.status, String(bad)).toBe(400);
      expect(refused.body.error, String(bad)).toMatch(/expiresAt/);
    }

    // Past its expiry the share has ended: the page is a 404, and the share is in no list.
    await share({ expiresAt: until });
    await server.ctx.db.updateTable('folderShares').set({ expiresAt: Date.now() - 1 }).where('folderId', '=', folder).execute();
    expect((await pageOf(made.share.url)).status).toBe(404);
    expect((await owner.get(`/api/folders/${folder}/share`)).body.data.share).toBeNull();
    expect((await owner.get('/api/folder-shares')).body.data.shares).toEqual([]);
    // Shared again, it is a new address; the old one never lists the folder again.
    const renewed = await share();
    expect([renewed.status, renewed.share.expiresAt]).toEqual([201, null]);
    expect(renewed.share.url).not.toBe(made.share.url);
    expect((await pageOf(renewed.share.url)).names).toEqual(['toast.txt']);
    expect((await pageOf(made.share.url)).status).toBe(404);
  });

  it("lists its subfolders' public files too when asked, each marked with its subfolder, as the tree is now", async () => {
    const owner = await signUp(server.baseUrl);
    const trip = await folderOf(owner, 'Road trip');
    const day = await folderOf(owner, 'Day 1', trip);
    const night = await folderOf(owner, 'Night <one>', day);
    const elsewhere = await folderOf(owner, 'Elsewhere');
    await upload(owner, 'start.txt', trip);
    await upload(owner, 'morning.txt', day);
    await upload(owner, 'stars.txt', night);
    await upload(owner, 'hidden.txt', day, { visibility: 'PRIVATE' });
    await upload(owner, 'away.txt', elsewhere);

    const made = await owner.put(`/api/folders/${trip}/share`, { subfolders: true });
    expect([made.status, made.body.data.share.subfolders], made.text).toEqual([201, true]);
    const url = made.body.data.share.url as string;
    const shown = await pageOf(url);
    expect(shown.names).toEqual(['stars.txt', 'morning.txt', 'start.txt']);
    expect(shown.text).toContain('3 files');
    // A subfolder's file says which subfolder, its name escaped; the folder's own files say nothing.
    expect(shown.text).toContain(' · in Day 1 / Night &lt;one&gt;</span>');
    expect(shown.text).toContain(' · in Day 1</span>');
    expect(shown.text.match(/ · in /g)).toHaveLength(2);

    // The tree as it is now: a subfolder moved out leaves the page with its files, one moved in joins it.
    expect((await owner.patch(`/api/folders/${night}`, { parentId: elsewhere })).status).toBe(200);
    expect((await pageOf(url)).names).toEqual(['morning.txt', 'start.txt']);
    expect((await owner.patch(`/api/folders/${elsewhere}`, { parentId: trip })).status).toBe(200);
    const moved = await pageOf(url);
    expect(moved.names).toEqual(['away.txt', 'stars.txt', 'morning.txt', 'start.txt']);
    expect(moved.text).toContain(' · in Elsewhere / Night &lt;one&gt;</span>');

    // Turned off, the address stays and lists the folder's own files; left out, the choice stays.
    const off = await owner.put(`/api/folders/${trip}/share`, { subfolders: false });
    expect([off.status, off.body.data.share.url, off.body.data.share.subfolders]).toEqual([200, url, false]);
    expect((await pageOf(url)).names).toEqual(['start.txt']);
    expect((await owner.put(`/api/folders/${trip}/share`, {})).body.data.share.subfolders).toBe(false);
    expect((await owner.put(`/api/folders/${trip}/share`, { subfolders: 'yes' })).status).toBe(400);
  });

  it('shows folder names to visitors without the direction controls that would turn them around', async () => {
    const owner = await signUp(server.baseUrl);
    // Shown as "Invoicesexe.pdf": the override turns what follows it around.
    const folder = await folderOf(owner, 'Invoices\u202Efdp.exe');
    const inner = await folderOf(owner, 'Q1\u2067\u200f', folder);
    await upload(owner, 'march.txt', inner);
    const made = await owner.put(`/api/folders/${folder}/share`, { subfolders: true });
    expect(made.status, made.text).toBe(201);
    const shown = await pageOf(made.body.data.share.url as string);
    expect(shown.status).toBe(200);
    expect(shown.text).not.toMatch(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
    expect(shown.text).toContain('<h1>Invoicesfdp.exe</h1>');
    expect(shown.text).toContain('<title>Invoicesfdp.exe · Hoard</title>');
    expect(shown.text).toContain('<meta property="og:title" content="Invoicesfdp.exe">');
    expect(shown.text).toContain(' · in Q1</span>');
    // The owner's own lists keep the name as it was given.
    expect((await owner.get('/api/folders')).body.data.folders.map((f: { name: string }) => f.name)).toContain('Invoices\u202Efdp.exe');
  });

  it('pages through a large folder, a page past the last being the last, a page that is no number the first', async () => {
    const owner = await signUp(server.baseUrl);
    const folder = await folderOf(owner, 'Screenshots');
    const start = Date.UTC(2025, 0, 1);
    const rows = Array.from({ length: 130 }, (_, i) => fileRow(owner.userId, `shot${owner.userId.slice(0, 6)}${i}`, { name: `shot-${String(i).padStart(3, '0')}.png`, folderId: folder, createdAt: start + i * 1000 }));
    await server.ctx.db.insertInto('files').values(rows).execute();
    const { url } = (await owner.put(`/api/folders/${folder}/share`)).body.data.share as { url: string };
    const first = await pageOf(url);
    expect(first.names).toHaveLength(60);
    expect(first.names[0]).toBe('shot-129.png');
    expect(first.text).toContain('130 files');
    expect(first.text).toContain('Page 1 of 3');
    expect(first.text).toContain(`href="${url}?page=2"`);
    const third = await pageOf(`${url}?page=3`);
    expect(third.names).toEqual(Array.from({ length: 10 }, (_, i) => `shot-${String(9 - i).padStart(3, '0')}.png`));
    expect((await pageOf(`${url}?page=99999999999999999999`)).names).toEqual(third.names);
    for (const odd of ['0', '-4', 'two', '2.5', '']) expect((await pageOf(`${url}?page=${odd}`)).names, odd).toEqual(first.names);
  });

  it('is the owner\'s alone: another account gets 404 for the folder, and the address of an unshared or unknown folder is a 404 page', async () => {
    const owner = await signUp(server.baseUrl);
    const stranger = await signUp(server.baseUrl);
    const folder = await folderOf(owner, 'Mine');
    await upload(owner, 'mine.txt', folder);
    for (const method of ['get', 'put', 'delete'] as const) {
      const answer = await stranger[method](`/api/folders/${folder}/share`);
      expect([answer.status, answer.body.error], method).toEqual([404, 'Folder not found']);
    }
    expect((await owner.get(`/api/folders/${folder}/share`)).body.data.share).toBeNull();
    await owner.put(`/api/folders/${folder}/share`);
    expect((await owner.get('/api/folder-shares')).body.data.shares).toHaveLength(1);
    expect((await stranger.get('/api/folder-shares')).body.data.shares).toEqual([]);
    await owner.delete(`/api/folders/${folder}/share`);
    for (const address of ['/folder/aaaaaaaaaaaaaaaa', `/folder/${folder}`, `/folder/${'x'.repeat(600)}`]) {
      const answer = await fetch(`${server.baseUrl}${address}`);
      expect(answer.status, address).toBe(404);
      expect(answer.headers.get('content-type'), address).toMatch(/^text\/html/);
    }
    // A NUL character is a client mistake, as in every path.
    expect((await fetch(`${server.baseUrl}/folder/%00`)).status).toBe(400);
    // A token never reaches these routes: they are the browser session's, as folders are.
    const token = (await owner.post('/api/tokens', { name: 'script', scopes: ['files:read', 'files:upload'] })).body.data.secret as string;
    const byToken = await new Client(server.baseUrl).put(`/api/folders/${folder}/share`, undefined, { token });
    expect(byToken.status).toBe(401);
  });

  it('needs files.share to share, not to see or end a share', async () => {
    const owner = await signUp(server.baseUrl);
    const folder = await folderOf(owner, 'Drafts');
    const other = await folderOf(owner, 'Finished');
    const { url } = (await owner.put(`/api/folders/${other}/share`)).body.data.share as { url: string };
    const everyone = await everyoneRole(admin);
    await withoutEveryonePermission(admin, everyone, 'files.share', async () => {
      const refused = await owner.put(`/api/folders/${folder}/share`);
      expect([refused.status, refused.body.error]).toEqual([403, 'You do not have permission to perform this action.']);
      expect((await owner.get(`/api/folders/${folder}/share`)).body.data.share).toBeNull();
      expect((await owner.get(`/api/folders/${other}/share`)).body.data.share.url).toBe(url);
      expect((await owner.delete(`/api/folders/${other}/share`)).status).toBe(204);
    });
    expect((await pageOf(url)).status).toBe(404);
  });

  it('ends with the account that made it', async () => {
    const owner = await signUp(server.baseUrl);
    const folder = await folderOf(owner, 'Leaving');
    await upload(owner, 'last.txt', folder);
    const { url } = (await owner.put(`/api/folders/${folder}/share`)).body.data.share as { url: string };
    expect((await pageOf(url)).names).toEqual(['last.txt']);
    expect((await admin.delete(`/api/users/${owner.userId}`)).status).toBe(204);
    expect((await pageOf(url)).status).toBe(404);
    expect(await server.ctx.db.selectFrom('folderShares').select('shareId').where('userId', '=', owner.userId).execute()).toEqual([]);
  });

  it('gives one address when two requests share a folder at once', async () => {
    const owner = await signUp(server.baseUrl);
    const folder = await folderOf(owner, 'Raced');
    const answers = await Promise.all(Array.from({ length: 6 }, () => owner.put(`/api/folders/${folder}/share`)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(new Set(answers.map((answer) => answer.body.data.share.url)).size).toBe(1);
  });
});
