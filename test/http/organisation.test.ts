import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { newId } from '../../src/db/ids.ts';
import { fileRow } from '../support/file-rows.ts';
import { uploadFile } from '../support/uploads.ts';
import { expectAnsweredMeanwhile, waitsDuring } from '../support/responsiveness.ts';

let server: TestServer;
let admin: Awaited<ReturnType<typeof signUp>>;
/** Non-administrators: their permissions come from the Everyone role only. */
let owner: Member;
let other: Member;

interface Member {
  id: string;
  email: string;
  password: string;
  client: Client;
}

const UNAUTHORIZED = { success: false, error: 'Unauthorized' };
const PERMISSION_DENIED = { success: false, error: 'You do not have permission to perform this action.' };
const DEFAULT_QUOTA = 5_000_000;

beforeAll(async () => {
  server = await startTestServer({ DEFAULT_QUOTA: String(DEFAULT_QUOTA) });
  admin = await signUp(server.baseUrl);
  owner = await createMember();
  other = await createMember();
});
afterAll(() => server.close());

async function signIn(email: string, password: string): Promise<Client> {
  const client = new Client(server.baseUrl);
  const response = await client.post('/api/auth/login', { email, password });
  expect(response.status).toBe(200);
  return client;
}

async function createMember(): Promise<Member> {
  const email = uniqueEmail('org');
  const password = 'member password';
  const created = await admin.post('/api/users', { email, password });
  expect(created.status).toBe(201);
  return { id: created.body.data.user.id, email, password, client: await signIn(email, password) };
}

async function namedToken(member: Member): Promise<string> {
  const response = await member.client.post('/api/tokens', { name: 'every scope', scopes: ['files:read', 'files:upload', 'urls:read', 'urls:write'] });
  expect(response.status).toBe(201);
  return response.body.data.secret;
}

async function legacyToken(member: Member): Promise<string> {
  const response = await member.client.get('/api/profile/upload-token');
  expect(response.status).toBe(200);
  return response.body.data.uploadToken;
}

async function makeTag(member: Member, name: string): Promise<{ id: string; name: string; createdAt: string }> {
  const response = await member.client.post('/api/tags', { name });
  expect(response.status, response.text).toBe(201);
  return response.body.data.tag;
}

async function makeFolder(member: Member, name: string, parentId?: string | null): Promise<{ id: string; name: string; parentId: string | null }> {
  const response = await member.client.post('/api/folders', parentId === undefined ? { name } : { name, parentId });
  expect(response.status, response.text).toBe(201);
  return response.body.data.folder;
}

async function makeProfile(member: Member, name: string, options: Record<string, unknown> = {}) {
  const response = await member.client.post('/api/upload-profiles', { name, options });
  expect(response.status, response.text).toBe(201);
  return response.body.data.profile as { id: string; name: string; options: Record<string, unknown>; createdAt: string; updatedAt: string; isDefault: boolean };
}

/** A file row written directly: upload routes are not part of this suite. */
async function insertFile(member: Member, folderId: string | null): Promise<string> {
  const id = newId();
  const now = Date.now();
  await server.ctx.db
    .insertInto('files')
    .values({
      id,
      userId: member.id,
      name: `${id}.txt`,
      originalName: 'note.txt',
      storageKey: `test/${id}`,
      mimeType: 'text/plain',
      size: 5,
      sha256: '0'.repeat(64),
      visibility: 'PUBLIC',
      passwordHash: null,
      expiresAt: null,
      expiryAction: null,
      folderId,
      shareStyle: 'framed',
      ocrText: null,
      createdAt: now,
      updatedAt: now,
    })
    .execute();
  return id;
}

const folderIdOf = async (fileId: string) =>
  (await server.ctx.db.selectFrom('files').select('folderId').where('id', '=', fileId).executeTakeFirstOrThrow()).folderId;

async function everyoneRole() {
  const roles = (await admin.get('/api/roles')).body.data.roles;
  return roles.find((r: { systemKey: string | null }) => r.systemKey === 'everyone') as { id: string; permissions: string[] };
}

async function expectInvalid(response: { status: number; body: any }, message: RegExp) {
  expect(response.status).toBe(400);
  expect(response.body.success).toBe(false);
  expect(response.body.error).toMatch(message);
}

