import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { serverProcess } from '../support/server-process.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { createToken, uploadFile, type UploadOptions } from '../support/uploads.ts';
import { providers, storageUnderTest, type StorageUnderTest } from '../support/stored-objects.ts';
import { withoutEveryonePermission } from '../support/roles.ts';
import { lockAccountRow } from '../../src/db/locks.ts';
import { fileExpiryHandler } from '../../src/files/expire-file.ts';

/**
 * A file's life after upload: management (PATCH, DELETE), expiry actions applied by the job queue,
 * atomic and durable uploads, and the size limit and quotas, on both storage providers.
 */
const MiB = 1024 * 1024;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const FORBIDDEN = { success: false, error: 'You do not have permission to perform this action.' };

describe.each(providers)('file lifecycle on %s storage', (provider) => {
  let storage: StorageUnderTest;
  let server: TestServer;
  let admin: Awaited<ReturnType<typeof signUp>>;
  let everyone: { id: string; permissions: string[] };

  beforeAll(async () => {
    storage = await storageUnderTest(provider);
    server = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0' });
    admin = await signUp(server.baseUrl);
    await admin.patch('/api/settings', { registration: 'open' });
    everyone = (await admin.get('/api/roles')).body.data.roles.find((r: { systemKey: string }) => r.systemKey === 'everyone');
  });
  afterAll(async () => {
    await server?.close();
    await storage?.stop();
  });

  /** An account made by the administrator, signed in with its own browser session. */
  async function createMember(roleIds: string[] = []) {
    const email = uniqueEmail('member');
    const created = await admin.post('/api/users', { email, password: 'member password', roleIds });
    expect(created.status).toBe(201);
    const client = new Client(server.baseUrl);
    expect((await client.post('/api/auth/login', { email, password: 'member password' })).status).toBe(200);
    return Object.assign(client, { userId: created.body.data.user.id as string });
  }

  /** Runs `work` while the Everyone role lacks `permission`; restores it afterwards. */
  const withoutPermission = <T,>(permission: string, work: () => Promise<T>) => withoutEveryonePermission(admin, everyone, permission, work);

  async function upload(client: Client, name: string, content: string | Uint8Array, options: UploadOptions = {}, on: TestServer = server) {
    const response = await uploadFile(client, name, content, options);
    expect(response.status, response.text).toBe(200);
    const links = response.body.data;
    const local = (url: string) => url.slice(on.baseUrl.length);
    return { links, id: links.downloadUrl.split('/').at(-2) as string, page: local(links.pageUrl), raw: local(links.rawUrl) };
  }

  const fileRow = (id: string, on: TestServer = server) => on.ctx.db.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirst();
  const usedBytes = async (userId: string, on: TestServer = server) =>
    (await on.ctx.db.selectFrom('users').select('usedBytes').where('id', '=', userId).executeTakeFirstOrThrow()).usedBytes;
  const filesOf = (userId: string, on: TestServer = server) => on.ctx.db.selectFrom('files').select(['id', 'name']).where('userId', '=', userId).execute();
  const storedKeysOf = (userId: string, on: TestServer = server) => storage.keys(on.dataDir, `files/${userId}/`);
  const storageKeyOf = async (id: string) => (await fileRow(id))!.storageKey;

  describe('PATCH /api/files/{id}', () => {
    it('renames and changes visibility, password, expiry, folder and tags, answering the file record', async () => {
      const member = await createMember();
      const file = await upload(member, 'draft.txt', 'draft text');
      const folder = (await member.post('/api/folders', { name: 'Reports' })).body.data.folder;
      const tag = (await member.post('/api/tags', { name: 'work' })).body.data.tag;
      const urlId = (await member.get('/api/auth/me')).body.data.user.urlId;
      const expiresAt = new Date(Date.now() + 86_400_000).toISOString();

      const response = await member.patch(`/api/files/${file.id}`, {
        name: 'final report?.txt',
        visibility: 'PRIVATE',
        password: 'hunter22',
        expiresAt,
        expiryAction: 'SET_PRIVATE',
        folderId: folder.id,
        tagIds: [tag.id],
      });
      expect(response.status).toBe(200);
      expect(response.body.success).toBe(true);
      expect(response.body.data.file).toEqual({
        id: file.id,
        name: 'final_report.txt',
        urlPath: `/${urlId}/final_report.txt`,
        mimeType: 'text/plain',
        size: 10 / MiB,
        uploadedAt: expect.any(String),
        visibility: 'PRIVATE',
        views: 0,
        downloads: 0,
        folderId: folder.id,
        user: { urlId },
        tags: [{ id: tag.id, name: 'work' }],
        hasPassword: true,
        thumbnailUrl: null,
        thumbnailStatus: 'unsupported',
        ocrStatus: 'unsupported',
        expiresAt,
        expiryAction: 'SET_PRIVATE',
      });
      const job = await server.ctx.db.selectFrom('jobs').select('runAt').where('dedupeKey', '=', `file-expiry:${file.id}`).executeTakeFirst();
      expect(job?.runAt).toBe(Date.parse(expiresAt));

      // The old URL is gone, the new one serves the file (to its owner: it is private now).
      expect((await member.get(file.raw)).status).toBe(404);
      expect((await member.get(`/api/files/${urlId}/final_report.txt`)).text).toBe('draft text');

      // A name must keep something of itself: blank, or only characters a file name drops, is a 400.
      for (const name of ['   ', '???', '..']) {
        const refused = await member.patch(`/api/files/${file.id}`, { name });
        expect(refused.status, name).toBe(400);
        expect(refused.body.error).toMatch(/^name: /);
      }
      expect((await member.get(`/api/files/${urlId}/final_report.txt`)).status).toBe(200);

      const cleared = await member.patch(`/api/files/${file.id}`, { password: null, expiresAt: null, folderId: null, tagIds: [], visibility: 'PUBLIC' });
      expect(cleared.body.data.file).toMatchObject({ hasPassword: false, expiresAt: null, expiryAction: null, folderId: null, tags: [], visibility: 'PUBLIC' });
      expect(await server.ctx.db.selectFrom('jobs').select('id').where('dedupeKey', '=', `file-expiry:${file.id}`).executeTakeFirst()).toBeUndefined();
      expect((await new Client(server.baseUrl).get(`/api/files/${urlId}/final_report.txt`)).text).toBe('draft text');
    });

    it('refuses a name another file of the account has with 409, and bad values with 400', async () => {
      const member = await createMember();
      const first = await upload(member, 'one.txt', '1');
      await upload(member, 'two.txt', '2');
      const clash = await member.patch(`/api/files/${first.id}`, { name: 'two.txt' });
      expect(clash.status).toBe(409);
      expect(clash.body).toEqual({ success: false, error: expect.stringMatching(/two\.txt/) });
      expect((await fileRow(first.id))!.name).toBe('one.txt');
      // Keeping its own name is not a clash; another account's file of that name is no clash either.
      expect((await member.patch(`/api/files/${first.id}`, { name: 'one.txt' })).status).toBe(200);
      const other = await createMember();
      await upload(other, 'three.txt', '3');
      expect((await member.patch(`/api/files/${first.id}`, { name: 'three.txt' })).status).toBe(200);

      for (const body of [{ expiresAt: '2001-01-01T00:00:00Z' }, { expiresAt: 'tomorrow' }, { visibility: 'SECRET' }, { size: 1 }, { name: '' }, { expiryAction: 'DELETE' }]) {
        const response = await member.patch(`/api/files/${first.id}`, body);
        expect(response.status, JSON.stringify(body)).toBe(400);
      }
    });

    it('answers 409, never 500, to renames racing each other and an upload to the same name', async () => {
      const member = await createMember();
      for (let round = 0; round < 8; round++) {
        const a = await upload(member, `mover-a-${round}.txt`, 'a');
        const b = await upload(member, `mover-b-${round}.txt`, 'b');
        const target = `race-${round}.txt`;
        const [renameA, renameB, uploaded] = await Promise.all([
          member.patch(`/api/files/${a.id}`, { name: target }),
          member.patch(`/api/files/${b.id}`, { name: target }),
          uploadFile(member, target, 'uploaded'),
        ]);
        expect(uploaded.status, uploaded.text).toBe(200);
        for (const rename of [renameA, renameB]) {
          expect([200, 409], rename.text).toContain(rename.status);
          if (rename.status === 409) expect(rename.body).toEqual({ success: false, error: `A file named ${target} already exists` });
        }
        // One file has the name: a rename that won it, or else the upload; the upload otherwise got the next free name.
        const winners = [renameA, renameB].filter((r) => r.status === 200);
        expect(winners.length).toBeLessThanOrEqual(1);
        const named = await server.ctx.db.selectFrom('files').select(['id', 'name']).where('userId', '=', member.userId).where('name', '=', target).execute();
        expect(named).toHaveLength(1);
        if (winners.length === 0) expect(uploaded.body.data.name).toBe(target);
        else expect(named[0]!.id).toBe(winners[0]!.body.data.file.id);
      }
    });

    it('is a 404 for another account’s file or a missing one', async () => {
      const owner = await createMember();
      const stranger = await createMember();
      const file = await upload(owner, 'mine.txt', 'mine');
      const response = await stranger.patch(`/api/files/${file.id}`, { name: 'stolen.txt', visibility: 'PRIVATE' });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ success: false, error: 'File not found' });
      expect((await stranger.patch('/api/files/nosuchfile', {})).status).toBe(404);
      // An administrator's session does not reach into other accounts' files either.
      expect((await admin.patch(`/api/files/${file.id}`, { name: 'admin.txt' })).status).toBe(404);
      expect(await fileRow(file.id)).toMatchObject({ name: 'mine.txt', visibility: 'PUBLIC' });
    });

    it('takes a browser session only: named tokens and the legacy credential get 401', async () => {
      const member = await createMember();
      const file = await upload(member, 'token.txt', 'x');
      const token = await createToken(member, ['files:read', 'files:upload', 'urls:read', 'urls:write']);
      const legacy = (await member.get('/api/profile/upload-token')).body.data.uploadToken;
      const script = new Client(server.baseUrl);
      for (const credential of [token, legacy]) {
        const patch = await script.patch(`/api/files/${file.id}`, { name: 'renamed.txt' }, { token: credential });
        expect(patch.status).toBe(401);
        expect(patch.body).toEqual({ success: false, error: 'Unauthorized' });
        expect((await script.delete(`/api/files/${file.id}`, { token: credential })).status).toBe(401);
        // The owner's cookies alongside the token add nothing.
        const withCookies = new Client(server.baseUrl);
        withCookies.cookies = new Map(member.cookies);
        expect((await withCookies.delete(`/api/files/${file.id}`, { token: credential })).status).toBe(401);
      }
      expect(await fileRow(file.id)).toMatchObject({ name: 'token.txt' });
    });

    describe('permissions', () => {
      const future = () => new Date(Date.now() + 86_400_000).toISOString();

      it('needs files.update for any change', async () => {
        const member = await createMember();
        const file = await upload(member, 'a.txt', 'a');
        await withoutPermission('files.update', async () => {
          for (const body of [{}, { name: 'b.txt' }, { visibility: 'PRIVATE' }]) {
            const response = await member.patch(`/api/files/${file.id}`, body);
            expect(response.status, JSON.stringify(body)).toBe(403);
            expect(response.body).toEqual(FORBIDDEN);
          }
        });
        expect(await fileRow(file.id)).toMatchObject({ name: 'a.txt', visibility: 'PUBLIC' });
      });

      it('needs files.share for visibility, password and a SET_PRIVATE expiry', async () => {
        const member = await createMember();
        const file = await upload(member, 'a.txt', 'a', { fields: { password: 'first password' } });
        await withoutPermission('files.share', async () => {
          for (const body of [
            { visibility: 'PRIVATE' },
            { visibility: 'PUBLIC' },
            { password: 'another password' },
            { password: null },
            { expiresAt: future(), expiryAction: 'SET_PRIVATE' },
          ]) {
            const response = await member.patch(`/api/files/${file.id}`, body);
            expect(response.status, JSON.stringify(body)).toBe(403);
            expect(response.body).toEqual(FORBIDDEN);
          }
          const row = await fileRow(file.id);
          expect(row).toMatchObject({ visibility: 'PUBLIC', expiresAt: null });
          expect(row!.passwordHash).not.toBeNull();
          // What does not need files.share still works.
          expect((await member.patch(`/api/files/${file.id}`, { name: 'renamed.txt' })).status).toBe(200);
          const deleteExpiry = await member.patch(`/api/files/${file.id}`, { expiresAt: future(), expiryAction: 'DELETE' });
          expect(deleteExpiry.status).toBe(200);
          expect(deleteExpiry.body.data.file.expiresAt).not.toBeNull();
          // Now that it has a DELETE expiry, switching the action to SET_PRIVATE still needs files.share.
          expect((await member.patch(`/api/files/${file.id}`, { expiryAction: 'SET_PRIVATE' })).status).toBe(403);
        });
        expect((await fileRow(file.id))!.expiryAction).toBe('DELETE');
      });

      it('needs files.delete for a DELETE expiry (and for deleting)', async () => {
        const member = await createMember();
        const file = await upload(member, 'a.txt', 'a');
        await withoutPermission('files.delete', async () => {
          for (const body of [{ expiresAt: future(), expiryAction: 'DELETE' }, { expiresAt: future() }]) {
            const response = await member.patch(`/api/files/${file.id}`, body);
            expect(response.status, JSON.stringify(body)).toBe(403);
            expect(response.body).toEqual(FORBIDDEN);
          }
          expect((await fileRow(file.id))!.expiresAt).toBeNull();
          const deletion = await member.delete(`/api/files/${file.id}`);
          expect(deletion.status).toBe(403);
          expect(deletion.body).toEqual(FORBIDDEN);
          const setPrivate = await member.patch(`/api/files/${file.id}`, { expiresAt: future(), expiryAction: 'SET_PRIVATE' });
          expect(setPrivate.status).toBe(200);
          expect((await member.patch(`/api/files/${file.id}`, { expiryAction: 'DELETE' })).status).toBe(403);
        });
        expect(await fileRow(file.id)).toMatchObject({ expiryAction: 'SET_PRIVATE' });
      });

      it('needs folders.manage for the folder and tags.manage for tags', async () => {
        const member = await createMember();
        const file = await upload(member, 'a.txt', 'a');
        const folder = (await member.post('/api/folders', { name: 'Box' })).body.data.folder;
        const tag = (await member.post('/api/tags', { name: 'label' })).body.data.tag;
        await withoutPermission('folders.manage', async () => {
          for (const folderId of [folder.id, null]) {
            const response = await member.patch(`/api/files/${file.id}`, { folderId });
            expect(response.status).toBe(403);
            expect(response.body).toEqual(FORBIDDEN);
          }
          expect((await member.patch(`/api/files/${file.id}`, { tagIds: [tag.id] })).status).toBe(200);
        });
        await withoutPermission('tags.manage', async () => {
          for (const tagIds of [[tag.id], []]) {
            const response = await member.patch(`/api/files/${file.id}`, { tagIds });
            expect(response.status).toBe(403);
            expect(response.body).toEqual(FORBIDDEN);
          }
          expect((await member.patch(`/api/files/${file.id}`, { folderId: folder.id })).status).toBe(200);
        });
        const record = (await member.patch(`/api/files/${file.id}`, {})).body.data.file;
        expect(record).toMatchObject({ folderId: folder.id, tags: [{ id: tag.id, name: 'label' }] });
        // Another account's folder or tag is not found.
        const other = await createMember();
        const foreignFolder = (await other.post('/api/folders', { name: 'Theirs' })).body.data.folder;
        const foreignTag = (await other.post('/api/tags', { name: 'theirs' })).body.data.tag;
        expect((await member.patch(`/api/files/${file.id}`, { folderId: foreignFolder.id })).status).toBe(404);
        expect((await member.patch(`/api/files/${file.id}`, { tagIds: [foreignTag.id] })).status).toBe(400);
      });
    });
  });

  describe('DELETE /api/files/{id}', () => {
    it('removes the record and the bytes and gives back the quota charge', async () => {
      const member = await createMember();
      const kept = await upload(member, 'kept.txt', 'kept bytes');
      const doomed = await upload(member, 'doomed.bin', randomBytes(3000), { type: 'application/octet-stream' });
      const key = await storageKeyOf(doomed.id);
      expect(await server.ctx.storage.stat(key)).toEqual({ size: 3000 });
      expect(await usedBytes(member.userId)).toBe(3010);

      const response = await member.delete(`/api/files/${doomed.id}`);
      expect(response.status).toBe(204);
      expect(response.text).toBe('');

      expect(await fileRow(doomed.id)).toBeUndefined();
      expect(await usedBytes(member.userId)).toBe(10);
      expect(await server.ctx.storage.stat(key)).toBeNull();
      if (provider === 'local') expect(fs.existsSync(path.join(server.dataDir, 'files', key))).toBe(false);
      expect(await storedKeysOf(member.userId)).toEqual([await storageKeyOf(kept.id)]);

      const again = await member.delete(`/api/files/${doomed.id}`);
      expect(again.status).toBe(404);
      expect(again.body).toEqual({ success: false, error: 'File not found' });
      expect((await member.patch(`/api/files/${doomed.id}`, {})).status).toBe(404);
      expect((await member.get(doomed.raw)).status).toBe(404);
      expect((await member.get(doomed.page)).status).toBe(404);
      expect((await member.get(`/api/files/${doomed.id}/download`)).status).toBe(404);
      expect((await member.get(kept.raw)).text).toBe('kept bytes');
    });

    it('is a 404 for another account’s file, which stays intact', async () => {
      const owner = await createMember();
      const stranger = await createMember();
      const file = await upload(owner, 'precious.txt', 'precious');
      expect((await stranger.delete(`/api/files/${file.id}`)).status).toBe(404);
      expect((await admin.delete(`/api/files/${file.id}`)).status).toBe(404);
      expect((await stranger.delete('/api/files/nosuchfile')).status).toBe(404);
      expect(await fileRow(file.id)).toBeDefined();
      expect(await usedBytes(owner.userId)).toBe(8);
      expect((await new Client(server.baseUrl).get(file.raw)).text).toBe('precious');
    });
  });

  describe('expiry actions', () => {
    /** Waits (the runner polls every 500 ms) until `check` passes. */
    const eventually = (check: () => Promise<void>, timeout = 10_000) => vi.waitFor(check, { timeout, interval: 100 });
    const soon = (ms: number) => new Date(Date.now() + ms).toISOString();

    it('deletes one file and makes another private when their time comes', async () => {
      const member = await createMember();
      await upload(member, 'kept.txt', 'kept');
      const expiresAt = soon(1500);
      const doomed = await upload(member, 'doomed.txt', 'doomed bytes', { fields: { expiresAt, expiryAction: 'DELETE' } });
      const fading = await upload(member, 'fading.txt', 'fading', { fields: { expiresAt, expiryAction: 'SET_PRIVATE' } });
      // Cleared before its time: it is never applied.
      const reprieved = await upload(member, 'reprieved.txt', 'reprieved', { fields: { expiresAt, expiryAction: 'DELETE' } });
      expect((await member.patch(`/api/files/${reprieved.id}`, { expiresAt: null })).status).toBe(200);
      // Set afterwards through PATCH.
      const patched = await upload(member, 'patched.txt', 'patched');
      expect((await member.patch(`/api/files/${patched.id}`, { expiresAt, expiryAction: 'DELETE' })).status).toBe(200);
      const doomedKey = await storageKeyOf(doomed.id);
      const patchedKey = await storageKeyOf(patched.id);
      expect(await usedBytes(member.userId)).toBe(4 + 12 + 6 + 9 + 7);

      await sleep(Date.parse(expiresAt) - Date.now() + 50);
      await server.jobs.runDueJobs();
      await eventually(async () => {
        expect(await fileRow(doomed.id)).toBeUndefined();
        expect(await fileRow(patched.id)).toBeUndefined();
        expect(await fileRow(fading.id)).toMatchObject({ visibility: 'PRIVATE', expiresAt: null, expiryAction: null });
        // The bytes go right after the record is committed away.
        expect(await server.ctx.storage.stat(doomedKey)).toBeNull();
        expect(await server.ctx.storage.stat(patchedKey)).toBeNull();
      });
      expect(await usedBytes(member.userId)).toBe(4 + 6 + 9);
      expect((await filesOf(member.userId)).map((f) => f.name).sort()).toEqual(['fading.txt', 'kept.txt', 'reprieved.txt']);
      expect((await member.patch(`/api/files/${fading.id}`, {})).body.data.file).toMatchObject({ visibility: 'PRIVATE', expiresAt: null });
      expect((await new Client(server.baseUrl).get(fading.raw)).status).toBe(404);
      expect((await member.get(fading.raw)).text).toBe('fading');
      expect(await fileRow(reprieved.id)).toMatchObject({ visibility: 'PUBLIC', expiresAt: null });
    });

    it('deletes a file only if it still expires when the deletion holds the lock: an expiry moved meanwhile wins', async () => {
      const member = await createMember();
      const file = await upload(member, 'extended.txt', 'extended', { fields: { expiresAt: soon(3_600_000), expiryAction: 'DELETE' } });
      // Its time has come, as the expiry job reads it.
      await server.ctx.db.updateTable('files').set({ expiresAt: Date.now() - 1000 }).where('id', '=', file.id).execute();
      const later = Date.now() + 3_600_000;
      // The owner's change holds the account's lock while the job runs: on PostgreSQL the job reads
      // the file as expired before the change commits, and waits for the lock to delete it.
      let running: Promise<unknown> = Promise.resolve();
      await server.ctx.db.transaction().execute(async (trx) => {
        await lockAccountRow(trx, server.ctx.dialect, member.userId);
        running = fileExpiryHandler(server.ctx)({ id: 'test', type: 'file.expiry', payload: { fileId: file.id }, attempts: 1 } as never);
        running.catch(() => undefined);
        await sleep(300);
        await trx.updateTable('files').set({ expiresAt: later }).where('id', '=', file.id).execute();
      });
      await running;
      expect(await fileRow(file.id)).toMatchObject({ expiresAt: later, expiryAction: 'DELETE' });
      expect((await member.get(file.raw)).text).toBe('extended');
    });

    it('applies after a restart: the job outlives the process that scheduled it', async () => {
      const first = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0' });
      let second: TestServer | undefined;
      try {
        const owner = await signUp(first.baseUrl);
        const expiresAt = soon(1500);
        const doomed = await upload(owner, 'doomed.txt', 'doomed', { fields: { expiresAt, expiryAction: 'DELETE' } }, first);
        const fading = await upload(owner, 'fading.txt', 'fading!', { fields: { expiresAt, expiryAction: 'SET_PRIVATE' } }, first);
        const doomedKey = (await fileRow(doomed.id, first))!.storageKey;
        await first.close();
        expect(Date.now()).toBeLessThan(Date.parse(expiresAt));

        second = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0' }, { databaseUrl: first.databaseUrl, dataDir: first.dataDir });
        const on = second;
        await eventually(async () => {
          expect(await fileRow(doomed.id, on)).toBeUndefined();
          expect(await fileRow(fading.id, on)).toMatchObject({ visibility: 'PRIVATE', expiresAt: null });
          // The bytes go right after the record is committed away.
          expect(await on.ctx.storage.stat(doomedKey)).toBeNull();
        });
        expect(await usedBytes(owner.userId, on)).toBe(7);
      } finally {
        await second?.close();
      }
    });

    it('is applied exactly once by two processes sharing the database', async () => {
      const a = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0' });
      const b = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0' }, { databaseUrl: a.databaseUrl, dataDir: a.dataDir });
      try {
        // Every byte deletion either process makes, by key.
        const deletions: string[] = [];
        for (const running of [a, b]) {
          const original = running.ctx.storage.delete.bind(running.ctx.storage);
          running.ctx.storage.delete = async (key: string) => {
            deletions.push(key);
            return original(key);
          };
        }
        const owner = await signUp(a.baseUrl);
        const kept = await upload(owner, 'kept.txt', 'k'.repeat(100), {}, a);
        // Far enough ahead for the nine uploads below on a busy machine (an expiry in the past is a 400).
        const expiresAt = soon(4000);
        const doomed: Array<{ id: string }> = [];
        for (let i = 0; i < 6; i++) doomed.push(await upload(owner, `doomed-${i}.txt`, 'd'.repeat(1000 + i), { fields: { expiresAt, expiryAction: 'DELETE' } }, a));
        const fading: Array<{ id: string }> = [];
        for (let i = 0; i < 3; i++) fading.push(await upload(owner, `fading-${i}.txt`, 'f'.repeat(10), { fields: { expiresAt, expiryAction: 'SET_PRIVATE' } }, b));
        const doomedKeys = await Promise.all(doomed.map(async (file) => (await fileRow(file.id, a))!.storageKey));
        expect(await usedBytes(owner.userId, a)).toBe(100 + 6 * 1000 + 15 + 30);

        await eventually(async () => {
          expect((await filesOf(owner.userId, a)).map((f) => f.name).sort()).toEqual(['fading-0.txt', 'fading-1.txt', 'fading-2.txt', 'kept.txt']);
          for (const file of fading) expect(await fileRow(file.id, b)).toMatchObject({ visibility: 'PRIVATE', expiresAt: null });
        });
        // Give a second application the chance to happen, were it possible.
        await sleep(1200);
        expect(await usedBytes(owner.userId, b)).toBe(100 + 30);
        expect(deletions.sort()).toEqual([...doomedKeys].sort());
        expect(await storage.keys(a.dataDir, `files/${owner.userId}/`)).toHaveLength(4);
        expect(await a.ctx.db.selectFrom('jobs').select('id').where('type', '=', 'file.expire').execute()).toEqual([]);
        expect((await new Client(a.baseUrl).get(kept.raw)).text).toBe('k'.repeat(100));
      } finally {
        await b.close();
        await a.close();
      }
    });
  });

  describe('atomic and durable uploads', () => {
    const boundary = 'hoardtestboundary';
    const head = (token: string, contentLength: number) =>
      `POST /api/files HTTP/1.1\r\nHost: ${new URL(server.baseUrl).host}\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${contentLength}\r\n\r\n`;
    const preamble = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    const epilogue = `\r\n--${boundary}--\r\n`;
    const chunk = Buffer.alloc(64 * 1024, 0x61);

    function connect(): Promise<net.Socket> {
      const { hostname, port } = new URL(server.baseUrl);
      return new Promise((resolve, reject) => {
        const socket = net.connect(Number(port), hostname, () => resolve(socket));
        socket.once('error', reject);
      });
    }
    const write = (socket: net.Socket, data: string | Buffer) =>
      new Promise<void>((resolve, reject) => socket.write(data, (error) => (error ? reject(error) : resolve())));

    /** Sends `sent` bytes of a `declared`-byte file, waits until the server is storing them, then hangs up. */
    async function abandonUpload(token: string, declared: number, sent: number, storing: () => Promise<boolean>) {
      const socket = await connect();
      socket.on('error', () => undefined);
      await write(socket, head(token, preamble.length + declared + epilogue.length) + preamble);
      for (let written = 0; written < sent; written += chunk.length) await write(socket, chunk);
      await vi.waitFor(async () => expect(await storing()).toBe(true), { timeout: 10_000, interval: 20 });
      socket.destroy();
    }

    async function expectNothingLeft(userId: string) {
      await vi.waitFor(
        async () => {
          expect(await filesOf(userId)).toEqual([]);
          expect(await usedBytes(userId)).toBe(0);
          expect(await storedKeysOf(userId)).toEqual([]);
          expect(await storage.leftovers(server.dataDir)).toEqual([]);
        },
        { timeout: 10_000, interval: 100 },
      );
    }

    it.each([
      ['1 MiB into a 5 MiB file', 5 * MiB, 1 * MiB],
      ['12 MiB into a 20 MiB file (past the S3 part size)', 20 * MiB, 12 * MiB],
    ])('leaves no record, bytes or quota charge when the client hangs up %s', async (_label, declared, sent) => {
      const member = await createMember();
      const token = await createToken(member, ['files:upload']);
      const keyPrefix = `storage-cleanup:files/${member.userId}/`;
      const storing = async () => {
        // The upload has started storing: its crash safety net is scheduled …
        const scheduled = await server.ctx.db.selectFrom('jobs').select('id').where('dedupeKey', 'like', `${keyPrefix}%`).executeTakeFirst();
        if (!scheduled) return false;
        // … and, where the provider shows it, the bytes are on their way.
        if (provider === 'local' || declared > 5 * MiB) return (await storage.leftovers(server.dataDir)).length > 0;
        return true;
      };
      await abandonUpload(token, declared, sent, storing);
      await expectNothingLeft(member.userId);
      // The account is not stuck: the next upload works and is charged exactly.
      expect((await uploadFile(new Client(server.baseUrl), 'after.txt', 'after', { token })).status).toBe(200);
      expect(await usedBytes(member.userId)).toBe(5);
    });

    it('has the bytes readable as soon as the upload answers', async () => {
      const member = await createMember();
      const content = randomBytes(2 * MiB + 123);
      for (let i = 0; i < 3; i++) {
        const file = await upload(member, `durable-${i}.bin`, content, { type: 'application/octet-stream' });
        const raw = await fetch(server.baseUrl + file.raw);
        expect(raw.status).toBe(200);
        expect(Buffer.from(await raw.arrayBuffer()).equals(content)).toBe(true);
      }
    });

    it('keeps a committed upload when the process is killed right after answering', async () => {
      const child = await serverProcess({ ...storage.env }, 'hoard-child-');
      try {
        await child.start();
        const owner = await signUp(child.baseUrl);
        const content = randomBytes(MiB + 7);
        const response = await uploadFile(owner, 'survivor.bin', content, { type: 'application/octet-stream' });
        await child.kill();
        expect(response.status).toBe(200);

        await child.start();
        const raw = await fetch(response.body.data.rawUrl);
        expect(raw.status).toBe(200);
        expect(Buffer.from(await raw.arrayBuffer()).equals(content)).toBe(true);
        expect((await owner.get(new URL(response.body.data.pageUrl).pathname)).status).toBe(200);
        const download = await owner.get(new URL(response.body.data.downloadUrl).pathname, { headers: { range: 'bytes=0-9' } });
        expect(download.status).toBe(206);
      } finally {
        child.stop();
      }
    });
  });

  describe('shutting down', () => {
    it('waits for a download in progress, then does not wait for its idle keep-alive connection', async () => {
      const running = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0' });
      const socket = new net.Socket();
      try {
        const owner = await signUp(running.baseUrl);
        const content = randomBytes(16 * MiB);
        const file = await upload(owner, 'large.bin', content, { type: 'application/octet-stream' }, running);
        const { hostname, port, host } = new URL(running.baseUrl);
        await new Promise<void>((resolve, reject) => socket.connect(Number(port), hostname, resolve).once('error', reject));
        const received: Buffer[] = [];
        let receivedBytes = 0;
        let firstBytes!: () => void;
        const started = new Promise<void>((resolve) => (firstBytes = resolve));
        socket.on('data', (data) => {
          received.push(data);
          receivedBytes += data.length;
          firstBytes();
        });
        socket.write(`GET ${file.raw} HTTP/1.1\r\nHost: ${host}\r\nConnection: keep-alive\r\n\r\n`);
        await started;
        // The client reads slowly: the response is still being sent when the server is told to stop.
        socket.pause();
        let closedAt = 0;
        const closing = running.close().then(() => (closedAt = Date.now()));
        await sleep(300);
        expect(closedAt).toBe(0);
        socket.resume();
        const headerLength = received[0]!.indexOf('\r\n\r\n') + 4;
        expect(headerLength).toBeGreaterThan(4);
        const whole = await new Promise<Buffer>((resolve) => {
          const check = () => {
            if (receivedBytes - headerLength >= content.length) resolve(Buffer.concat(received));
          };
          socket.on('data', check);
          check();
        });
        const doneAt = Date.now();
        expect(whole.toString('latin1', 0, 12)).toBe('HTTP/1.1 200');
        expect(whole.subarray(whole.indexOf('\r\n\r\n') + 4).equals(content)).toBe(true);
        // The connection is idle now; the server closes it and finishes stopping at once.
        const outcome = await Promise.race([closing.then(() => 'closed'), sleep(5000).then(() => 'still waiting')]);
        expect(outcome).toBe('closed');
        expect(closedAt - doneAt).toBeLessThan(2000);
      } finally {
        socket.destroy();
      }
    });
  });

  describe('size limit and quota', () => {
    const DEFAULT_MAX = 1073741824;
    async function withSettings<T>(settings: Record<string, number>, work: () => Promise<T>): Promise<T> {
      expect((await admin.patch('/api/settings', settings)).status).toBe(200);
      try {
        return await work();
      } finally {
        expect((await admin.patch('/api/settings', { maxUploadSizeBytes: DEFAULT_MAX, defaultQuotaBytes: 0 })).status).toBe(200);
      }
    }
    const bytes = (n: number) => randomBytes(n);

    it('refuses a file over maxUploadSizeBytes with 413 while it streams, keeping nothing', async () => {
      const member = await createMember();
      const token = await createToken(member, ['files:upload']);
      await withSettings({ maxUploadSizeBytes: MiB }, async () => {
        const exact = await uploadFile(member, 'exact.bin', bytes(MiB), { type: 'application/octet-stream' });
        expect(exact.status).toBe(200);
        expect((await member.delete(`/api/files/${exact.body.data.downloadUrl.split('/').at(-2)}`)).status).toBe(204);

        const over = await uploadFile(member, 'over.bin', bytes(MiB + 1), { type: 'application/octet-stream' });
        expect(over.status).toBe(413);
        expect(over.body).toEqual({ error: `The file exceeds the maximum upload size of 1 MiB` });

        const huge = await rawStreamUntilAnswered(server.baseUrl, token, 20 * MiB);
        expect(huge.status).toBe(413);
        // Refused once the limit was passed, not after the whole body arrived.
        expect(huge.sentBeforeAnswer).toBeGreaterThan(0);
        expect(huge.sentBeforeAnswer).toBeLessThan(12 * MiB);

        // A client that keeps sending after the answer has the rest read and discarded (neither
        // stored nor left stalled), and its connection then serves the next request.
        const finished = await rawStreamUntilAnswered(server.baseUrl, token, 8 * MiB, { thenFinish: true });
        expect(finished.status).toBe(413);
        expect(finished.nextStatus).toBe(200);
        await vi.waitFor(async () => {
          expect(await filesOf(member.userId)).toEqual([]);
          expect(await usedBytes(member.userId)).toBe(0);
          expect(await storedKeysOf(member.userId)).toEqual([]);
          expect(await storage.leftovers(server.dataDir)).toEqual([]);
        });
      });
    });

    it('refuses an upload over the account quota with 413 and removes its bytes', async () => {
      const member = await createMember();
      expect((await admin.patch(`/api/users/${member.userId}`, { quotaBytes: 1000 })).status).toBe(200);
      const tooBig = await uploadFile(member, 'big.bin', bytes(1001), { type: 'application/octet-stream' });
      expect(tooBig.status).toBe(413);
      expect(tooBig.body.error).toMatch(/quota/);
      expect((await uploadFile(member, 'first.bin', bytes(600), { type: 'application/octet-stream' })).status).toBe(200);
      const second = await uploadFile(member, 'second.bin', bytes(600), { type: 'application/octet-stream' });
      expect(second.status).toBe(413);
      expect(second.body).toEqual({ error: 'The upload exceeds your storage quota (400 bytes left)' });
      expect((await uploadFile(member, 'fits.bin', bytes(400), { type: 'application/octet-stream' })).status).toBe(200);
      expect((await uploadFile(member, 'one-more.bin', bytes(1), { type: 'application/octet-stream' })).status).toBe(413);
      expect(await usedBytes(member.userId)).toBe(1000);
      expect((await filesOf(member.userId)).map((f) => f.name).sort()).toEqual(['first.bin', 'fits.bin']);
      expect(await storedKeysOf(member.userId)).toHaveLength(2);
      expect(await storage.leftovers(server.dataDir)).toEqual([]);
    });

    it('charges concurrent uploads one at a time: the quota is never overrun', async () => {
      const member = await createMember();
      expect((await admin.patch(`/api/users/${member.userId}`, { quotaBytes: 1000 })).status).toBe(200);
      const token = await createToken(member, ['files:upload']);
      const script = new Client(server.baseUrl);
      const results = await Promise.all(
        Array.from({ length: 5 }, (_, i) => uploadFile(script, `racer-${i}.bin`, bytes(600), { type: 'application/octet-stream', token })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 413, 413, 413, 413]);
      expect(await usedBytes(member.userId)).toBe(600);
      expect(await filesOf(member.userId)).toHaveLength(1);
      // The refused ones' bytes were stored while streaming and are removed again.
      await vi.waitFor(async () => expect(await storedKeysOf(member.userId)).toHaveLength(1));
      expect(await storage.leftovers(server.dataDir)).toEqual([]);
    });

    it('exempts Administrators and quotas.bypass from the default quota only', async () => {
      const bypassRole = (await admin.post('/api/roles', { name: `Quota exempt ${provider}`, permissions: ['quotas.bypass'] })).body.data.role;
      const exempt = await createMember([bypassRole.id]);
      const plain = await createMember();
      const upload1500 = (client: Client) => uploadFile(client, 'fifteen-hundred.bin', bytes(1500), { type: 'application/octet-stream' });
      const adminUsed = await usedBytes(admin.userId);

      await withSettings({ defaultQuotaBytes: 1000 }, async () => {
        const refused = await upload1500(plain);
        expect(refused.status).toBe(413);
        expect(refused.body.error).toMatch(/quota/);
        expect((await upload1500(admin)).status).toBe(200);
        expect((await upload1500(exempt)).status).toBe(200);
        expect((await plain.get('/api/account')).body.data.account.quotaBytes).toBe(1000);
        expect((await exempt.get('/api/account')).body.data.account.quotaBytes).toBeNull();
      });

      // Not from the file-size limit …
      await withSettings({ defaultQuotaBytes: 1000, maxUploadSizeBytes: 1200 }, async () => {
        for (const client of [admin, exempt]) {
          const response = await upload1500(client);
          expect(response.status).toBe(413);
          expect(response.body.error).toMatch(/maximum upload size/);
        }
      });

      // … nor from a quota set on their own account.
      expect((await admin.patch(`/api/users/${exempt.userId}`, { quotaBytes: 2000 })).status).toBe(200);
      expect((await admin.patch(`/api/users/${admin.userId}`, { quotaBytes: (await usedBytes(admin.userId)) + 500 })).status).toBe(200);
      try {
        for (const client of [admin, exempt]) {
          const response = await upload1500(client);
          expect(response.status).toBe(413);
          expect(response.body.error).toMatch(/quota \(500 bytes left\)/);
        }
      } finally {
        expect((await admin.patch(`/api/users/${admin.userId}`, { quotaBytes: null })).status).toBe(200);
      }
      expect(await usedBytes(exempt.userId)).toBe(1500);
      expect(await usedBytes(admin.userId)).toBe(adminUsed + 1500);
      expect(await storage.leftovers(server.dataDir)).toEqual([]);
    });

  });
});

