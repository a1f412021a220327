import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { createToken, heldUpload as heldUploadAt, PNG_1X1, uploadFile } from '../support/uploads.ts';
import { storageEnv, storageKinds } from '../support/storage-env.ts';
import { withoutEveryonePermission } from '../support/roles.ts';
import { tarBytes, zipBytes } from '../support/archives.ts';
import { gzipSync } from 'node:zlib';
import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import type { S3rverHandle } from '../support/s3rver.ts';

describe.each(storageKinds)('POST /api/files on %s storage', (kind) => {
  let server: TestServer;
  let stopStorage: () => Promise<void>;
  let admin: Awaited<ReturnType<typeof signUp>>;
  let everyone: { id: string; permissions: string[] };
  let s3: S3rverHandle | undefined;

  beforeAll(async () => {
    const storage = await storageEnv(kind);
    stopStorage = storage.stop;
    s3 = storage.s3;
    server = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0' });
    admin = await signUp(server.baseUrl);
    await admin.patch('/api/settings', { registration: 'open' });
    const roles = (await admin.get('/api/roles')).body.data.roles;
    everyone = roles.find((r: { systemKey: string }) => r.systemKey === 'everyone');
  });
  afterAll(async () => {
    await server.close();
    await stopStorage();
  });

  /** A fresh non-administrator account with a browser session. */
  const member = () => signUp(server.baseUrl, uniqueEmail('member'));
  const urlIdOf = async (client: Client) => (await client.get('/api/auth/me')).body.data.user.urlId as string;
  /** The stored record, as the owner's PATCH with no changes returns it. */
  const recordOf = async (owner: Client, downloadUrl: string) => {
    const id = downloadUrl.split('/').at(-2)!;
    const response = await owner.patch(`/api/files/${id}`, {});
    expect(response.status).toBe(200);
    return response.body.data.file;
  };
  /** The keys really stored under `prefix`, read from the disk or the bucket, not through the server. */
  const storedKeys = async (prefix: string): Promise<string[]> => {
    if (!s3) {
      const root = join(server.dataDir, 'files');
      const found: string[] = [];
      const walk = (dir: string) => {
        if (!existsSync(dir)) return;
        for (const entry of readdirSync(dir, { withFileTypes: true })) entry.isDirectory() ? walk(join(dir, entry.name)) : found.push(relative(root, join(dir, entry.name)));
      };
      walk(root);
      return found.filter((key) => key.startsWith(prefix));
    }
    const client = new S3Client({ endpoint: s3.endpoint, region: s3.region, forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    try {
      const page = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }));
      return (page.Contents ?? []).map((object) => object.Key!);
    } finally {
      client.destroy();
    }
  };
  const withoutPermission = <T,>(permission: string, work: () => Promise<T>) => withoutEveryonePermission(admin, everyone, permission, work);

  describe('the basic upload', () => {
    it('streams one file with a named token and answers the exact upload links', async () => {
      const user = await member();
      const token = await createToken(user, ['files:upload']);
      const response = await uploadFile(new Client(server.baseUrl), 'notes.txt', 'hello world', { token });
      expect(response.status).toBe(200);
      const urlId = await urlIdOf(user);
      const data = response.body.data;
      expect(response.body.success).toBe(true);
      expect(Object.keys(data).sort()).toEqual(['copyText', 'downloadUrl', 'name', 'pageUrl', 'rawUrl', 'size', 'type', 'url']);
      expect(data).toMatchObject({
        url: `${server.baseUrl}/${urlId}/notes.txt`,
        pageUrl: `${server.baseUrl}/${urlId}/notes.txt`,
        rawUrl: `${server.baseUrl}/api/files/${urlId}/notes.txt`,
        copyText: `${server.baseUrl}/${urlId}/notes.txt`,
        name: 'notes.txt',
        size: 11,
        type: 'text/plain',
      });
      expect(data.downloadUrl).toMatch(new RegExp(`^${server.baseUrl}/api/files/[a-z0-9]{20}/download$`));
      const raw = await new Client(server.baseUrl).get(`/api/files/${urlId}/notes.txt`);
      expect(raw.text).toBe('hello world');
    });

    it('works with a browser session and with the legacy credential', async () => {
      const user = await member();
      expect((await uploadFile(user, 'session.txt', 'a')).status).toBe(200);
      const legacy = (await user.get('/api/profile/upload-token')).body.data.uploadToken;
      expect((await uploadFile(new Client(server.baseUrl), 'legacy.txt', 'b', { token: legacy })).status).toBe(200);
    });

    it('refuses a request that is not one `file` part', async () => {
      const user = await member();
      const json = await user.post('/api/files', { file: 'x' });
      expect(json.status).toBe(400);
      expect(json.body).toEqual({ error: expect.stringMatching(/multipart/) });

      const wrongName = new FormData();
      wrongName.append('upload', new Blob(['x']), 'x.txt');
      expect((await user.request('POST', '/api/files', { body: wrongName })).body.error).toMatch(/named "file"/);
      // A file part with no name at all is told so, not named "undefined".
      const boundary = 'hoard-nameless';
      const nameless = await user.request('POST', '/api/files', {
        body: `--${boundary}\r\nContent-Disposition: form-data; filename="x.txt"\r\n\r\nx\r\n--${boundary}--\r\n`,
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      });
      expect([nameless.status, nameless.body.error]).toEqual([400, 'The file part must be named "file"; it has no name']);

      const two = new FormData();
      two.append('file', new Blob(['x']), 'x.txt');
      two.append('file', new Blob(['y']), 'y.txt');
      const twoFiles = await user.request('POST', '/api/files', { body: two });
      expect(twoFiles.status).toBe(400);

      const none = new FormData();
      none.append('visibility', 'PUBLIC');
      expect((await user.request('POST', '/api/files', { body: none })).status).toBe(400);

      const unknown = await uploadFile(user, 'x.txt', 'x', { fields: { colour: 'blue' } });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toMatch(/colour/);
      const badValue = await uploadFile(user, 'x.txt', 'x', { fields: { visibility: 'SECRET' } });
      expect(badValue.status).toBe(400);
      expect(badValue.body.error).toMatch(/^visibility: /);
      const text = await user.request('POST', '/api/files', { body: 'hello', headers: { 'content-type': 'text/plain' } });
      expect(text.status).toBe(400);
      // Raw bytes, as curl --data-binary sends them: the answer says what the route reads.
      const raw = await user.request('POST', '/api/files', { body: 'hello', headers: { 'content-type': 'application/octet-stream', origin: server.baseUrl } });
      expect([raw.status, raw.body.error]).toEqual([400, 'Unsupported Content-Type: application/octet-stream; send the body as multipart/form-data']);
    });
  });

  describe('selectors', () => {
    it('requires header and query to agree, accepts none, and 404s unknown or foreign IDs', async () => {
      const user = await member();
      const other = await member();
      const profile = (await user.post('/api/upload-profiles', { name: 'p', options: {} })).body.data.profile;
      const folder = (await user.post('/api/folders', { name: 'f' })).body.data.folder;
      const foreignProfile = (await other.post('/api/upload-profiles', { name: 'theirs', options: {} })).body.data.profile;
      const foreignFolder = (await other.post('/api/folders', { name: 'theirs' })).body.data.folder;

      const disagree = await uploadFile(user, 'a.txt', 'a', { headers: { 'X-Upload-Profile': profile.id }, query: 'profileId=none' });
      expect(disagree.status).toBe(400);
      expect(disagree.body.error).toMatch(/X-Upload-Profile/);
      const folderDisagree = await uploadFile(user, 'a.txt', 'a', { headers: { 'X-Upload-Folder': folder.id }, query: `folderId=other` });
      expect(folderDisagree.status).toBe(400);

      expect((await uploadFile(user, 'a.txt', 'a', { headers: { 'X-Upload-Profile': profile.id }, query: `profileId=${profile.id}` })).status).toBe(200);
      expect((await uploadFile(user, 'b.txt', 'a', { headers: { 'X-Upload-Profile': 'none', 'X-Upload-Folder': 'none' } })).status).toBe(200);
      const inFolder = await uploadFile(user, 'c.txt', 'a', { query: `folderId=${folder.id}` });
      expect(inFolder.status).toBe(200);
      expect((await recordOf(user, inFolder.body.data.downloadUrl)).folderId).toBe(folder.id);
      // Parameters of uploader tools are ignored; the upload options are refused in the URL, not ignored.
      expect((await uploadFile(user, 'tool.txt', 'a', { query: `folderId=${folder.id}&source=sharex&v=2` })).status).toBe(200);
      for (const query of ['visibility=PRIVATE', 'password=hunter22', 'expiration=HOUR', 'expiresAt=2099-01-01T00:00:00Z', 'randomizeFileUrls=true', 'Visibility=PRIVATE', 'visibility[]=PRIVATE']) {
        const refused = await uploadFile(user, 'query.txt', 'a', { query });
        expect(refused.status, query).toBe(400);
        expect(refused.body.error, query).toBe(`query.${query.split('=')[0]}: is an upload option: send it as a form field of the upload (or in the JSON body of a chunked upload), not in the URL`);
      }

      for (const [headers, message] of [
        [{ 'X-Upload-Profile': 'nosuchprofile' }, /profile/i],
        [{ 'X-Upload-Profile': foreignProfile.id }, /profile/i],
        [{ 'X-Upload-Folder': 'nosuchfolder' }, /folder/i],
        [{ 'X-Upload-Folder': foreignFolder.id }, /folder/i],
      ] as const) {
        const response = await uploadFile(user, 'd.txt', 'a', { headers });
        expect(response.status, JSON.stringify(headers)).toBe(404);
        expect(response.body.error).toMatch(message);
      }
    });
  });

  describe('option resolution', () => {
    it('layers built-in defaults, account defaults, the profile (or the default profile) and the request', async () => {
      const user = await member();
      // Built-in: public, no expiry, original names.
      const plain = await uploadFile(user, 'plain.txt', 'x');
      expect(await recordOf(user, plain.body.data.downloadUrl)).toMatchObject({ visibility: 'PUBLIC', expiresAt: null, name: 'plain.txt' });

      await user.patch('/api/account', { uploadDefaults: { visibility: 'PRIVATE', randomizeFileUrls: true } });
      const accountDefault = await uploadFile(user, 'acct.txt', 'x');
      const accountRecord = await recordOf(user, accountDefault.body.data.downloadUrl);
      expect(accountRecord.visibility).toBe('PRIVATE');
      expect(accountRecord.name).toMatch(/^[A-Za-z0-9]{10}\.txt$/);

      const profile = (await user.post('/api/upload-profiles', { name: 'public day', options: { visibility: 'PUBLIC', expiration: 'DAY' } })).body.data.profile;
      const viaProfile = await uploadFile(user, 'prof.txt', 'x', { headers: { 'X-Upload-Profile': profile.id } });
      const profileRecord = await recordOf(user, viaProfile.body.data.downloadUrl);
      expect(profileRecord.visibility).toBe('PUBLIC');
      expect(Date.parse(profileRecord.expiresAt) - Date.now()).toBeGreaterThan(86_400_000 - 60_000);
      expect(profileRecord.name).toMatch(/^[A-Za-z0-9]{10}\.txt$/);

      await user.patch('/api/account', { defaultProfileId: profile.id });
      const viaDefault = await uploadFile(user, 'default.txt', 'x');
      expect((await recordOf(user, viaDefault.body.data.downloadUrl)).visibility).toBe('PUBLIC');
      const bypass = await uploadFile(user, 'bypass.txt', 'x', { headers: { 'X-Upload-Profile': 'none' } });
      expect((await recordOf(user, bypass.body.data.downloadUrl)).visibility).toBe('PRIVATE');

      const requestWins = await uploadFile(user, 'req.txt', 'x', { fields: { visibility: 'PRIVATE', expiresAt: '', randomizeFileUrls: 'false' } });
      const requestRecord = await recordOf(user, requestWins.body.data.downloadUrl);
      expect(requestRecord).toMatchObject({ visibility: 'PRIVATE', expiresAt: null, name: 'req.txt' });

      const explicitExpiry = new Date(Date.now() + 3_600_000).toISOString();
      const withExpiry = await uploadFile(user, 'exp.txt', 'x', { fields: { expiresAt: explicitExpiry, expiryAction: 'SET_PRIVATE' } });
      expect((await recordOf(user, withExpiry.body.data.downloadUrl)).expiresAt).toBe(explicitExpiry);
      const past = await uploadFile(user, 'past.txt', 'x', { fields: { expiresAt: '2001-01-01T00:00:00Z' } });
      expect(past.status).toBe(400);
      expect(past.body.error).toMatch(/expiresAt/);
      const farthest = await uploadFile(user, 'far.txt', 'x', { fields: { expiresAt: '9999-12-31T23:59:59Z' } });
      expect(farthest.status, farthest.text).toBe(200);
      expect((await recordOf(user, farthest.body.data.downloadUrl)).expiresAt).toBe('9999-12-31T23:59:59.000Z');
      const tooFar = await uploadFile(user, 'far.txt', 'x', { fields: { expiresAt: '9999-12-31T23:59:59-23:59' } });
      expect([tooFar.status, tooFar.body.error]).toEqual([400, 'expiresAt: must be an ISO 8601 timestamp with a time zone, at the latest in the year 9999, or null']);
      // ISO 8601 as scripts write it, as the listing's date filters take it: a `±hhmm` zone
      // (`date +%Y-%m-%dT%H:%M:%S%z`), no seconds, lower case.
      const tomorrow = new Date(Date.now() + 86_400_000);
      const minute = new Date(Math.floor(tomorrow.getTime() / 60_000) * 60_000);
      const day = minute.toISOString().slice(0, 16);
      const kathmandu = new Date(minute.getTime() + (5 * 60 + 45) * 60_000).toISOString().slice(0, 16);
      for (const [written, instant] of [
        [`${day}:00+0000`, minute],
        [`${day}Z`, minute],
        [`${day.toLowerCase().replace('T', 't')}:00z`, minute],
        [`${kathmandu}+0545`, minute],
        [`${kathmandu}:00.000+05:45`, minute],
        // GNU `date -Ins` (a comma before nine digits), and a space for the T (RFC 3339 allows it).
        [`${day}:00,000000000+00:00`, minute],
        [`${day.replace('T', ' ')}:00Z`, minute],
      ] as const) {
        const taken = await uploadFile(user, 'scripted.txt', 'x', { fields: { expiresAt: written } });
        expect(taken.status, `${written}: ${taken.text}`).toBe(200);
        expect((await recordOf(user, taken.body.data.downloadUrl)).expiresAt, written).toBe(instant.toISOString());
      }
      for (const written of [`${day}+05`, `${day}:00+2400`, `${day.slice(0, 10)}`, '2099-02-30T10:00Z']) {
        expect((await uploadFile(user, 'scripted.txt', 'x', { fields: { expiresAt: written } })).status, written).toBe(400);
      }
      // In a chunked upload's JSON, a value of another type is told the same rule.
      for (const expiresAt of [-1, true, [], 1767225600000]) {
        const started = await new Client(server.baseUrl).post('/api/files/chunks', { filename: 'c.txt', size: 1, expiresAt }, { token: await createToken(user, ['files:upload']) });
        expect([started.status, started.body.error], JSON.stringify(expiresAt)).toEqual([400, 'body.expiresAt: must be an ISO 8601 timestamp with a time zone, at the latest in the year 9999, or null']);
      }
    });

    it('refuses a preset and an instant for the expiry in one request, rather than choosing one', async () => {
      const user = await member();
      const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
      for (const fields of [{ expiration: 'HOUR', expiresAt: tomorrow }, { expiration: 'WEEK', expiresAt: '' }, { expiration: 'DISABLED', expiresAt: 'null' }]) {
        const both = await uploadFile(user, 'both.txt', 'x', { fields });
        expect([both.status, both.body.error], JSON.stringify(fields)).toEqual([400, 'Send either expiration (a preset) or expiresAt (an instant, or null for none), not both']);
      }
      const token = await createToken(user, ['files:upload']);
      const chunked = await new Client(server.baseUrl).post('/api/files/chunks', { filename: 'c.txt', size: 1, expiration: 'DAY', expiresAt: null }, { token });
      expect([chunked.status, chunked.body.error]).toEqual([400, 'Send either expiration (a preset) or expiresAt (an instant, or null for none), not both']);
      expect(await server.ctx.db.selectFrom('files').select('id').where('name', '=', 'both.txt').execute()).toHaveLength(0);
      // Each alone is still taken.
      expect((await uploadFile(user, 'preset.txt', 'x', { fields: { expiration: 'HOUR' } })).status).toBe(200);
      expect((await uploadFile(user, 'instant.txt', 'x', { fields: { expiresAt: tomorrow } })).status).toBe(200);
    });

    it('applies fields sent after the file part too', async () => {
      const user = await member();
      const response = await uploadFile(user, 'late.txt', 'x', { fieldsAfter: { visibility: 'PRIVATE', password: 'hunter22' } });
      expect(response.status).toBe(200);
      expect(await recordOf(user, response.body.data.downloadUrl)).toMatchObject({ visibility: 'PRIVATE', hasPassword: true });
      const bad = await uploadFile(user, 'late-bad.txt', 'x', { fieldsAfter: { visibility: 'NOPE' } });
      expect(bad.status).toBe(400);
      const leftovers = await server.ctx.db.selectFrom('files').select('id').where('name', '=', 'late-bad.txt').execute();
      expect(leftovers).toHaveLength(0);
    });
  });

  describe('permission rules (spec POST /api/files rules 1-4)', () => {
    it('1: without files.share the upload is private, even when asked for public', async () => {
      const user = await member();
      await withoutPermission('files.share', async () => {
        const response = await uploadFile(user, 'forced.txt', 'x', { fields: { visibility: 'PUBLIC' } });
        expect(response.status).toBe(200);
        expect((await recordOf(user, response.body.data.downloadUrl)).visibility).toBe('PRIVATE');
      });
    });

    it('2: an expiry with DELETE needs files.delete, with SET_PRIVATE files.share, inherited ones too', async () => {
      const user = await member();
      const expiring = (await user.post('/api/upload-profiles', { name: 'week', options: { expiration: 'WEEK', expiryAction: 'DELETE' } })).body.data.profile;
      const privatising = (await user.post('/api/upload-profiles', { name: 'hide', options: { expiration: 'HOUR', expiryAction: 'SET_PRIVATE' } })).body.data.profile;
      const later = new Date(Date.now() + 3_600_000).toISOString();
      await withoutPermission('files.delete', async () => {
        expect((await uploadFile(user, 'a.txt', 'x', { fields: { expiresAt: later, expiryAction: 'DELETE' } })).status).toBe(403);
        const inherited = await uploadFile(user, 'a.txt', 'x', { headers: { 'X-Upload-Profile': expiring.id } });
        expect(inherited.status).toBe(403);
        expect(inherited.body).toEqual({ error: 'You do not have permission to perform this action.' });
        expect((await uploadFile(user, 'a.txt', 'x', { fields: { expiresAt: later, expiryAction: 'SET_PRIVATE' } })).status).toBe(200);
      });
      await withoutPermission('files.share', async () => {
        expect((await uploadFile(user, 'b.txt', 'x', { fields: { expiresAt: later, expiryAction: 'SET_PRIVATE' } })).status).toBe(403);
        expect((await uploadFile(user, 'b.txt', 'x', { headers: { 'X-Upload-Profile': privatising.id } })).status).toBe(403);
        expect((await uploadFile(user, 'b.txt', 'x', { fields: { expiresAt: later, expiryAction: 'DELETE' } })).status).toBe(200);
      });
    });

    it('3: a folder needs folders.manage and tags need tags.manage, inherited tags too', async () => {
      const user = await member();
      const folder = (await user.post('/api/folders', { name: 'f' })).body.data.folder;
      const tag = (await user.post('/api/tags', { name: 'holiday' })).body.data.tag;
      const tagged = (await user.post('/api/upload-profiles', { name: 'tagged', options: { tagIds: [tag.id] } })).body.data.profile;
      await withoutPermission('folders.manage', async () => {
        expect((await uploadFile(user, 'a.txt', 'x', { headers: { 'X-Upload-Folder': folder.id } })).status).toBe(403);
        expect((await uploadFile(user, 'a.txt', 'x', { headers: { 'X-Upload-Folder': 'none' } })).status).toBe(200);
      });
      await withoutPermission('tags.manage', async () => {
        expect((await uploadFile(user, 'a.txt', 'x', { fields: { tagIds: JSON.stringify([tag.id]) } })).status).toBe(403);
        expect((await uploadFile(user, 'a.txt', 'x', { headers: { 'X-Upload-Profile': tagged.id } })).status).toBe(403);
      });
      const ok = await uploadFile(user, 'tagged.txt', 'x', { headers: { 'X-Upload-Profile': tagged.id } });
      expect((await recordOf(user, ok.body.data.downloadUrl)).tags).toEqual([{ id: tag.id, name: 'holiday' }]);
      const other = await member();
      const foreignTag = (await other.post('/api/tags', { name: 'theirs' })).body.data.tag;
      const foreign = await uploadFile(user, 'a.txt', 'x', { fields: { tagIds: JSON.stringify([foreignTag.id]) } });
      expect(foreign.status).toBe(400);
      expect(foreign.body.error).toMatch(/tagIds/);
    });

    it('4: the size limit applies to everyone; the default quota not to quotas.bypass or Administrators', async () => {
      const user = await member();
      await admin.patch('/api/settings', { maxUploadSizeBytes: 1000, defaultQuotaBytes: 1500 });
      try {
        const tooBig = await uploadFile(user, 'big.bin', new Uint8Array(1001), { type: 'application/octet-stream' });
        expect(tooBig.status).toBe(413);
        expect(tooBig.body.error).toMatch(/maximum upload size/);
        expect((await uploadFile(admin, 'big.bin', new Uint8Array(1001), { type: 'application/octet-stream' })).status).toBe(413);
        expect((await uploadFile(user, 'fits.bin', new Uint8Array(1000), { type: 'application/octet-stream' })).status).toBe(200);
        const overQuota = await uploadFile(user, 'over.bin', new Uint8Array(600), { type: 'application/octet-stream' });
        expect(overQuota.status).toBe(413);
        expect(overQuota.body.error).toMatch(/quota/);
        expect((await uploadFile(user, 'fits2.bin', new Uint8Array(500), { type: 'application/octet-stream' })).status).toBe(200);

        for (let i = 0; i < 2; i++) expect((await uploadFile(admin, `admin${i}.bin`, new Uint8Array(1000), { type: 'application/octet-stream' })).status).toBe(200);
        const bypassRole = (await admin.post('/api/roles', { name: `bypass ${Math.random()}`, permissions: ['quotas.bypass'] })).body.data.role;
        const bypasser = await member();
        await admin.patch(`/api/users/${bypasser.userId}`, { roleIds: [bypassRole.id] });
        for (let i = 0; i < 2; i++) expect((await uploadFile(bypasser, `b${i}.bin`, new Uint8Array(1000), { type: 'application/octet-stream' })).status).toBe(200);
        const usage = await server.ctx.db.selectFrom('users').select('usedBytes').where('id', '=', user.userId).executeTakeFirstOrThrow();
        expect(usage.usedBytes).toBe(1500);
      } finally {
        await admin.patch('/api/settings', { maxUploadSizeBytes: 1073741824, defaultQuotaBytes: 0 });
      }
    });
  });

  describe('content type', () => {
    it('keeps a declared type, detects octet-stream from magic bytes, falls back to the name, and refuses a contradicted claim', async () => {
      const user = await member();
      const declared = await uploadFile(user, 'data.csv', 'a,b\n1,2\n', { type: 'text/csv' });
      expect(declared.body.data.type).toBe('text/csv');
      const detected = await uploadFile(user, 'noext', PNG_1X1, { type: 'application/octet-stream' });
      expect(detected.body.data.type).toBe('image/png');
      const byName = await uploadFile(user, 'page.md', '# hi', { type: 'application/octet-stream' });
      expect(byName.body.data.type).toBe('text/markdown');
      const unknown = await uploadFile(user, 'blob', new Uint8Array([1, 2, 3]), { type: 'application/octet-stream' });
      expect(unknown.body.data.type).toBe('application/octet-stream');
      const zip = Buffer.concat([Buffer.from('504b0304', 'hex'), Buffer.alloc(60, 1)]);
      const lie = await uploadFile(user, 'photo.png', zip, { type: 'image/png' });
      expect(lie.status).toBe(400);
      expect(lie.body.error).toMatch(/does not match/);
      const jpegClaim = await uploadFile(user, 'photo.jpg', PNG_1X1, { type: 'image/jpeg' });
      expect(jpegClaim.status).toBe(400);
    });

    it('takes the other names browsers and systems send for a format, under the name content detection gives where it is only another spelling', async () => {
      const user = await member();
      const compound = Buffer.concat([Buffer.from('d0cf11e0a1b11ae1', 'hex'), Buffer.alloc(600, 0)]);
      const gzip = gzipSync('hello gzip');
      const tarball = await tarBytes([{ name: 'a.txt', data: 'inside' }], { gzip: true });
      const tar = await tarBytes([{ name: 'a.txt', data: 'inside' }]);
      const rar = Buffer.concat([Buffer.from('Rar!\x1a\x07\x00', 'latin1'), Buffer.alloc(64, 0)]);
      const icon = Buffer.concat([Buffer.from('000001000100101000000100200068040000', 'hex'), Buffer.alloc(64, 0)]);
      const bitmap = Buffer.concat([Buffer.from('BM', 'latin1'), Buffer.from([0x46, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 0x28, 0, 0, 0]), Buffer.alloc(64, 0)]);
      const program = Buffer.concat([Buffer.from('MZ'), Buffer.from([0x90, 0, 3, 0, 0, 0, 4, 0, 0, 0, 0xff, 0xff, 0, 0]), Buffer.alloc(48)]);
      const video = Buffer.concat([Buffer.from('000000186674797069736f6d0000020069736f6d6d703431', 'hex'), Buffer.alloc(64, 0)]);
      const zip = await zipBytes([{ name: 'a.txt', data: 'inside' }]);
      const bzip2 = Buffer.concat([Buffer.from('BZh91AY&SY', 'latin1'), Buffer.alloc(64, 1)]);
      const xz = Buffer.concat([Buffer.from('fd377a585a00', 'hex'), Buffer.alloc(64, 0)]);
      const debian = Buffer.concat([Buffer.from('!<arch>\ndebian-binary   ', 'latin1'), Buffer.alloc(100, 0x20)]);
      const elf = Buffer.concat([Buffer.from('7f454c46020101', 'hex'), Buffer.alloc(64, 0)]);
      const javaClass = Buffer.concat([Buffer.from('cafebabe00000034', 'hex'), Buffer.alloc(64, 0)]);
      const cases: Array<[string, Uint8Array, string, string]> = [
        // Office 97–2003, Outlook and installers are Compound Files: their own names are kept.
        ['report.doc', compound, 'application/msword', 'application/msword'],
        ['sheet.xls', compound, 'application/vnd.ms-excel', 'application/vnd.ms-excel'],
        ['slides.ppt', compound, 'application/vnd.ms-powerpoint', 'application/vnd.ms-powerpoint'],
        ['mail.msg', compound, 'application/vnd.ms-outlook', 'application/vnd.ms-outlook'],
        ['setup.msi', compound, 'application/x-msi', 'application/x-msi'],
        // Excel 2003's XML Spreadsheet, saved as .xls.
        ['budget.xls', Buffer.from('<?xml version="1.0"?>\n<Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet"></Workbook>\n'), 'application/vnd.ms-excel', 'application/vnd.ms-excel'],
        // Other spellings of one type are stored as the detected name.
        ['notes.txt.gz', gzip, 'application/x-gzip', 'application/gzip'],
        ['notes.txt.gz', gzip, 'application/x-gzip-compressed', 'application/gzip'],
        ['backup.rar', rar, 'application/vnd.rar', 'application/x-rar-compressed'],
        ['backup.rar', rar, 'application/x-rar', 'application/x-rar-compressed'],
        ['favicon.ico', icon, 'image/vnd.microsoft.icon', 'image/x-icon'],
        ['scan.bmp', bitmap, 'image/x-ms-bmp', 'image/bmp'],
        ['scan.bmp', bitmap, 'image/x-bmp', 'image/bmp'],
        ['tool.exe', program, 'application/x-msdos-program', 'application/x-msdownload'],
        ['tool.exe', program, 'application/vnd.microsoft.portable-executable', 'application/x-msdownload'],
        ['tool.exe', program, 'application/x-dosexec', 'application/x-msdownload'],
        ['bundle.zip', zip, 'application/x-zip', 'application/zip'],
        ['bundle.zip', zip, 'multipart/x-zip', 'application/zip'],
        // A tarball as Windows (.tgz) and Linux name it; a generic MP4 container.
        ['site.tgz', tarball, 'application/x-compressed', 'application/x-compressed'],
        ['site.tar.gz', tarball, 'application/x-gtar', 'application/x-gtar'],
        ['site.tgz', tarball, 'application/x-tgz', 'application/x-tgz'],
        ['site.tar', tar, 'application/x-gtar', 'application/x-gtar'],
        ['clip.mp4', video, 'application/mp4', 'video/mp4'],
        // As Chromium on Linux declares them (its shared MIME database).
        ['notes.txt.bz2', bzip2, 'application/x-bzip', 'application/x-bzip2'],
        ['site.tar.bz2', bzip2, 'application/x-bzip-compressed-tar', 'application/x-bzip-compressed-tar'],
        ['site.tar.xz', xz, 'application/x-xz-compressed-tar', 'application/x-xz-compressed-tar'],
        ['tool.exe', program, 'application/x-ms-dos-executable', 'application/x-msdownload'],
        ['tool.deb', debian, 'application/vnd.debian.binary-package', 'application/x-deb'],
        ['tool.jar', zip, 'application/x-java-archive', 'application/x-java-archive'],
        ['libtool.so', elf, 'application/x-sharedlib', 'application/x-sharedlib'],
        ['Tool.class', javaClass, 'application/x-java', 'application/java-vm'],
        // Windows declares a .csv as Excel's type where Excel is installed.
        ['totals.csv', Buffer.from('month,total\nJanuary,12\n'), 'application/vnd.ms-excel', 'text/csv'],
        // Even when its first bytes spell a signature ("MZ", a Windows program's).
        ['scores.csv', Buffer.from('MZ,score\nAda,12\n'), 'application/vnd.ms-excel', 'text/csv'],
      ];
      for (const [name, bytes, declared, stored] of cases) {
        const answer = await uploadFile(user, name, bytes, { type: declared });
        expect(answer.status, `${name} as ${declared}: ${answer.text}`).toBe(200);
        expect(answer.body.data.type, `${name} as ${declared}`).toBe(stored);
      }
      // Each family holds only its own: a Compound File is no ZIP, gzip no Word document.
      for (const [name, bytes, declared] of [
        ['report.docx', compound, 'application/zip'],
        ['report.doc', gzip, 'application/msword'],
        ['site.tgz', zip, 'application/x-compressed'],
        ['site.tar.xz', bzip2, 'application/x-xz-compressed-tar'],
        ['clip.mp4', PNG_1X1, 'application/mp4'],
        ['libtool.so', program, 'application/x-sharedlib'],
        ['scores.csv', zip, 'application/vnd.ms-excel'],
      ] as const) {
        const answer = await uploadFile(user, name, bytes, { type: declared });
        expect(answer.status, `${name} as ${declared}: ${answer.text}`).toBe(400);
        expect(answer.body.error).toMatch(/does not match the content/);
      }
      // A format built on ZIP that content detection has no name for keeps the name it was declared with.
      for (const [name, declared] of [['issue.cbz', 'application/vnd.comicbook+zip'], ['places.kmz', 'application/vnd.google-earth.kmz'], ['part.3mf', 'model/3mf']] as const) {
        const answer = await uploadFile(user, name, zip, { type: declared });
        expect(answer.status, `${name} as ${declared}: ${answer.text}`).toBe(200);
        expect(answer.body.data.type, name).toBe(declared);
      }
    });

    it('keeps a text declaration for text whose first bytes happen to spell a short binary signature, and still refuses one for binary bytes', async () => {
      const user = await member();
      // Each begins with bytes that file-type reads as a format: "MZ" a DOS executable, "ID3" an
      // MP3, "BM" a bitmap, a backtick and a Hangul syllable (0x60 0xEA) an ARJ archive, "BZh"
      // bzip2, and an iCalendar file declared as plain text.
      const texts: Array<[string, string, string]> = [
        ['mz.txt', 'MZ is the signature of DOS executables.\n', 'text/plain'],
        ['tags.md', 'ID3 tags store the song title.\n', 'text/markdown'],
        ['ranking.txt', 'BM25 is a ranking function.\n', 'text/plain'],
        ['korean.md', '`가나다` 는 예시입니다.\n', 'text/markdown'],
        ['bzip.txt', 'BZh is how bzip2 files begin.\n', 'text/plain'],
        ['meeting.txt', 'BEGIN:VCALENDAR\nVERSION:2.0\nEND:VCALENDAR\n', 'text/plain'],
      ];
      for (const [name, text, type] of texts) {
        const answer = await uploadFile(user, name, text, { type });
        expect(answer.status, `${name}: ${answer.text}`).toBe(200);
        expect(answer.body.data.type).toBe(type);
      }
      // Undeclared, such text is named by its name before its signature; a name that says nothing
      // leaves the signature's type.
      const undeclared = await uploadFile(user, 'notes.txt', 'MZ is the signature of DOS executables.\n', { type: 'application/octet-stream' });
      expect(undeclared.body.data.type).toBe('text/plain');
      const nameless = await uploadFile(user, 'notes', 'MZ is the signature of DOS executables.\n', { type: 'application/octet-stream' });
      expect(nameless.body.data.type).toBe('application/x-msdownload');
      // The same signatures with the bytes of the formats after them (NUL bytes, which text has not).
      const executable = Buffer.concat([Buffer.from('MZ'), Buffer.from([0x90, 0, 3, 0, 0, 0, 4, 0, 0, 0, 0xff, 0xff, 0, 0]), Buffer.alloc(48)]);
      const mp3 = Buffer.concat([Buffer.from('ID3'), Buffer.from([3, 0, 0, 0, 0, 0x10, 0x76]), Buffer.alloc(64, 0)]);
      for (const [name, bytes] of [['program.md', executable], ['song.csv', mp3]] as const) {
        const answer = await uploadFile(user, name, bytes, { type: name.endsWith('.md') ? 'text/markdown' : 'text/csv' });
        expect(answer.status, name).toBe(400);
        expect(answer.body.error).toMatch(/does not match the content/);
      }
      // Undeclared, binary bytes keep their signature's type whatever the name says.
      const named = await uploadFile(user, 'program.txt', executable, { type: 'application/octet-stream' });
      expect(named.body.data.type).toBe('application/x-msdownload');
    });
    it('says that a "file" sent as a text field is not a file part, and how to send one', async () => {
      const user = await member();
      const boundary = 'text-field-boundary';
      const body = `--${boundary}\r\nContent-Disposition: form-data; name="file"\r\n\r\nthe text of notes.txt\r\n--${boundary}--\r\n`;
      const answer = await user.request('POST', '/api/files', { body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
      expect([answer.status, answer.body.error]).toEqual([400, '"file" came as a text field, not a file part (one with a filename): send the file as a file (curl: -F "file=@path")']);
    });

    it('takes HEIC and HEIF for one another, as the one container they are', async () => {
      const user = await member();
      // The smallest ISO BMFF file of each brand: a file-type box alone.
      const ftyp = (brand: string) => {
        const box = Buffer.alloc(24);
        box.writeUInt32BE(24, 0);
        box.write('ftyp', 4, 'latin1');
        box.write(brand, 8, 'latin1');
        box.write(`${brand}mif1`, 16, 'latin1');
        return box;
      };
      for (const [name, declared, brand] of [
        ['IMG_0001.HEIC', 'image/heic', 'mif1'],
        ['photo.heif', 'image/heif', 'heic'],
      ] as const) {
        const answer = await uploadFile(user, name, ftyp(brand), { type: declared });
        expect([answer.status, answer.body.data?.type], `${name}: ${answer.text}`).toEqual([200, declared]);
      }
      // Another image type is still a contradiction.
      expect((await uploadFile(user, 'not.png', ftyp('heic'), { type: 'image/png' })).status).toBe(400);
    });

    it('detects the type of a file part sent without a Content-Type, which multipart reads as text/plain', async () => {
      const user = await member();
      /** POST /api/files with one file part whose headers are exactly `partHeaders`. */
      const raw = (partHeaders: string, bytes: Uint8Array) => {
        const boundary = 'hoard-part-boundary';
        const body = Buffer.concat([Buffer.from(`--${boundary}\r\n${partHeaders}\r\n\r\n`), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]);
        return user.request('POST', '/api/files', { body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
      };
      const untyped = (name: string, bytes: Uint8Array) => raw(`Content-Disposition: form-data; name="file"; filename="${name}"`, bytes);
      const zip = await zipBytes([{ name: 'a.txt', data: 'inside' }]);
      const cases: Array<[string, Uint8Array, string]> = [
        // As a script sends them (Python's requests without a type, say): detected from the content,
        ['shot.png', PNG_1X1, 'image/png'],
        ['bundle.zip', zip, 'application/zip'],
        // else from the name, for bytes that are not text;
        ['dump.bin', new Uint8Array([0, 1, 2, 3, 0]), 'application/octet-stream'],
        // text by its name (contract §4: else from the file name), plain text where the name says
        // nothing else.
        ['notes.txt', Buffer.from('plain words\n'), 'text/plain'],
        ['data.json', Buffer.from('{"a":1}'), 'application/json'],
        ['table.csv', Buffer.from('a,b\n1,2\n'), 'text/csv'],
        ['readme.md', Buffer.from('# Title\n'), 'text/markdown'],
        ['page.html', Buffer.from('<p>hi</p>'), 'text/html'],
        ['README', Buffer.from('no extension\n'), 'text/plain'],
      ];
      for (const [name, bytes, type] of cases) {
        const answer = await untyped(name, bytes);
        expect(answer.status, `${name}: ${answer.text}`).toBe(200);
        expect(answer.body.data.type, name).toBe(type);
      }
      // A part declared text/plain reads the same, so its binary content names its type too; any
      // other declaration the content contradicts is still refused.
      const plain = await raw('Content-Disposition: form-data; name="file"; filename="shot.png"\r\nContent-Type: text/plain', PNG_1X1);
      expect([plain.status, plain.body.data?.type]).toEqual([200, 'image/png']);
      const claimed = await raw('Content-Disposition: form-data; name="file"; filename="shot.png"\r\nContent-Type: image/jpeg', PNG_1X1);
      expect([claimed.status, claimed.body.error]).toEqual([400, 'The declared file type image/jpeg does not match the content, which is image/png']);
    });

    it('refuses a declared type longer than a MIME type can be, as a chunked upload does', async () => {
      // 255 characters (RFC 6838: 127 for the type and the subtype each): a longer one could be
      // stored but never filtered on (the listing's `types` takes at most 255).
      const user = await member();
      const long = `text/${'x'.repeat(300)}`;
      const refused = await uploadFile(user, 'long.txt', 'some text\n', { type: long });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatch(/at most 255 characters/);
      const longest = `text/${'x'.repeat(250)}`;
      const kept = await uploadFile(user, 'longest.txt', 'some text\n', { type: longest });
      expect([kept.status, kept.body.data?.type]).toEqual([200, longest]);
      const listed = await user.get(`/api/files?types=${encodeURIComponent(longest)}`);
      expect([listed.status, listed.body.pagination?.total]).toEqual([200, 1]);
    });
  });

  describe('naming', () => {
    it('sanitises names, suffixes collisions and keeps /<urlId>/<name> unique', async () => {
      const user = await member();
      const names: string[] = [];
      // A form sends `say "hi".txt` as `say %22hi%22.txt` (the HTML form encoding): the quotes go,
      // not as the digits 22.
      // A Windows path as the name (docs/decisions.md, "A file name is its last path segment").
      // A joiner before a leading dot joins nothing, and the dot goes as it does alone.
      for (const raw of ['report.pdf', 'report.pdf', 'report.pdf', '../../etc/passwd', 'my holiday <photo>.jpg', '.hidden', 'ärger über.txt', 'say "hi".txt', 'C:\\Users\\me\\shot.png', '\u200d.htaccess', ' \u200d_.env']) {
        const response = await uploadFile(user, raw, 'x', { type: 'application/octet-stream' });
        expect(response.status).toBe(200);
        names.push(response.body.data.name);
      }
      expect(names).toEqual(['report.pdf', 'report-1.pdf', 'report-2.pdf', 'passwd', 'my_holiday_photo.jpg', 'hidden', 'ärger_über.txt', 'say_hi.txt', 'shot.png', 'htaccess', 'env']);
      const urlId = await urlIdOf(user);
      const unicode = await new Client(server.baseUrl).get(`/api/files/${urlId}/${encodeURIComponent('ärger_über.txt')}`);
      expect(unicode.status).toBe(200);
      const random = await uploadFile(user, 'secret-plans.txt', 'x', { fields: { randomizeFileUrls: 'true' } });
      expect(random.body.data.name).toMatch(/^[A-Za-z0-9]{10}\.txt$/);
    });

    it('reads a name sent as RFC 2047 encoded words (.NET and PowerShell clients), and leaves names that only look like them', async () => {
      const user = await member();
      const boundary = 'hoard-encoded-words';
      const send = (disposition: string) =>
        fetch(`${server.baseUrl}/api/files`, {
          method: 'POST',
          headers: { cookie: user.cookieHeader(), origin: server.baseUrl, 'content-type': `multipart/form-data; boundary=${boundary}` },
          body: Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\nContent-Type: text/plain\r\n\r\nhello\r\n--${boundary}--\r\n`, 'utf8'),
        }).then(async (response) => [response.status, ((await response.json()) as { data?: { name: string } }).data?.name]);
      // .NET's MultipartFormDataContent writes both parameters; the form parser takes the quoted
      // one when the field's name is quoted, so the encoded words are what arrives.
      expect(await send(`form-data; name="file"; filename="=?utf-8?B?Y2Fmw6kgbWVudS50eHQ=?="; filename*=utf-8''caf%C3%A9%20menu.txt`)).toEqual([200, 'café_menu.txt']);
      expect(await send(`form-data; name="file"; filename="=?UTF-8?Q?=C3=84rger_=C3=BCber?= =?UTF-8?Q?.txt?="`)).toEqual([200, 'Ärger_über.txt']);
      expect(await send(`form-data; name="file"; filename="=?iso-8859-1?q?f=E9te.txt?="`)).toEqual([200, 'féte.txt']);
      // Base64 holds "/" (every Russian name with "п"): the form parser must not cut the name there.
      const russian = `=?utf-8?B?${Buffer.from('Презентация.pptx').toString('base64')}?=`;
      expect(russian).toContain('/');
      expect(await send(`form-data; name="file"; filename="${russian}"`)).toEqual([200, 'Презентация.pptx']);
      // A real path is still cut to its last segment, by the name's own rules.
      expect(await send(`form-data; name="file"; filename="../../etc/shadow.txt"`)).toEqual([200, 'shadow.txt']);
      expect(await send(`form-data; name="file"; filename="C:\\Users\\me\\shot.txt"`)).toEqual([200, 'shot.txt']);
      // Not encoded words: an unknown charset, bad base64, or text around them.
      expect(await send(`form-data; name="file"; filename="=?x-unknown?B?YWJj?="`)).toEqual([200, 'x-unknownBYWJj']);
      expect(await send(`form-data; name="file"; filename="notes =?utf-8?B?YWJj?=.txt"`)).toEqual([200, 'notes_utf-8BYWJj.txt']);
    });
  });

  describe('a token that becomes invalid while its upload arrives (spec, Errors: 403)', () => {
    const heldUpload = (credential: string) => heldUploadAt(server.baseUrl, credential);

    it('refuses the upload with 403 when the token is revoked, or expires, before the upload is finalized, and keeps nothing of it', async () => {
      const user = await member();
      const usedOf = async () => Number((await server.ctx.db.selectFrom('users').select('usedBytes').where('id', '=', user.userId).executeTakeFirstOrThrow()).usedBytes);
      const usedBefore = await usedOf();
      const revokedToken = await user.post('/api/tokens', { name: 'revoked mid-upload', scopes: ['files:upload'] });
      // The request was authenticated once its token shows a use.
      const authenticated = (id: string) => expect.poll(async () => (await user.get('/api/tokens')).body.data.tokens.find((t: { id: string }) => t.id === id).lastUsedAt).not.toBeNull();
      const held = heldUpload(revokedToken.body.data.secret);
      await held.begun;
      await authenticated(revokedToken.body.data.token.id);
      expect((await user.delete(`/api/tokens/${revokedToken.body.data.token.id}`)).status).toBe(204);
      held.release();
      const refused = await held.answer;
      expect([refused.status, await refused.json()]).toEqual([403, { error: 'The token was revoked or expired before the upload was finalized' }]);

      const expiring = await user.post('/api/tokens', { name: 'expiring mid-upload', scopes: ['files:upload'], expiresAt: new Date(Date.now() + 60_000).toISOString() });
      const late = heldUpload(expiring.body.data.secret);
      await late.begun;
      await authenticated(expiring.body.data.token.id);
      await server.ctx.db.updateTable('apiTokens').set({ expiresAt: Date.now() - 1 }).where('id', '=', expiring.body.data.token.id).execute();
      late.release();
      const expired = await late.answer;
      expect([expired.status, await expired.json()]).toEqual([403, { error: 'The token was revoked or expired before the upload was finalized' }]);

      expect((await user.get('/api/files')).body.data).toEqual([]);
      expect(await usedOf()).toBe(usedBefore);
      // The refused bytes are gone from storage: no file record, and no object of the account.
      expect(await server.ctx.db.selectFrom('files').select('id').where('userId', '=', user.userId).execute()).toEqual([]);
      expect(await storedKeys(`files/${user.userId}/`)).toEqual([]);

      // The legacy credential, regenerated while its upload arrives (its configurations are the
      // likeliest to leak). Its request has begun storing once the bytes' clean-up net is laid.
      const legacy = (await user.get('/api/profile/upload-token')).body.data.uploadToken as string;
      const storing = () =>
        expect
          .poll(async () => (await server.ctx.db.selectFrom('jobs').select('id').where('type', '=', 'storage.cleanup').where('dedupeKey', 'like', `%${user.userId}%`).execute()).length)
          .toBeGreaterThan(0);
      await server.ctx.db.deleteFrom('jobs').where('type', '=', 'storage.cleanup').where('dedupeKey', 'like', `%${user.userId}%`).execute();
      const replaced = heldUpload(legacy);
      await replaced.begun;
      await storing();
      expect((await user.post('/api/profile/upload-token')).status).toBe(200);
      replaced.release();
      const stale = await replaced.answer;
      expect([stale.status, await stale.json()]).toEqual([403, { error: 'The upload credential was regenerated before the upload was finalized' }]);
      expect((await user.get('/api/files')).body.data).toEqual([]);

      // A token still valid at the end commits as always.
      const kept = await user.post('/api/tokens', { name: 'kept', scopes: ['files:upload'] });
      const fine = heldUpload(kept.body.data.secret);
      await fine.begun;
      fine.release();
      expect((await fine.answer).status).toBe(200);
    });
  });

  describe('tokens bound to an upload profile (spec, Authentication 8)', () => {
    it('uses the bound profile, refuses other profiles, overrides and expiresAt, and follows profile changes', async () => {
      const user = await member();
      const bound = (await user.post('/api/upload-profiles', { name: 'bound', options: { visibility: 'PRIVATE', shareStyle: 'minimal' } })).body.data.profile;
      const other = (await user.post('/api/upload-profiles', { name: 'other', options: {} })).body.data.profile;
      const token = await createToken(user, ['files:upload'], { profileId: bound.id });
      const script = new Client(server.baseUrl);

      const omitted = await uploadFile(script, 'a.txt', 'x', { token });
      expect(omitted.status).toBe(200);
      expect((await recordOf(user, omitted.body.data.downloadUrl)).visibility).toBe('PRIVATE');
      expect((await uploadFile(script, 'a.txt', 'x', { token, headers: { 'X-Upload-Profile': bound.id } })).status).toBe(200);
      for (const selector of [other.id, 'none']) {
        const response = await uploadFile(script, 'a.txt', 'x', { token, headers: { 'X-Upload-Profile': selector } });
        expect(response.status, selector).toBe(403);
      }
      expect((await uploadFile(script, 'a.txt', 'x', { token, fields: { visibility: 'PUBLIC' } })).status).toBe(403);
      expect((await uploadFile(script, 'a.txt', 'x', { token, fields: { shareStyle: 'framed' } })).status).toBe(403);
      expect((await uploadFile(script, 'a.txt', 'x', { token, fields: { visibility: 'PRIVATE', shareStyle: 'minimal' } })).status).toBe(200);
      for (const expiresAt of ['', 'null', new Date(Date.now() + 3_600_000).toISOString()]) {
        expect((await uploadFile(script, 'a.txt', 'x', { token, fields: { expiresAt } })).status, expiresAt).toBe(403);
      }

      await user.patch(`/api/upload-profiles/${bound.id}`, { options: { visibility: 'PUBLIC' } });
      const afterChange = await uploadFile(script, 'b.txt', 'x', { token });
      expect((await recordOf(user, afterChange.body.data.downloadUrl)).visibility).toBe('PUBLIC');

      expect((await user.delete(`/api/upload-profiles/${bound.id}`)).status).toBe(204);
      const afterDelete = await uploadFile(script, 'c.txt', 'x', { token });
      expect(afterDelete.status).toBe(403);
      const record = (await user.get('/api/tokens')).body.data.tokens.find((t: { profileId: string | null }) => t.profileId === bound.id);
      expect(record.status).toBe('active');
    });
  });
});

describe('the upload-start rate limit', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('allows 30 starts a minute per client IP, counted before authentication', async () => {
    const owner = await signUp(server.baseUrl);
    const token = await createToken(owner, ['files:upload']);
    const anonymous = new Client(server.baseUrl);
    const statuses: number[] = [];
    for (let i = 0; i < 15; i++) statuses.push((await uploadFile(anonymous, 'x.txt', 'x')).status);
    for (let i = 0; i < 15; i++) statuses.push((await anonymous.post('/api/files/chunks', { filename: 'x', size: 1 })).status);
    expect(statuses.every((s) => s !== 429)).toBe(true);
    const limited = await uploadFile(anonymous, 'x.txt', 'x', { token });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: 'Too many requests' });
    expect(limited.headers.get('retry-after')).toBe('60');
    // Other routes are not limited.
    expect((await owner.get('/api/auth/me')).status).toBe(200);
  });
});