describe('upload profiles', () => {
  it('creates, lists, renames, replaces options and deletes', async () => {
    const tag = await makeTag(owner, 'profile tag');
    const created = await owner.client.post('/api/upload-profiles', {
      name: '  Screenshots  ',
      options: { visibility: 'PRIVATE', expiration: 'WEEK', expiryAction: 'SET_PRIVATE', randomizeFileUrls: true, shareStyle: 'minimal', tagIds: [tag.id, tag.id] },
    });
    expect(created.status).toBe(201);
    expect(created.body.success).toBe(true);
    const profile = created.body.data.profile;
    expect(Object.keys(profile).sort()).toEqual(['createdAt', 'id', 'isDefault', 'name', 'options', 'updatedAt']);
    expect(profile).toMatchObject({
      name: 'Screenshots',
      isDefault: false,
      options: { visibility: 'PRIVATE', expiration: 'WEEK', expiryAction: 'SET_PRIVATE', randomizeFileUrls: true, shareStyle: 'minimal', tagIds: [tag.id] },
    });
    expect(new Date(profile.createdAt).toISOString()).toBe(profile.createdAt);
    expect(profile.updatedAt).toBe(profile.createdAt);

    const empty = await makeProfile(owner, 'archive');
    expect(empty.options).toEqual({});
    const withoutOptions = await owner.client.post('/api/upload-profiles', { name: 'bare' });
    expect(withoutOptions.status).toBe(201);
    expect(withoutOptions.body.data.profile.options).toEqual({});

    const list = await owner.client.get('/api/upload-profiles');
    expect(list.status).toBe(200);
    const names = list.body.data.profiles.map((p: { name: string }) => p.name);
    expect(names).toEqual(expect.arrayContaining(['archive', 'bare', 'Screenshots']));
    expect(names.indexOf('archive')).toBeLessThan(names.indexOf('bare'));
    expect(names.indexOf('bare')).toBeLessThan(names.indexOf('Screenshots'));
    expect(list.body.data.profiles.find((p: { id: string }) => p.id === profile.id)).toEqual(profile);

    const renamed = await owner.client.patch(`/api/upload-profiles/${profile.id}`, { name: 'Shots' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.profile).toMatchObject({ id: profile.id, name: 'Shots', options: profile.options });

    const replaced = await owner.client.patch(`/api/upload-profiles/${profile.id}`, { options: { shareStyle: 'delivery' } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.data.profile.options).toEqual({ shareStyle: 'delivery' });
    expect(replaced.body.data.profile.name).toBe('Shots');
    expect(Date.parse(replaced.body.data.profile.updatedAt)).toBeGreaterThanOrEqual(Date.parse(profile.createdAt));

    expect((await owner.client.delete(`/api/upload-profiles/${profile.id}`)).status).toBe(204);
    expect((await owner.client.delete(`/api/upload-profiles/${profile.id}`)).status).toBe(404);
    const after = (await owner.client.get('/api/upload-profiles')).body.data.profiles.map((p: { id: string }) => p.id);
    expect(after).not.toContain(profile.id);
  });

  it.each([
    [{ options: {} }, /^body\.name: /],
    [{ name: '', options: {} }, /^body\.name: must be 1 to 80 characters/],
    [{ name: '   ', options: {} }, /^body\.name: must be 1 to 80 characters/],
    [{ name: 'x'.repeat(81), options: {} }, /^body\.name: must be 1 to 80 characters/],
    [{ name: 'ok', options: { visibility: 'SECRET' } }, /^body\.options\.visibility: /],
    [{ name: 'ok', options: { expiration: 'YEAR' } }, /^body\.options\.expiration: /],
    [{ name: 'ok', options: { randomizeFileUrls: 'yes' } }, /^body\.options\.randomizeFileUrls: /],
    [{ name: 'ok', options: { folderId: 'x' } }, /^body\.options: unknown field "folderId"/],
    [{ name: 'ok', options: { tagIds: Array.from({ length: 21 }, (_, i) => `t${i}`) } }, /^body\.options\.tagIds: /],
    [{ name: 'ok', options: {}, isDefault: true }, /^body: unknown field "isDefault"/],
  ])('rejects %j with 400 naming the field', async (body, message) => {
    await expectInvalid(await owner.client.post('/api/upload-profiles', body), message);
  });

  it('accepts only tags of the account in options.tagIds', async () => {
    const theirs = await makeTag(other, 'their tag');
    const mine = await makeTag(owner, 'my tag for profiles');
    await expectInvalid(await owner.client.post('/api/upload-profiles', { name: 'x', options: { tagIds: [mine.id, theirs.id] } }), /^options\.tagIds: .*belongs to your account/);
    await expectInvalid(await owner.client.post('/api/upload-profiles', { name: 'x', options: { tagIds: ['nosuchtag'] } }), /^options\.tagIds: /);
    const profile = await makeProfile(owner, 'tagged', { tagIds: [mine.id] });
    await expectInvalid(await owner.client.patch(`/api/upload-profiles/${profile.id}`, { options: { tagIds: [theirs.id] } }), /^options\.tagIds: /);
    await expectInvalid(await owner.client.patch(`/api/upload-profiles/${profile.id}`, { name: '' }), /^body\.name: /);
    await expectInvalid(await owner.client.patch(`/api/upload-profiles/${profile.id}`, { options: { nope: 1 } }), /^body\.options: unknown field "nope"/);
    const unchanged = (await owner.client.get('/api/upload-profiles')).body.data.profiles.find((p: { id: string }) => p.id === profile.id);
    expect(unchanged.options).toEqual({ tagIds: [mine.id] });
  });

  it('treats another account’s profile exactly like a missing one', async () => {
    const theirs = await makeProfile(other, 'theirs', { visibility: 'PRIVATE' });
    for (const id of [theirs.id, 'nosuchprofile']) {
      const patched = await owner.client.patch(`/api/upload-profiles/${id}`, { name: 'mine now' });
      expect(patched.status).toBe(404);
      expect(patched.body).toEqual({ success: false, error: 'Upload profile not found' });
      const deleted = await owner.client.delete(`/api/upload-profiles/${id}`);
      expect(deleted.status).toBe(404);
      expect(deleted.body).toEqual({ success: false, error: 'Upload profile not found' });
    }
    expect((await owner.client.get('/api/upload-profiles')).body.data.profiles.map((p: { id: string }) => p.id)).not.toContain(theirs.id);
    const still = (await other.client.get('/api/upload-profiles')).body.data.profiles.find((p: { id: string }) => p.id === theirs.id);
    expect(still).toMatchObject({ name: 'theirs', options: { visibility: 'PRIVATE' } });
  });

  it('deleting a profile leaves tokens bound to it untouched and clears the default profile', async () => {
    const profile = await makeProfile(owner, 'bound and default', { visibility: 'PRIVATE' });
    const token = await owner.client.post('/api/tokens', { name: 'bound uploader', scopes: ['files:upload'], profileId: profile.id });
    expect(token.status).toBe(201);
    const set = await owner.client.patch('/api/account', { defaultProfileId: profile.id });
    expect(set.status).toBe(200);
    expect(set.body.data.account.defaultProfileId).toBe(profile.id);
    const listed = (await owner.client.get('/api/upload-profiles')).body.data.profiles;
    expect(listed.find((p: { id: string }) => p.id === profile.id).isDefault).toBe(true);
    expect(listed.filter((p: { isDefault: boolean }) => p.isDefault)).toHaveLength(1);

    expect((await owner.client.delete(`/api/upload-profiles/${profile.id}`)).status).toBe(204);

    const tokens = (await owner.client.get('/api/tokens')).body.data.tokens;
    expect(tokens.find((t: { id: string }) => t.id === token.body.data.token.id)).toMatchObject({ profileId: profile.id, status: 'active' });
    expect((await owner.client.get('/api/account')).body.data.account.defaultProfileId).toBeNull();
  });

  it('deleting another profile keeps the default profile', async () => {
    const keep = await makeProfile(owner, 'keep as default');
    const drop = await makeProfile(owner, 'drop me');
    expect((await owner.client.patch('/api/account', { defaultProfileId: keep.id })).status).toBe(200);
    expect((await owner.client.delete(`/api/upload-profiles/${drop.id}`)).status).toBe(204);
    expect((await owner.client.get('/api/account')).body.data.account.defaultProfileId).toBe(keep.id);
    expect((await owner.client.patch('/api/account', { defaultProfileId: null })).body.data.account.defaultProfileId).toBeNull();
  });
});

describe('folders', () => {
  it('creates nested folders, lists, renames and moves them', async () => {
    const created = await owner.client.post('/api/folders', { name: ' Projects ' });
    expect(created.status).toBe(201);
    const root = created.body.data.folder;
    expect(Object.keys(root).sort()).toEqual(['createdAt', 'id', 'name', 'parentId', 'updatedAt']);
    expect(root).toMatchObject({ name: 'Projects', parentId: null });
    const child = await makeFolder(owner, 'Hoard', root.id);
    expect(child.parentId).toBe(root.id);
    const explicitRoot = await makeFolder(owner, 'Inbox', null);
    expect(explicitRoot.parentId).toBeNull();

    const list = await owner.client.get('/api/folders');
    expect(list.status).toBe(200);
    const byId = new Map(list.body.data.folders.map((f: { id: string }) => [f.id, f]));
    expect(byId.get(child.id)).toEqual(child);
    expect(byId.get(root.id)).toEqual(root);

    const renamed = await owner.client.patch(`/api/folders/${child.id}`, { name: 'Hoard 2' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.folder).toMatchObject({ id: child.id, name: 'Hoard 2', parentId: root.id });

    const moved = await owner.client.patch(`/api/folders/${child.id}`, { parentId: explicitRoot.id });
    expect(moved.body.data.folder).toMatchObject({ name: 'Hoard 2', parentId: explicitRoot.id });
    const toTop = await owner.client.patch(`/api/folders/${child.id}`, { parentId: null });
    expect(toTop.status).toBe(200);
    expect(toTop.body.data.folder.parentId).toBeNull();
    const both = await owner.client.patch(`/api/folders/${child.id}`, { name: 'Hoard', parentId: root.id });
    expect(both.body.data.folder).toMatchObject({ name: 'Hoard', parentId: root.id });
  });

  it.each([
    [{}, /^body\.name: /],
    [{ name: '' }, /^body\.name: must be 1 to 100 characters/],
    [{ name: 'x'.repeat(101) }, /^body\.name: must be 1 to 100 characters/],
    [{ name: 'tab\there' }, /^body\.name: must not contain control characters/],
    [{ name: '\u200b' }, /^body\.name: must contain a visible character/],
    [{ name: '\u3164' }, /^body\.name: must contain a visible character/],
    [{ name: '\u2800\u0301' }, /^body\.name: must contain a visible character/],
    [{ name: 'a\u0085b' }, /^body\.name: must not contain control characters/],
    [{ name: 'a\u2028b' }, /^body\.name: must not contain control characters/],
    [{ name: 'a\ud800b' }, /^body\.name: must be valid Unicode text/],
    [{ name: 'ok', parentId: 42 }, /^body\.parentId: /],
    [{ name: 'ok', colour: 'red' }, /^body: unknown field "colour"/],
  ])('rejects %j with 400 naming the field', async (body, message) => {
    await expectInvalid(await owner.client.post('/api/folders', body), message);
  });

  it('accepts 100-character names', async () => {
    expect((await owner.client.post('/api/folders', { name: 'n'.repeat(100) })).status).toBe(201);
  });

  it('refuses to move a folder under itself or one of its descendants', async () => {
    const a = await makeFolder(owner, 'a');
    const b = await makeFolder(owner, 'b', a.id);
    const c = await makeFolder(owner, 'c', b.id);
    for (const target of [a.id, b.id, c.id]) {
      const response = await owner.client.patch(`/api/folders/${a.id}`, { parentId: target });
      await expectInvalid(response, /^parentId: /);
    }
    await expectInvalid(await owner.client.patch(`/api/folders/${b.id}`, { parentId: c.id }), /^parentId: .*subfolders/);
    // Nothing moved.
    const folders = (await owner.client.get('/api/folders')).body.data.folders;
    const parentOf = (id: string) => folders.find((f: { id: string }) => f.id === id).parentId;
    expect([parentOf(a.id), parentOf(b.id), parentOf(c.id)]).toEqual([null, a.id, b.id]);
    // Moving within the tree the right way round works.
    expect((await owner.client.patch(`/api/folders/${c.id}`, { parentId: a.id })).status).toBe(200);
    expect((await owner.client.patch(`/api/folders/${a.id}`, { parentId: null })).status).toBe(200);
  });

  it('limits nesting to 32 levels', async () => {
    let parent: string | null = null;
    const chain: string[] = [];
    for (let level = 1; level <= 32; level++) {
      const folder = await makeFolder(owner, `level ${level}`, parent);
      chain.push(folder.id);
      parent = folder.id;
    }
    await expectInvalid(await owner.client.post('/api/folders', { name: 'level 33', parentId: parent }), /^parentId: .*32 levels/);
    // Moving a two-level subtree under level 31 would make 33 levels too.
    const top = await makeFolder(owner, 'subtree');
    await makeFolder(owner, 'subtree child', top.id);
    await expectInvalid(await owner.client.patch(`/api/folders/${top.id}`, { parentId: chain[30] }), /^parentId: .*32 levels/);
    expect((await owner.client.patch(`/api/folders/${top.id}`, { parentId: chain[29] })).status).toBe(200);
  });

  it('treats another account’s folder exactly like a missing one', async () => {
    const theirs = await makeFolder(other, 'their folder');
    const mine = await makeFolder(owner, 'my folder');
    for (const id of [theirs.id, 'nosuchfolder']) {
      const asParent = await owner.client.post('/api/folders', { name: 'sneaky', parentId: id });
      expect(asParent.status).toBe(404);
      expect(asParent.body).toEqual({ success: false, error: 'Parent folder not found' });
      const moveInto = await owner.client.patch(`/api/folders/${mine.id}`, { parentId: id });
      expect(moveInto.status).toBe(404);
      expect(moveInto.body).toEqual({ success: false, error: 'Parent folder not found' });
      const patched = await owner.client.patch(`/api/folders/${id}`, { name: 'mine now' });
      expect(patched.status).toBe(404);
      expect(patched.body).toEqual({ success: false, error: 'Folder not found' });
      const deleted = await owner.client.delete(`/api/folders/${id}`);
      expect(deleted.status).toBe(404);
      expect(deleted.body).toEqual({ success: false, error: 'Folder not found' });
    }
    expect((await owner.client.get('/api/folders')).body.data.folders.map((f: { id: string }) => f.id)).not.toContain(theirs.id);
    expect((await other.client.get('/api/folders')).body.data.folders.find((f: { id: string }) => f.id === theirs.id)).toEqual(theirs);
  });

  it('deleting a folder unfiles its files and moves its subfolders up to its parent', async () => {
    const parent = await makeFolder(owner, 'parent');
    const doomed = await makeFolder(owner, 'doomed', parent.id);
    const child1 = await makeFolder(owner, 'child 1', doomed.id);
    const child2 = await makeFolder(owner, 'child 2', doomed.id);
    const grandchild = await makeFolder(owner, 'grandchild', child1.id);
    const inDoomed = [await insertFile(owner, doomed.id), await insertFile(owner, doomed.id)];
    const inChild = await insertFile(owner, child1.id);
    const inParent = await insertFile(owner, parent.id);

    const response = await owner.client.delete(`/api/folders/${doomed.id}`);
    expect(response.status).toBe(204);
    expect(response.text).toBe('');

    for (const file of inDoomed) expect(await folderIdOf(file)).toBeNull();
    expect(await folderIdOf(inChild)).toBe(child1.id);
    expect(await folderIdOf(inParent)).toBe(parent.id);
    const folders = (await owner.client.get('/api/folders')).body.data.folders;
    const parentOf = (id: string) => folders.find((f: { id: string }) => f.id === id)?.parentId;
    expect(folders.map((f: { id: string }) => f.id)).not.toContain(doomed.id);
    expect(parentOf(child1.id)).toBe(parent.id);
    expect(parentOf(child2.id)).toBe(parent.id);
    expect(parentOf(grandchild.id)).toBe(child1.id);
    // The files themselves are untouched otherwise.
    expect(await server.ctx.db.selectFrom('files').select('id').where('id', 'in', [...inDoomed, inChild, inParent]).execute()).toHaveLength(4);
  });

  it('moving a file into a folder that another request deletes meanwhile is a 409, not a server error', async () => {
    // The password's hashing (tens of milliseconds) comes after the folder is checked and before the
    // file is written: a deletion sent just after the change lands in between, in most attempts.
    const file = await insertFile(owner, null);
    const answers: number[] = [];
    for (let attempt = 0; attempt < 10 && !answers.includes(409); attempt++) {
      const folder = await makeFolder(owner, `vanishing ${attempt}`);
      const moved = owner.client.patch(`/api/files/${file}`, { folderId: folder.id, password: `secret ${attempt}` });
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect((await owner.client.delete(`/api/folders/${folder.id}`)).status).toBe(204);
      const answer = await moved;
      answers.push(answer.status);
      if (answer.status === 409) {
        expect(answer.body).toEqual({ success: false, error: 'Something this request refers to was deleted while it was being carried out; reload and try again' });
        expect(await folderIdOf(file)).toBeNull();
      }
    }
    // Each attempt either went first (200, then unfiled by the deletion), found the folder gone
    // (404), or was overtaken between its check and its write (409).
    expect(answers.every((status) => [200, 404, 409].includes(status)), answers.join(' ')).toBe(true);
    expect(answers, answers.join(' ')).toContain(409);
  });

  it('deleting a folder of many files holds up no other request for long', async () => {
    const member = await createMember();
    const folder = await makeFolder(member, 'big');
    const kept = await makeFolder(member, 'kept');
    const rows = Array.from({ length: 6000 }, (_, i) => fileRow(member.id, `infolder${member.id.slice(0, 8)}${i}`, { folderId: i < 5990 ? folder.id : kept.id }));
    for (let i = 0; i < rows.length; i += 500) await server.ctx.db.insertInto('files').values(rows.slice(i, i + 500)).execute();
    const during = await waitsDuring(server.baseUrl, () => member.client.delete(`/api/folders/${folder.id}`));
    expect(during.result.status).toBe(204);
    const filed = await server.ctx.db.selectFrom('files').select(['folderId', (eb) => eb.fn.countAll<number | string>().as('n')]).where('userId', '=', member.id).groupBy('folderId').execute();
    expect(filed.map((row) => [row.folderId, Number(row.n)]).sort()).toEqual([[kept.id, 10], [null, 5990]].sort());
    expect((await member.client.get(`/api/files?folder=${folder.id}`)).status).toBe(404);
    expect((await member.client.get('/api/files?folder=unfiled&limit=1')).body.pagination.total).toBe(5990);
    expectAnsweredMeanwhile(during);
  });

  it('deleting a top-level folder moves its subfolders to the top level', async () => {
    const top = await makeFolder(owner, 'top');
    const sub = await makeFolder(owner, 'sub', top.id);
    const file = await insertFile(owner, top.id);
    expect((await owner.client.delete(`/api/folders/${top.id}`)).status).toBe(204);
    const folders = (await owner.client.get('/api/folders')).body.data.folders;
    expect(folders.find((f: { id: string }) => f.id === sub.id).parentId).toBeNull();
    expect(await folderIdOf(file)).toBeNull();
  });
});

describe('tags', () => {
  it('creates, lists sorted by name, renames and deletes', async () => {
    const member = await createMember();
    const created = await member.client.post('/api/tags', { name: ' tag 10 ' });
    expect(created.status).toBe(201);
    const tag = created.body.data.tag;
    expect(Object.keys(tag).sort()).toEqual(['createdAt', 'id', 'name']);
    expect(tag.name).toBe('tag 10');
    for (const name of ['beta', 'Alpha', 'tag 2']) await makeTag(member, name);

    const list = await member.client.get('/api/tags');
    expect(list.status).toBe(200);
    expect(list.body.data.tags.map((t: { name: string }) => t.name)).toEqual(['Alpha', 'beta', 'tag 2', 'tag 10']);
    expect(list.body.data.tags[3]).toEqual(tag);

    const renamed = await member.client.patch(`/api/tags/${tag.id}`, { name: 'gamma' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ success: true, data: { tag: { ...tag, name: 'gamma' } } });

    expect((await member.client.delete(`/api/tags/${tag.id}`)).status).toBe(204);
    expect((await member.client.get('/api/tags')).body.data.tags.map((t: { name: string }) => t.name)).toEqual(['Alpha', 'beta', 'tag 2']);
    expect((await member.client.delete(`/api/tags/${tag.id}`)).status).toBe(404);
  });

  it("lists a file's tags in the tag list's order, on both databases, whatever their collation", async () => {
    const member = await createMember();
    const tags = [];
    for (const name of ['tag 10', 'Zebra', 'apple', 'tag 2', 'Émile']) tags.push(await makeTag(member, name));
    const listed = (await member.client.get('/api/tags')).body.data.tags.map((t: { name: string }) => t.name);
    expect(listed).toEqual(['apple', 'Émile', 'tag 2', 'tag 10', 'Zebra']);
    const file = await insertFile(member, null);
    const patched = await member.client.patch(`/api/files/${file}`, { tagIds: tags.map((t) => t.id) });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.data.file.tags.map((t: { name: string }) => t.name)).toEqual(listed);
    const page = await member.client.get('/api/files');
    expect(page.status, page.text).toBe(200);
    expect(page.body.data.find((f: { id: string }) => f.id === file).tags.map((t: { name: string }) => t.name)).toEqual(listed);
  });

  it('deleting a tag of many files holds up no other request for long', async () => {
    const member = await createMember();
    const tag = await makeTag(member, 'big');
    const kept = await makeTag(member, 'kept');
    const rows = Array.from({ length: 8000 }, (_, i) => fileRow(member.id, `tagged${member.id.slice(0, 8)}${i}`));
    for (let i = 0; i < rows.length; i += 500) {
      const batch = rows.slice(i, i + 500);
      await server.ctx.db.insertInto('files').values(batch).execute();
      await server.ctx.db.insertInto('fileTags').values(batch.flatMap((row, j) => [{ fileId: row.id as string, tagId: tag.id, excluded: 0 }, ...((i + j) % 100 === 0 ? [{ fileId: row.id as string, tagId: kept.id, excluded: 0 }] : [])])).execute();
    }
    const during = await waitsDuring(server.baseUrl, () => member.client.delete(`/api/tags/${tag.id}`));
    expect(during.result.status).toBe(204);
    expect(await server.ctx.db.selectFrom('fileTags').select('fileId').where('tagId', '=', tag.id).executeTakeFirst()).toBeUndefined();
    expect((await member.client.get(`/api/files?tag=${kept.id}&limit=1`)).body.pagination.total).toBe(80);
    expect((await member.client.get('/api/files?tag=untagged&limit=1')).body.pagination.total).toBe(7920);
    expect((await member.client.get(`/api/files?tag=${tag.id}`)).status).toBe(404);
    expectAnsweredMeanwhile(during);
  });

  it.each([
    [{}, /^body\.name: /],
    [{ name: '' }, /^body\.name: must be 1 to 50 characters/],
    [{ name: 'x'.repeat(51) }, /^body\.name: must be 1 to 50 characters/],
    [{ name: 7 }, /^body\.name: /],
    [{ name: 'ok', color: 'red' }, /^body: unknown field "color"/],
  ])('rejects %j with 400 naming the field', async (body, message) => {
    await expectInvalid(await owner.client.post('/api/tags', body), message);
    const tag = await makeTag(owner, `patch target ${Math.random()}`);
    await expectInvalid(await owner.client.patch(`/api/tags/${tag.id}`, body), message);
  });

  it('keeps names unique per account, ignoring case', async () => {
    const work = await makeTag(owner, 'Work');
    for (const name of ['Work', 'work', ' WORK ']) {
      const response = await owner.client.post('/api/tags', { name });
      expect(response.status, name).toBe(409);
      expect(response.body.success).toBe(false);
      expect(response.body.error).toMatch(/^name: .*"Work"/);
    }
    // Another account may use the same name.
    expect((await other.client.post('/api/tags', { name: 'Work' })).status).toBe(201);
    const home = await makeTag(owner, 'Home');
    expect((await owner.client.patch(`/api/tags/${home.id}`, { name: 'work' })).status).toBe(409);
    // Changing only the case of its own name is fine.
    const recased = await owner.client.patch(`/api/tags/${work.id}`, { name: 'WORK' });
    expect(recased.status).toBe(200);
    expect(recased.body.data.tag.name).toBe('WORK');
    expect((await owner.client.post('/api/tags', { name: 'wörk' })).status).toBe(201);
  });

  it('creating the same name concurrently gives one tag', async () => {
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => owner.client.post('/api/tags', { name: i % 2 ? 'Racing' : 'racing' })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
  });

  it('answers a raw application/octet-stream body or a form with a 400 in the route’s error shape, creating nothing', async () => {
    // Only the chunk-part upload reads raw bytes; its body parser stays with that route.
    const before = (await owner.client.get('/api/tags')).body.data.tags.length;
    const response = await owner.client.request('POST', '/api/tags', { body: JSON.stringify({ name: 'raw bytes' }), headers: { 'content-type': 'application/octet-stream' } });
    expect(response.status, response.text).toBe(400);
    expect(response.body).toEqual({ success: false, error: 'Unsupported Content-Type: application/octet-stream; send the body as application/json' });
    // Likewise a form: only POST /api/files reads multipart bodies.
    const form = new FormData();
    form.append('name', 'a form');
    const formAnswer = await owner.client.request('POST', '/api/tags', { body: form });
    expect(formAnswer.status, formAnswer.text).toBe(400);
    expect(formAnswer.body).toEqual({ success: false, error: expect.stringMatching(/^Unsupported Content-Type: multipart\/form-data/) });
    expect((await owner.client.get('/api/tags')).body.data.tags.length).toBe(before);
  });

  it('treats another account’s tag exactly like a missing one', async () => {
    const theirs = await makeTag(other, 'their private tag');
    for (const id of [theirs.id, 'nosuchtag']) {
      const patched = await owner.client.patch(`/api/tags/${id}`, { name: 'mine now' });
      expect(patched.status).toBe(404);
      expect(patched.body).toEqual({ success: false, error: 'Tag not found' });
      const deleted = await owner.client.delete(`/api/tags/${id}`);
      expect(deleted.status).toBe(404);
      expect(deleted.body).toEqual({ success: false, error: 'Tag not found' });
    }
    expect((await other.client.get('/api/tags')).body.data.tags.find((t: { id: string }) => t.id === theirs.id)).toEqual(theirs);
    expect((await owner.client.get('/api/tags')).body.data.tags.map((t: { id: string }) => t.id)).not.toContain(theirs.id);
  });

  it('deleting a tag removes it from files, profiles and the upload defaults', async () => {
    const doomed = await makeTag(owner, 'doomed tag');
    const kept = await makeTag(owner, 'kept tag');
    const file = await insertFile(owner, null);
    await server.ctx.db.insertInto('fileTags').values([{ fileId: file, tagId: doomed.id }, { fileId: file, tagId: kept.id }]).execute();
    const profile = await makeProfile(owner, 'with doomed tag', { visibility: 'PRIVATE', tagIds: [doomed.id, kept.id] });
    expect((await owner.client.patch('/api/account', { uploadDefaults: { tagIds: [kept.id, doomed.id] } })).status).toBe(200);

    expect((await owner.client.delete(`/api/tags/${doomed.id}`)).status).toBe(204);

    const fileTags = await server.ctx.db.selectFrom('fileTags').select('tagId').where('fileId', '=', file).execute();
    expect(fileTags.map((r) => r.tagId)).toEqual([kept.id]);
    const after = (await owner.client.get('/api/upload-profiles')).body.data.profiles.find((p: { id: string }) => p.id === profile.id);
    expect(after.options).toEqual({ visibility: 'PRIVATE', tagIds: [kept.id] });
    expect((await owner.client.get('/api/account')).body.data.account.uploadDefaults).toEqual({ tagIds: [kept.id] });
    expect((await owner.client.patch('/api/account', { uploadDefaults: {} })).status).toBe(200);
  });

  it('GET /api/files/tags lists the same tags for a session or the legacy credential, not a named token', async () => {
    const member = await createMember();
    await makeTag(member, 'zeta');
    await makeTag(member, 'Eta');
    const expected = (await member.client.get('/api/tags')).body;
    expect(expected.data.tags.map((t: { name: string }) => t.name)).toEqual(['Eta', 'zeta']);

    const viaSession = await member.client.get('/api/files/tags');
    expect(viaSession.status).toBe(200);
    expect(viaSession.body).toEqual(expected);

    const legacy = await legacyToken(member);
    const viaLegacy = await new Client(server.baseUrl).get('/api/files/tags', { token: legacy });
    expect(viaLegacy.status).toBe(200);
    expect(viaLegacy.body).toEqual(expected);

    const named = await namedToken(member);
    const viaNamed = await new Client(server.baseUrl).get('/api/files/tags', { token: named });
    expect(viaNamed.status).toBe(401);
    expect(viaNamed.body).toEqual(UNAUTHORIZED);
    // A named token with a session cookie alongside still acts with its own authority.
    const mixed = await member.client.get('/api/files/tags', { token: named });
    expect(mixed.status).toBe(401);

    const anonymous = await new Client(server.baseUrl).get('/api/files/tags');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual(UNAUTHORIZED);
  });
});

describe('account settings', () => {
  it('shows the account with its effective quota', async () => {
    const member = await createMember();
    const response = await member.client.get('/api/account');
    expect(response.status).toBe(200);
    const account = response.body.data.account;
    expect(Object.keys(account).sort()).toEqual(['defaultProfileId', 'email', 'id', 'name', 'quotaBytes', 'uploadDefaults', 'urlId', 'usedBytes']);
    const me = (await member.client.get('/api/auth/me')).body.data.user;
    expect(account).toEqual({ id: member.id, email: member.email, name: me.name, urlId: me.urlId, defaultProfileId: null, uploadDefaults: {}, usedBytes: 0, quotaBytes: DEFAULT_QUOTA });

    // An Administrator is exempt from the default quota.
    expect((await admin.get('/api/account')).body.data.account.quotaBytes).toBeNull();
    // A quota set on the account wins; 0 means no quota, as for DEFAULT_QUOTA.
    expect((await admin.patch(`/api/users/${member.id}`, { quotaBytes: 1234 })).status).toBe(200);
    expect((await member.client.get('/api/account')).body.data.account.quotaBytes).toBe(1234);
    expect((await admin.patch(`/api/users/${member.id}`, { quotaBytes: 0 })).status).toBe(200);
    expect((await member.client.get('/api/account')).body.data.account.quotaBytes).toBeNull();
    expect((await admin.patch(`/api/users/${member.id}`, { quotaBytes: null })).status).toBe(200);
    expect((await member.client.get('/api/account')).body.data.account.quotaBytes).toBe(DEFAULT_QUOTA);
  });

  it('changes the name, default profile and upload defaults', async () => {
    const member = await createMember();
    const tag = await makeTag(member, 'defaults tag');
    const profile = await makeProfile(member, 'default one');
    const response = await member.client.patch('/api/account', {
      name: ' New Name ',
      defaultProfileId: profile.id,
      uploadDefaults: { visibility: 'PRIVATE', expiration: 'DAY', tagIds: [tag.id] },
    });
    expect(response.status).toBe(200);
    expect(response.body.data.account).toMatchObject({ name: 'New Name', defaultProfileId: profile.id, uploadDefaults: { visibility: 'PRIVATE', expiration: 'DAY', tagIds: [tag.id] } });
    expect((await member.client.get('/api/account')).body.data.account).toEqual(response.body.data.account);
    expect((await member.client.get('/api/auth/me')).body.data.user.name).toBe('New Name');

    // Upload defaults are replaced as a whole; fields not given are kept.
    const replaced = await member.client.patch('/api/account', { uploadDefaults: { shareStyle: 'delivery' } });
    expect(replaced.body.data.account).toMatchObject({ name: 'New Name', defaultProfileId: profile.id, uploadDefaults: { shareStyle: 'delivery' } });
    const cleared = await member.client.patch('/api/account', { defaultProfileId: null });
    expect(cleared.body.data.account.defaultProfileId).toBeNull();
    expect((await member.client.patch('/api/account', {})).status).toBe(200);
  });

  it('refuses another account’s profile and tags', async () => {
    const theirProfile = await makeProfile(other, 'not yours');
    const theirTag = await makeTag(other, 'not your tag');
    for (const id of [theirProfile.id, 'nosuchprofile']) {
      const response = await owner.client.patch('/api/account', { defaultProfileId: id });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ success: false, error: 'Upload profile not found' });
    }
    await expectInvalid(await owner.client.patch('/api/account', { uploadDefaults: { tagIds: [theirTag.id] } }), /^uploadDefaults\.tagIds: /);
  });

  it.each([
    [{ name: '' }, /^body\.name: /],
    [{ name: 'x'.repeat(101) }, /^body\.name: /],
    [{ defaultProfileId: 5 }, /^body\.defaultProfileId: /],
    [{ uploadDefaults: { visibility: 'HIDDEN' } }, /^body\.uploadDefaults\.visibility: /],
    [{ uploadDefaults: { folderId: 'x' } }, /^body\.uploadDefaults: unknown field "folderId"/],
    [{ email: 'new@example.test' }, /^currentPassword: required to change the email/],
    [{ email: 'not an address', currentPassword: 'member password' }, /^body\.email: must be an email address/],
    [{ currentPassword: 'member password', newPassword: 'short' }, /^body\.newPassword: must be at least 8 characters/],
    [{ newPassword: 'long enough password' }, /^currentPassword: required/],
    [{ currentPassword: 'member password' }, /^currentPassword: given without newPassword or email/],
  ])('rejects %j with 400 naming the field', async (body, message) => {
    await expectInvalid(await owner.client.patch('/api/account', body), message);
  });

  it('changing the password needs the current one and ends the other sessions only', async () => {
    const member = await createMember();
    const secondBrowser = await signIn(member.email, member.password);
    const token = await namedToken(member);
    const legacy = await legacyToken(member);

    const wrong = await member.client.patch('/api/account', { currentPassword: 'not the password', newPassword: 'brand new password' });
    expect(wrong.status).toBe(403);
    expect(wrong.body).toEqual({ success: false, error: 'currentPassword: the current password is not correct' });
    expect((await secondBrowser.get('/api/auth/me')).status).toBe(200);

    const changed = await member.client.patch('/api/account', { currentPassword: member.password, newPassword: 'brand new password' });
    expect(changed.status).toBe(200);
    expect(changed.body.data.account.id).toBe(member.id);

    expect((await member.client.get('/api/auth/me')).status).toBe(200);
    const ended = await secondBrowser.get('/api/auth/me');
    expect(ended.status).toBe(401);
    expect(ended.body).toEqual(UNAUTHORIZED);
    // Tokens and the legacy credential are not sessions (spec, Authentication 10).
    expect((await new Client(server.baseUrl).get('/api/urls', { token })).status).toBe(200);
    expect((await new Client(server.baseUrl).get('/api/files/tags', { token: legacy })).status).toBe(200);

    expect((await new Client(server.baseUrl).post('/api/auth/login', { email: member.email, password: member.password })).status).toBe(401);
    await signIn(member.email, 'brand new password');
  });

  it('a password is the same however its accents or widths were typed', async () => {
    const member = await createMember();
    // Composed on one keyboard; decomposed (macOS text) or full-width digits (a Japanese input method) on another.
    expect((await member.client.patch('/api/account', { currentPassword: member.password, newPassword: 'p\u00e4ssw\u00f6rd 12' })).status).toBe(200);
    await signIn(member.email, 'pa\u0308sswo\u0308rd 12');
    await signIn(member.email, 'p\u00e4ssw\u00f6rd \uff11\uff12');
    expect((await new Client(server.baseUrl).post('/api/auth/login', { email: member.email, password: 'passwords 12' })).status).toBe(401);

    // A password set decomposed before passwords were normalised was hashed as typed: it still opens.
    const { hash } = await import('@node-rs/argon2');
    await server.ctx.db.updateTable('users').set({ passwordHash: await hash('pa\u0308sswo\u0308rd 34') }).where('id', '=', member.id).execute();
    await signIn(member.email, 'pa\u0308sswo\u0308rd 34');
    // That sign-in made the hash again of the normalised text: the composed spelling opens it now.
    await signIn(member.email, 'p\u00e4ssw\u00f6rd 34');
  });

  it('a sign-in with the old password racing the change leaves no session behind it', async () => {
    // The sign-in reads the account's password hash, verifies it (slow), then makes a session; a
    // change landing in between ended the sessions there were, not the one made after it. Sign-ins
    // are started at several moments across the change's own two slow steps.
    for (const delay of [0, 20, 40, 60, 80, 100, 120, 150]) {
      const member = await createMember();
      const attacker = new Client(server.baseUrl);
      const [changed, signedIn] = await Promise.all([
        member.client.patch('/api/account', { currentPassword: member.password, newPassword: 'brand new password' }),
        new Promise((resolve) => setTimeout(resolve, delay)).then(() => attacker.post('/api/auth/login', { email: member.email, password: member.password })),
      ]);
      expect(changed.status).toBe(200);
      expect([200, 401]).toContain(signedIn.status);
      expect((await attacker.get('/api/auth/me')).status, `sign-in ${delay} ms after the change began`).toBe(401);
    }
  });

  it('throttles wrong current passwords like failed sign-ins', async () => {
    const member = await createMember();
    for (let i = 0; i < 10; i++) {
      expect((await member.client.patch('/api/account', { currentPassword: `wrong ${i}`, newPassword: 'brand new password' })).status).toBe(403);
    }
    const blocked = await member.client.patch('/api/account', { currentPassword: member.password, newPassword: 'brand new password' });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    // Other changes are not blocked.
    expect((await member.client.patch('/api/account', { name: 'still allowed' })).status).toBe(200);
  });
});