/**
 * POST /api/files over a raw socket: streams a `declared`-byte file until the server answers, and
 * reports the status and how much had been sent by then. With `thenFinish`, it goes on to send the
 * rest of the body and a second request on the same connection, and reports that one's status.
 */
async function rawStreamUntilAnswered(
  baseUrl: string,
  token: string,
  declared: number,
  options: { thenFinish?: boolean } = {},
): Promise<{ status: number; sentBeforeAnswer: number; nextStatus?: number }> {
  const boundary = 'hoardtestboundary';
  const preamble = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const epilogue = `\r\n--${boundary}--\r\n`;
  const { hostname, port, host } = new URL(baseUrl);
  const socket = await new Promise<net.Socket>((resolve, reject) => {
    const s = net.connect(Number(port), hostname, () => resolve(s));
    s.once('error', reject);
  });
  socket.on('error', () => undefined);
  let received = '';
  let sent = 0;
  let sentBeforeAnswer = -1;
  const statuses = () => [...received.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
  let notify = () => {};
  const until = (condition: () => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (condition() || socket.destroyed) resolve();
      };
      notify = check;
      check();
    });
  socket.on('data', (data) => {
    received += data.toString('latin1');
    if (sentBeforeAnswer < 0) sentBeforeAnswer = sent;
    notify();
  });
  socket.on('close', () => notify());
  const write = (data: string | Buffer) => new Promise<void>((resolve) => socket.write(data, () => resolve()));
  const answered = until(() => received.length > 0);
  await write(
    `POST /api/files HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\n` +
      `Content-Length: ${preamble.length + declared + epilogue.length}\r\n\r\n${preamble}`,
  );
  const chunk = Buffer.alloc(64 * 1024, 0x62);
  let ended = false;
  const sendBody = async (stopWhenAnswered: boolean) => {
    while (sent < declared && !socket.destroyed && !(stopWhenAnswered && received.length > 0)) {
      const piece = chunk.subarray(0, Math.min(chunk.length, declared - sent));
      await (stopWhenAnswered ? Promise.race([write(piece), answered]) : write(piece));
      sent += piece.length;
    }
    // Once: a server slow to answer may have read the whole body, epilogue included, first.
    if (sent >= declared && !ended && !socket.destroyed) {
      ended = true;
      await write(epilogue);
    }
  };
  await sendBody(true);
  await answered;
  const result: { status: number; sentBeforeAnswer: number; nextStatus?: number } = { status: statuses()[0] ?? 0, sentBeforeAnswer };
  if (options.thenFinish) {
    const finishing = (async () => {
      await sendBody(false);
      await write(`GET /api/health HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
      await until(() => statuses().length >= 2);
    })();
    // A server that stopped reading would stall the writes for ever.
    await Promise.race([finishing, sleep(10_000)]);
    result.nextStatus = statuses()[1] ?? 0;
  }
  socket.destroy();
  return result;
}