/** Every route of this suite, with a body that would pass validation where one is needed. */
const routes = [
  ['GET', '/api/upload-profiles', 'uploadProfiles.manage', undefined],
  ['POST', '/api/upload-profiles', 'uploadProfiles.manage', { name: 'p', options: {} }],
  ['PATCH', '/api/upload-profiles/someid', 'uploadProfiles.manage', { name: 'p' }],
  ['DELETE', '/api/upload-profiles/someid', 'uploadProfiles.manage', undefined],
  ['GET', '/api/folders', 'folders.manage', undefined],
  ['POST', '/api/folders', 'folders.manage', { name: 'f' }],
  ['PATCH', '/api/folders/someid', 'folders.manage', { name: 'f' }],
  ['DELETE', '/api/folders/someid', 'folders.manage', undefined],
  ['GET', '/api/tags', 'tags.manage', undefined],
  ['POST', '/api/tags', 'tags.manage', { name: 't' }],
  ['PATCH', '/api/tags/someid', 'tags.manage', { name: 't' }],
  ['DELETE', '/api/tags/someid', 'tags.manage', undefined],
  ['GET', '/api/files/tags', 'files.read', undefined],
  ['GET', '/api/account', null, undefined],
  ['PATCH', '/api/account', 'profile.update', { name: 'n' }],
] as const;

describe('who may use the organisation routes', () => {
  it('lets an account change its password without profile.update, which guards its name and upload defaults', async () => {
    const member = await createMember();
    const everyone = await everyoneRole();
    const stripped = await admin.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions.filter((p) => p !== 'profile.update') });
    expect(stripped.status).toBe(200);
    try {
      const renamed = await member.client.patch('/api/account', { name: 'Renamed' });
      expect([renamed.status, renamed.body]).toEqual([403, PERMISSION_DENIED]);
      const both = await member.client.patch('/api/account', { name: 'Renamed', currentPassword: member.password, newPassword: 'a brand new password' });
      expect([both.status, both.body]).toEqual([403, PERMISSION_DENIED]);
      const changed = await member.client.patch('/api/account', { currentPassword: member.password, newPassword: 'a brand new password' });
      expect(changed.status, changed.text).toBe(200);
      expect((await new Client(server.baseUrl).post('/api/auth/login', { email: member.email, password: 'a brand new password' })).status).toBe(200);
    } finally {
      await admin.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions });
    }
  });

  it('needs a browser session: no credential, a named token or the legacy credential get the generic 401', async () => {
    const token = await namedToken(owner);
    const legacy = await legacyToken(owner);
    for (const [method, path, , json] of routes) {
      const anonymous = await new Client(server.baseUrl).request(method, path, { json });
      expect(anonymous.status, `${method} ${path} without credential`).toBe(401);
      expect(anonymous.body).toEqual(UNAUTHORIZED);
      const named = await new Client(server.baseUrl).request(method, path, { json, token });
      expect(named.status, `${method} ${path} with a named token`).toBe(401);
      expect(named.body).toEqual(UNAUTHORIZED);
      if (path === '/api/files/tags') continue;
      const viaLegacy = await new Client(server.baseUrl).request(method, path, { json, token: legacy });
      expect(viaLegacy.status, `${method} ${path} with the legacy credential`).toBe(401);
      expect(viaLegacy.body).toEqual(UNAUTHORIZED);
    }
  });

  it('needs the current permission: 403 once it is taken from the Everyone role', async () => {
    const everyone = await everyoneRole();
    const legacy = await legacyToken(owner);
    const permissions = [...new Set(routes.map(([, , permission]) => permission).filter((p) => p !== null))];
    for (const permission of permissions) {
      const stripped = await admin.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions.filter((p) => p !== permission) });
      expect(stripped.status).toBe(200);
      try {
        for (const [method, path, needed, json] of routes) {
          const response = await owner.client.request(method, path, { json });
          if (needed === permission) {
            expect(response.status, `${method} ${path} without ${permission}`).toBe(403);
            expect(response.body).toEqual(PERMISSION_DENIED);
          } else {
            expect(response.status, `${method} ${path} without ${permission}`).not.toBe(403);
          }
        }
        if (permission === 'files.read') {
          const response = await new Client(server.baseUrl).get('/api/files/tags', { token: legacy });
          expect(response.status).toBe(403);
          expect(response.body).toEqual(PERMISSION_DENIED);
        }
      } finally {
        expect((await admin.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions })).status).toBe(200);
      }
    }
    // Restored: the member may use every route again.
    expect((await owner.client.get('/api/upload-profiles')).status).toBe(200);
    expect((await owner.client.get('/api/folders')).status).toBe(200);
    expect((await owner.client.get('/api/tags')).status).toBe(200);
    expect((await owner.client.patch('/api/account', {})).status).toBe(200);
  });

  it('refuses a state change from another origin', async () => {
    const response = await owner.client.post('/api/tags', { name: 'cross-site' }, { origin: 'https://evil.example' });
    expect(response.status).toBe(403);
  });
});

describe('concurrent edits of one account', () => {
  // On PostgreSQL a file's change locks its row and then, through the count triggers, the account's
  // row; renames, deletions and folder changes lock the account's row first. Taken in both orders,
  // the two deadlocked, and the one PostgreSQL chose to abort answered 500.
  it('renames, moves, tags and deletes at once, each answered with its own status, never a 500', async () => {
    const member = await createMember();
    const folder = await makeFolder(member, 'busy');
    const doomed = await makeFolder(member, 'doomed');
    const tag = await makeTag(member, 'busy');
    const files = [];
    for (let i = 0; i < 6; i++) files.push(await insertFile(member, doomed.id));
    const statuses: number[] = [];
    for (let round = 0; round < 8; round++) {
      const requests: Array<Promise<{ status: number }>> = [];
      for (const [i, id] of files.entries()) {
        requests.push(member.client.patch(`/api/files/${id}`, { name: `renamed-${round}-${i}.txt` }));
        requests.push(member.client.patch(`/api/files/${id}`, { folderId: round % 2 === 0 ? folder.id : null }));
        requests.push(member.client.patch(`/api/files/${id}`, { tagIds: round % 2 === 0 ? [tag.id] : [] }));
      }
      if (round === 4) requests.push(member.client.delete(`/api/folders/${doomed.id}`));
      if (round === 6) requests.push(member.client.delete(`/api/files/${files.pop()!}`));
      statuses.push(...(await Promise.all(requests)).map((r) => r.status));
    }
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    // Besides successes, only what the races mean: a file or folder deleted meanwhile (404, 409).
    expect(statuses.filter((s) => ![200, 204, 404, 409].includes(s))).toEqual([]);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(statuses.length / 2);
  });

  it('counts downloads of a file while its owner renames it, without a 500', async () => {
    const member = await createMember();
    const uploaded = await uploadFile(member.client, 'popular.txt', 'popular bytes', { fields: { visibility: 'PUBLIC' } });
    expect(uploaded.status).toBe(200);
    const download = new URL(uploaded.body.data.downloadUrl as string);
    const id = download.pathname.split('/').at(-2)!;
    const statuses: number[] = [];
    for (let round = 0; round < 10; round++) {
      const requests: Array<Promise<{ status: number }>> = [];
      for (let i = 0; i < 6; i++) requests.push(fetch(server.baseUrl + download.pathname).then(async (r) => (await r.arrayBuffer(), { status: r.status })));
      for (let i = 0; i < 3; i++) requests.push(member.client.patch(`/api/files/${id}`, { name: `popular-${round}-${i}.txt` }));
      statuses.push(...(await Promise.all(requests)).map((r) => r.status));
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  });
});

describe('caps per account', () => {
  it('refuses a tag, folder or upload profile beyond the most an account may have, naming the cap; deleting one makes room', async () => {
    const member = await createMember();
    const now = Date.now();
    // Made through the database up to one short of each cap: a thousand requests would take the test's time.
    const rows = (count: number, make: (i: number) => Record<string, unknown>) => Array.from({ length: count }, (_, i) => ({ id: newId(), userId: member.id, ...make(i) }));
    await server.ctx.db.insertInto('tags').values(rows(999, (i) => ({ name: `tag ${i}`, createdAt: now })) as never).execute();
    await server.ctx.db.insertInto('folders').values(rows(999, (i) => ({ name: `folder ${i}`, parentId: null, createdAt: now, updatedAt: now })) as never).execute();
    await server.ctx.db.insertInto('uploadProfiles').values(rows(99, (i) => ({ name: `profile ${i}`, options: '{}', createdAt: now, updatedAt: now })) as never).execute();

    const last = await Promise.all([member.client.post('/api/tags', { name: 'the last tag' }), member.client.post('/api/folders', { name: 'the last folder' }), member.client.post('/api/upload-profiles', { name: 'the last profile', options: {} })]);
    expect(last.map((r) => r.status)).toEqual([201, 201, 201]);
    const beyond = await Promise.all([member.client.post('/api/tags', { name: 'one more' }), member.client.post('/api/folders', { name: 'one more' }), member.client.post('/api/upload-profiles', { name: 'one more', options: {} })]);
    expect(beyond.map((r) => [r.status, r.body.error])).toEqual([
      [409, 'An account can have at most 1000 tags; delete one first'],
      [409, 'An account can have at most 1000 folders; delete one first'],
      [409, 'An account can have at most 100 upload profiles; delete one first'],
    ]);
    // Another account is not held by this one's.
    expect((await other.client.post('/api/tags', { name: `free ${Date.now()}` })).status).toBe(201);
    // Renaming is not creating.
    expect((await member.client.patch(`/api/tags/${last[0].body.data.tag.id}`, { name: 'renamed last tag' })).status).toBe(200);
    expect((await member.client.delete(`/api/tags/${last[0].body.data.tag.id}`)).status).toBe(204);
    expect((await member.client.post('/api/tags', { name: 'room again' })).status).toBe(201);
  });
});
