import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freshDatabaseUrl, startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { everyoneRole, withoutEveryonePermission } from '../support/roles.ts';
import { PNG_1X1 } from '../support/uploads.ts';
import { IMPORT_BATCH_FILES, newImportProgress, prepareImport, runImport } from '../../src/imports/import-tree.ts';
import { StoreThread } from '../../src/imports/store-thread.ts';
import { discardStored, reserveSlots } from '../../src/uploads/store-upload.ts';
import { expectStoredAsRecorded, providers, storageUnderTest, type StorageUnderTest } from '../support/stored-objects.ts';

// `npm run cli -- import` against a running test server's database and DATA_DIR, as an operator
// would run it beside a running instance: what it imports is then read back through the HTTP API.

let server: TestServer;
let owner: Awaited<ReturnType<typeof signUp>>;
const trees: string[] = [];

beforeAll(async () => {
  server = await startTestServer({ WEBHOOK_ALLOW_PRIVATE: 'true' });
  // The first account is the instance's administrator: it changes roles, quotas and settings.
  owner = await signUp(server.baseUrl);
});
afterAll(async () => {
  await server.close();
  for (const tree of trees) fs.rmSync(tree, { recursive: true, force: true });
});

/** A new account, made by the administrator (registration is closed after the first), signed in. */
async function member(administrator: Client = owner, baseUrl = server.baseUrl): Promise<Client & { email: string; userId: string }> {
  const email = uniqueEmail('import');
  const created = await administrator.post('/api/users', { email, password: 'member password' });
  expect(created.status, created.text).toBe(201);
  const client = new Client(baseUrl) as Client & { email: string; userId: string };
  expect((await client.post('/api/auth/login', { email, password: 'member password' })).status).toBe(200);
  client.email = email;
  client.userId = created.body.data.user.id;
  return client;
}

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the command-line tool with the server's environment; resolves when it exits. */
function cli(...args: string[]): Promise<Run> {
  return cliOf(server, ...args);
}

/** The same with the environment of another instance. */
function cliOf(instance: TestServer, ...args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['src/cli/main.ts', ...args], { env: { ...process.env, ...instance.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** A directory holding `files` (relative path → content), removed after the tests. */
function makeTree(files: Record<string, string | Uint8Array>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-import-'));
  trees.push(root);
  for (const [relative, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true });
    fs.writeFileSync(path.join(root, relative), content);
  }
  return root;
}

interface Listed {
  id: string;
  name: string;
  urlPath: string;
  mimeType: string;
  visibility: string;
  folderId: string | null;
  tags: Array<{ id: string; name: string }>;
  expiresAt: string | null;
  thumbnailStatus: string;
  ocrStatus: string;
}

async function listFiles(client: Client): Promise<Listed[]> {
  const answer = await client.get('/api/files?limit=100&sortBy=name');
  expect(answer.status, answer.text).toBe(200);
  return answer.body.data as Listed[];
}

async function bytesOf(client: Client, url: string): Promise<Buffer> {
  const answer = await fetch(server.baseUrl + url, { headers: { cookie: client.cookieHeader() } });
  expect(answer.status, url).toBe(200);
  return Buffer.from(await answer.arrayBuffer());
}

/** The bytes stored at `key`, read through the instance's storage. */
async function storedBytes(instance: TestServer, key: string): Promise<Buffer> {
  const object = await instance.ctx.storage.get(key);
  const chunks: Buffer[] = [];
  for await (const chunk of object.stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const summaryCount = (stdout: string, label: string) => Number(new RegExp(`^${label.replace(/[()]/g, '\\$&')}: (\\d+)`, 'm').exec(stdout)?.[1]);

// Each test runs the command several times, each run a Node process of its own: on a loaded
// machine (the whole suite beside it) some passed the default 30 s.
describe('npm run cli -- import', { timeout: 120_000 }, () => {
  it('imports every regular file of a nested tree, byte for byte, typed and with media work, and names what it left out', async () => {
    const user = await member();
    const blob = randomBytes(200 * 1024);
    const tree = makeTree({
      'docs/readme.txt': 'hello from the import\n',
      'docs/deep/er/notes.md': '# Notes\n\nnested three levels down\n',
      'photos/pixel.png': PNG_1X1,
      'data/blob.bin': blob,
    });
    fs.symlinkSync('docs/readme.txt', path.join(tree, 'link-to-readme'));
    fs.symlinkSync('docs', path.join(tree, 'linked-docs'));
    fs.symlinkSync('/etc', path.join(tree, 'outside'));

    const run = await cli('import', tree, '--email', user.email);
    expect(run.status, run.stderr).toBe(0);
    expect(summaryCount(run.stdout, 'imported')).toBe(4);
    const totalBytes = Buffer.byteLength('hello from the import\n') + Buffer.byteLength('# Notes\n\nnested three levels down\n') + PNG_1X1.length + blob.length;
    expect(run.stdout).toMatch(new RegExp(`^imported: 4 files, ${totalBytes} bytes`, 'm'));
    expect(summaryCount(run.stdout, 'skipped (already imported)')).toBe(0);
    expect(summaryCount(run.stdout, 'failed')).toBe(0);
    expect(summaryCount(run.stdout, 'not imported (symbolic links, special files)')).toBe(3);
    for (const link of ['link-to-readme', 'linked-docs', 'outside']) expect(run.stdout).toContain(`  not a regular file: ${link}`);
    expect(run.stdout).toMatch(/^seconds: \d+\.\d\d$/m);
    expect(run.stdout).toMatch(/^rate: [\d.]+ files\/s, [\d.]+ MB\/s$/m);

    // Progress goes to stderr: stderr is no terminal here, so plain lines, the first and the last included.
    expect(run.stderr).toMatch(/^import: 0\/4 files, 0\.0 MB\/0\.2 MB, \d+ files\/s, [\d.]+ MB\/s, ETA /m);
    expect(run.stderr).toMatch(/^import: 4\/4 files, 0\.2 MB\/0\.2 MB, \d+ files\/s, [\d.]+ MB\/s, ETA 0:00$/m);
    expect(run.stdout).not.toMatch(/ETA/);

    const files = await listFiles(user);
    expect(files.map((f) => [f.name, f.mimeType])).toEqual([
      ['blob.bin', 'application/octet-stream'],
      ['notes.md', 'text/markdown'],
      ['pixel.png', 'image/png'],
      ['readme.txt', 'text/plain'],
    ]);
    const expected: Record<string, Uint8Array> = {
      'blob.bin': blob,
      'notes.md': Buffer.from('# Notes\n\nnested three levels down\n'),
      'pixel.png': PNG_1X1,
      'readme.txt': Buffer.from('hello from the import\n'),
    };
    for (const file of files) {
      // The owner's download, and the public raw URL (public: the built-in default).
      expect((await bytesOf(user, `/api/files/${file.id}/download`)).equals(expected[file.name]!)).toBe(true);
      expect(file.visibility).toBe('PUBLIC');
      expect((await bytesOf(new Client(server.baseUrl), `/api/files${file.urlPath}`)).equals(expected[file.name]!)).toBe(true);
    }
    // The thumbnail and text jobs were committed with the image (contract §10); the test server runs none.
    const pixel = files.find((f) => f.name === 'pixel.png')!;
    expect([pixel.thumbnailStatus, pixel.ocrStatus]).toEqual(['pending', 'pending']);
    expect(files.find((f) => f.name === 'readme.txt')!.thumbnailStatus).toBe('unsupported');
  });

  it("applies the account's upload defaults and default profile, --profile and --folder, as POST /api/files does", async () => {
    const user = await member();
    const tag = (await user.post('/api/tags', { name: 'imported' })).body.data.tag as { id: string };
    const folder = (await user.post('/api/folders', { name: 'Library' })).body.data.folder as { id: string };
    const byDefault = (await user.post('/api/upload-profiles', { name: 'Default', options: { randomizeFileUrls: true, tagIds: [tag.id] } })).body.data.profile as { id: string };
    const expiring = (await user.post('/api/upload-profiles', { name: 'Expiring', options: { visibility: 'PUBLIC', expiration: 'DAY', expiryAction: 'SET_PRIVATE' } })).body.data.profile as { id: string };
    expect((await user.patch('/api/account', { defaultProfileId: byDefault.id, uploadDefaults: { visibility: 'PRIVATE' } })).status).toBe(200);

    // The account's defaults under its default profile, into a folder.
    const first = await cli('import', makeTree({ 'a/first.txt': 'first' }), '--email', user.email, '--folder', folder.id);
    expect(first.status, first.stderr).toBe(0);
    // --profile none bypasses the default profile; the account's defaults still apply.
    const second = await cli('import', makeTree({ 'second.txt': 'second' }), '--email', user.email, '--profile', 'none');
    expect(second.status, second.stderr).toBe(0);
    const third = await cli('import', makeTree({ 'third.txt': 'third' }), '--email', user.email, '--profile', expiring.id);
    expect(third.status, third.stderr).toBe(0);

    const files = await listFiles(user);
    expect(files).toHaveLength(3);
    const randomized = files.find((f) => !['second.txt', 'third.txt'].includes(f.name))!;
    expect(randomized.name).toMatch(/^[A-Za-z0-9]+\.txt$/);
    expect(randomized.name).not.toBe('first.txt');
    expect(randomized).toMatchObject({ visibility: 'PRIVATE', folderId: folder.id, tags: [{ id: tag.id, name: 'imported' }], expiresAt: null });
    expect(files.find((f) => f.name === 'second.txt')).toMatchObject({ visibility: 'PRIVATE', folderId: null, tags: [], expiresAt: null });
    const expiringFile = files.find((f) => f.name === 'third.txt')!;
    expect(expiringFile).toMatchObject({ visibility: 'PUBLIC', folderId: null, tags: [] });
    const day = Date.parse(expiringFile.expiresAt!) - Date.now();
    expect(day).toBeGreaterThan(23 * 3_600_000);
    expect(day).toBeLessThanOrEqual(24 * 3_600_000);
  });

  it('refuses an account without the permission to upload or one its options need, in one line; without files.share files are private', async () => {
    const user = await member();
    const folder = (await user.post('/api/folders', { name: 'F' })).body.data.folder as { id: string };
    const tree = makeTree({ 'one.txt': 'one' });
    const everyone = await everyoneRole(owner);

    await withoutEveryonePermission(owner, everyone, 'files.upload', async () => {
      const refused = await cli('import', tree, '--email', user.email);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toBe(`hoard: ${user.email} may not upload files: no role of theirs grants files.upload\n`);
      expect(refused.stdout).toBe('');
    });
    await withoutEveryonePermission(owner, everyone, 'folders.manage', async () => {
      const refused = await cli('import', tree, '--email', user.email, '--folder', folder.id);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toBe(`hoard: ${user.email} may not upload with these options: a folder needs folders.manage\n`);
    });
    expect(await listFiles(user)).toEqual([]);

    // POST /api/files rule 1: without files.share the upload is private.
    await withoutEveryonePermission(owner, everyone, 'files.share', async () => {
      const run = await cli('import', tree, '--email', user.email);
      expect(run.status, run.stderr).toBe(0);
    });
    expect((await listFiles(user)).map((f) => [f.name, f.visibility])).toEqual([['one.txt', 'PRIVATE']]);

    // A suspended account is refused at the start, in its own words, and nothing is read.
    expect((await owner.patch(`/api/users/${user.userId}`, { suspended: true })).status).toBe(200);
    const suspended = await cli('import', makeTree({ 'two.txt': 'two' }), '--email', user.email);
    expect([suspended.status, suspended.stderr, suspended.stdout]).toEqual([1, `hoard: ${user.email} is suspended: resume the account (Administration → Users) before importing into it\n`, '']);
    const names = await server.ctx.db.selectFrom('files').select('name').where('userId', '=', user.userId).execute();
    expect(names.map((f) => f.name)).toEqual(['one.txt']);
  });

  it('stops at the quota with a clear message and keeps what it imported; a later run continues from there', async () => {
    const user = await member();
    expect((await owner.patch(`/api/users/${user.userId}`, { quotaBytes: 2500 })).status).toBe(200);
    const tree = makeTree({ 'a.bin': randomBytes(1000), 'b.bin': randomBytes(1000), 'c.bin': randomBytes(1000), 'd.bin': randomBytes(10) });

    const stopped = await cli('import', tree, '--email', user.email);
    expect(stopped.status).toBe(1);
    expect(stopped.stderr.trim().split('\n').at(-1)).toBe(
      `hoard: The storage quota of ${user.email} is reached at c.bin (1000 bytes, 500 bytes left): the import stopped. The files imported so far stay; run the import again once there is room, and it continues from there.`,
    );
    expect(summaryCount(stopped.stdout, 'imported')).toBe(2);
    expect((await listFiles(user)).map((f) => f.name)).toEqual(['a.bin', 'b.bin']);
    expect((await user.get('/api/account')).body.data.account.usedBytes).toBe(2000);
    // Room held by an unfinished chunked upload, which the account's usage does not show, is named.
    const held = await user.post('/api/files/chunks', { filename: 'held.bin', size: 300 });
    expect(held.status, held.text).toBe(200);
    const heldRun = await cli('import', tree, '--email', user.email);
    expect(heldRun.status).toBe(1);
    expect(heldRun.stderr.trim().split('\n').at(-1)).toMatch(/ is reached at c\.bin \(1000 bytes, 200 bytes left; 300 bytes more are held by unfinished chunked uploads\): the import stopped/);

    expect((await owner.patch(`/api/users/${user.userId}`, { quotaBytes: 10_000 })).status).toBe(200);
    const resumed = await cli('import', tree, '--email', user.email);
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(summaryCount(resumed.stdout, 'imported')).toBe(2);
    expect(summaryCount(resumed.stdout, 'skipped (already imported)')).toBe(2);
    expect((await listFiles(user)).map((f) => f.name)).toEqual(['a.bin', 'b.bin', 'c.bin', 'd.bin']);
  });

  it('fails a file over the maximum upload size, imports the others and exits 1 naming it', async () => {
    const user = await member();
    const tree = makeTree({ 'big.bin': randomBytes(2000), 'small.txt': 'small' });
    expect((await owner.patch('/api/settings', { maxUploadSizeBytes: 1500 })).status).toBe(200);
    try {
      const run = await cli('import', tree, '--email', user.email);
      expect(run.status).toBe(1);
      expect(summaryCount(run.stdout, 'imported')).toBe(1);
      expect(summaryCount(run.stdout, 'failed')).toBe(1);
      expect(run.stdout).toContain('  failed big.bin: larger than the maximum upload size of 1.4 KiB (1500 bytes)');
      expect(run.stderr.trim().split('\n').at(-1)).toBe('hoard: Not everything could be imported: 1 failed (listed above), the rest was imported');
    } finally {
      await owner.patch('/api/settings', { maxUploadSizeBytes: 1073741824 });
    }
    expect((await listFiles(user)).map((f) => f.name)).toEqual(['small.txt']);
  });

  it('fails a file whose path in the tree is too long to remember, on both databases alike', async () => {
    const user = await member();
    const deep = Array.from({ length: 9 }, (_, i) => `${i}`.repeat(240)).join('/');
    const tree = makeTree({ [`${deep}/far.txt`]: 'far', 'near.txt': 'near' });
    const run = await cli('import', tree, '--email', user.email);
    expect(run.status).toBe(1);
    expect([summaryCount(run.stdout, 'imported'), summaryCount(run.stdout, 'failed')]).toEqual([1, 1]);
    expect(run.stdout).toContain(`  failed ${deep}/far.txt: its path in the tree is longer than 2048 bytes, more than an import can remember`);
    expect((await listFiles(user)).map((f) => f.name)).toEqual(['near.txt']);
  });

  it('sends a signed file.ready event for every file it imports', async () => {
    const received: Array<{ payload: any; verified: boolean }> = [];
    let secret = '';
    const receiver = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let verified = true;
        try {
          new Webhook(secret).verify(body, request.headers as Record<string, string>);
        } catch {
          verified = false;
        }
        received.push({ payload: JSON.parse(body), verified });
        response.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const user = await member();
      const created = await user.post('/api/webhooks', { name: 'imports', url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` });
      expect(created.status).toBe(201);
      secret = created.body.data.secret;

      const run = await cli('import', makeTree({ 'x/one.txt': 'one', 'two.md': '# two' }), '--email', user.email);
      expect(run.status, run.stderr).toBe(0);
      // The command runs no jobs: the server's job runner picks the deliveries up from the shared queue.
      const deadline = Date.now() + 15_000;
      while (received.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      const events = received.map((r) => ({ verified: r.verified, type: r.payload.type, version: r.payload.version, name: r.payload.data.name, size: r.payload.data.size, mimeType: r.payload.data.mimeType }));
      expect(events.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
        { verified: true, type: 'file.ready', version: 1, name: 'one.txt', size: 3, mimeType: 'text/plain' },
        { verified: true, type: 'file.ready', version: 1, name: 'two.md', size: 5, mimeType: 'text/markdown' },
      ]);
      const files = await listFiles(user);
      for (const event of received) {
        const file = files.find((f) => f.id === event.payload.data.id)!;
        expect(event.payload.data.rawUrl).toBe(`${server.baseUrl}/api/files${file.urlPath}`);
      }
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it('resumes: a second run skips everything, a changed file is imported again as a new file, and so is a file deleted through the API', async () => {
    const user = await member();
    const tree = makeTree({ 'a/one.txt': 'one', 'a/b/two.txt': 'two', 'three.txt': 'three' });
    const first = await cli('import', tree, '--email', user.email);
    expect(first.status, first.stderr).toBe(0);
    expect(summaryCount(first.stdout, 'imported')).toBe(3);

    const again = await cli('import', tree, '--email', user.email);
    expect(again.status, again.stderr).toBe(0);
    expect(summaryCount(again.stdout, 'imported')).toBe(0);
    expect(summaryCount(again.stdout, 'skipped (already imported)')).toBe(3);
    expect(await listFiles(user)).toHaveLength(3);

    // Same path, other bytes: a new file beside the one imported before (named as an upload would be).
    fs.writeFileSync(path.join(tree, 'a/b/two.txt'), 'two, edited');
    const changed = await cli('import', tree, '--email', user.email);
    expect(changed.status, changed.stderr).toBe(0);
    expect([summaryCount(changed.stdout, 'imported'), summaryCount(changed.stdout, 'skipped (already imported)')]).toEqual([1, 2]);
    const files = await listFiles(user);
    expect(files.map((f) => f.name)).toEqual(['one.txt', 'three.txt', 'two-1.txt', 'two.txt']);
    expect((await bytesOf(user, `/api/files/${files.find((f) => f.name === 'two-1.txt')!.id}/download`)).toString()).toBe('two, edited');
    expect((await bytesOf(user, `/api/files/${files.find((f) => f.name === 'two.txt')!.id}/download`)).toString()).toBe('two');

    // A deleted file takes its record with it: the next run imports that path again.
    const three = files.find((f) => f.name === 'three.txt')!;
    expect((await user.delete(`/api/files/${three.id}`)).status).toBe(204);
    const afterDelete = await cli('import', tree, '--email', user.email);
    expect(afterDelete.status, afterDelete.stderr).toBe(0);
    expect([summaryCount(afterDelete.stdout, 'imported'), summaryCount(afterDelete.stdout, 'skipped (already imported)')]).toEqual([1, 2]);
    const now = await listFiles(user);
    expect(now.map((f) => f.name)).toEqual(['one.txt', 'three.txt', 'two-1.txt', 'two.txt']);
    expect(now.find((f) => f.name === 'three.txt')!.id).not.toBe(three.id);

    // What one account imported is not another's: the same tree imports in full for someone else.
    const other = await member();
    const theirs = await cli('import', tree, '--email', other.email);
    expect(summaryCount(theirs.stdout, 'imported')).toBe(3);
  });

  it('stops on Ctrl-C once the batches in flight are done, exits 130, and the next run imports the rest', async () => {
    const user = await member();
    const files: Record<string, Uint8Array> = {};
    for (let i = 0; i < 3000; i++) files[`d${i % 3}/f${i}.bin`] = randomBytes(64);
    const tree = makeTree(files);
    // Ctrl-C as soon as the import has begun: before, during or after the walk of the tree, the
    // import ends the same way.
    const interrupted = await new Promise<Run>((resolve, reject) => {
      const child = spawn(process.execPath, ['src/cli/main.ts', 'import', tree, '--email', user.email], { env: { ...process.env, ...server.env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        if (!stderr.includes('reading the tree') && (stderr + chunk).includes('reading the tree')) child.kill('SIGINT');
        stderr += chunk;
      });
      child.on('error', reject);
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });
    expect(interrupted.status, interrupted.stderr).toBe(130);
    const left = Number(/hoard: Interrupted: (\d+) files were not imported; run the same import again to continue/.exec(interrupted.stderr)?.[1]);
    expect(left).toBeGreaterThan(0);
    const before = (await user.get('/api/files?limit=1')).body.pagination.total as number;
    expect(before).toBe(3000 - left);

    const resumed = await cli('import', tree, '--email', user.email);
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(summaryCount(resumed.stdout, 'imported')).toBe(left);
    expect(summaryCount(resumed.stdout, 'skipped (already imported)')).toBe(3000 - left);
    expect((await user.get('/api/files?limit=1')).body.pagination.total).toBe(3000);
    await expectStoredAsRecorded(server, await storageUnderTest('local'), user.userId);
  });

  it("leaves out the instance's own data directory when the tree holds it, and refuses a tree inside it", async () => {
    // A home directory, say, that holds the instance's DATA_DIR: its database and stored bytes are
    // not the library, and importing them would grow with every run.
    const tree = makeTree({ 'docs/a.txt': 'a', 'z.txt': 'zed' });
    const own = await startTestServer({}, { databaseUrl: await freshDatabaseUrl(), dataDir: path.join(tree, 'hoard-data') });
    try {
      const admin = await signUp(own.baseUrl);
      const first = await cliOf(own, 'import', tree, '--email', admin.email);
      expect(first.status, first.stderr).toBe(0);
      expect(summaryCount(first.stdout, 'imported')).toBe(2);
      expect(first.stdout).toContain("not imported (this instance's data directory, DATA_DIR): hoard-data");
      const again = await cliOf(own, 'import', tree, '--email', admin.email);
      expect(again.status, again.stderr).toBe(0);
      expect([summaryCount(again.stdout, 'imported'), summaryCount(again.stdout, 'skipped (already imported)')]).toEqual([0, 2]);
      const listed = await admin.get('/api/files?sortBy=name');
      expect(listed.body.data.map((f: { name: string }) => f.name)).toEqual(['a.txt', 'z.txt']);

      for (const inside of [path.join(tree, 'hoard-data'), path.join(tree, 'hoard-data', 'files')]) {
        const refused = await cliOf(own, 'import', inside, '--email', admin.email);
        expect(refused.status, refused.stdout).toBe(1);
        expect(refused.stderr.trim()).toBe(`hoard: ${inside} is inside this instance's data directory (DATA_DIR ${path.join(tree, 'hoard-data')}), whose files are the instance's own: nothing there can be imported`);
      }
    } finally {
      await own.close();
    }
  });

  it('answers an unknown account, folder, profile or directory with one line and exit 1, a usage mistake with exit 2', async () => {
    const user = await member();
    const tree = makeTree({ 'one.txt': 'one' });
    // An unknown email names the database searched, as the other commands do.
    const searched = server.env.DATABASE_URL ? `the PostgreSQL database ${new URL(server.env.DATABASE_URL).host}${new URL(server.env.DATABASE_URL).pathname}` : `the SQLite database ${path.join(server.env.DATA_DIR!, 'hoard.sqlite')}`;
    const cases: Array<[string[], string]> = [
      [['--email', 'nobody@example.test'], `hoard: No account with the email nobody@example.test in ${searched}`],
      [['--email', user.email, '--folder', 'nofolder'], `hoard: No folder nofolder in the account of ${user.email}`],
      [['--email', user.email, '--profile', 'noprofile'], `hoard: No upload profile noprofile in the account of ${user.email}`],
    ];
    for (const [options, message] of cases) {
      const run = await cli('import', tree, ...options);
      expect(run.status, message).toBe(1);
      expect(run.stderr).toBe(`${message}\n`);
      expect(run.stdout).toBe('');
    }
    // Another account's folder is not this one's.
    const otherFolder = (await owner.post('/api/folders', { name: 'Not yours' })).body.data.folder as { id: string };
    const foreign = await cli('import', tree, '--email', user.email, '--folder', otherFolder.id);
    expect(foreign.stderr).toBe(`hoard: No folder ${otherFolder.id} in the account of ${user.email}\n`);

    const missing = await cli('import', path.join(tree, 'nothing-here'), '--email', user.email);
    expect([missing.status, missing.stderr]).toEqual([1, `hoard: No directory at ${path.join(tree, 'nothing-here')}\n`]);
    const notDirectory = await cli('import', path.join(tree, 'one.txt'), '--email', user.email);
    expect([notDirectory.status, notDirectory.stderr]).toEqual([1, `hoard: ${path.join(tree, 'one.txt')} is not a directory\n`]);

    const noEmail = await cli('import', tree);
    expect(noEmail.status).toBe(2);
    expect(noEmail.stderr).toMatch(/^import needs one directory and --email\n\nUsage: npm run cli -- <command>/);
    expect(noEmail.stderr).toContain('import DIR --email E [--folder ID] [--profile ID]');
    expect((await cli('import', tree, tree, '--email', user.email)).status).toBe(2);
    expect((await cli('import', tree, '--email', user.email, '--frobnicate')).status).toBe(2);
    expect(await listFiles(user)).toEqual([]);
  });
});

// Imports run in the test's process, where the test can act between their steps.
describe.each(providers)('imports run in this process, on %s storage', (provider) => {
  let storage: StorageUnderTest;
  let instance: TestServer;
  /** The instance's first account, its administrator. */
  let admin: Awaited<ReturnType<typeof signUp>>;
  beforeAll(async () => {
    storage = await storageUnderTest(provider);
    instance = await startTestServer(storage.env);
    admin = await signUp(instance.baseUrl);
  });
  afterAll(async () => {
    await instance.close();
    await storage.stop();
  });

  // Imports commit their files in batches (docs/decisions.md, "Importing a library"): two runs of
  // one tree at once race for every file, so that batches are refused (a file the other run
  // committed since) and committed again file by file.
  it('two imports of one tree at once import every file exactly once, with no bytes left without a record', async () => {
    const files: Record<string, Uint8Array> = {};
    // Two batches and a bit, in two directories.
    const count = 2 * IMPORT_BATCH_FILES + 12;
    for (let i = 0; i < count; i++) files[`${i % 2 ? 'odd' : 'even'}/f${String(i).padStart(3, '0')}.bin`] = randomBytes(100 + i);
    const tree = makeTree(files);
    // In one process, so that both look up each batch's earlier imports before either commits it.
    const run = async () => {
      const prepared = await prepareImport(instance.ctx, { directory: tree, email: admin.email });
      return runImport(instance.ctx, prepared, newImportProgress(prepared));
    };
    const [first, second] = await Promise.all([run(), run()]);
    for (const outcome of [first, second]) {
      expect(outcome.failures).toEqual([]);
      expect(outcome.progress.imported + outcome.progress.skipped).toBe(count);
    }
    expect(first.progress.imported + second.progress.imported).toBe(count);

    const listed = await admin.get('/api/files?limit=100&sortBy=name&sortOrder=asc');
    expect(listed.body.pagination.total).toBe(count);
    const firstName = Object.keys(files)[0]!;
    expect(listed.body.data[0].name).toBe('f000.bin');
    const bytes = await fetch(`${instance.baseUrl}/api/files${listed.body.data[0].urlPath}`, { headers: { cookie: admin.cookieHeader() } });
    expect(Buffer.from(await bytes.arrayBuffer()).equals(Buffer.from(files[firstName]!))).toBe(true);
    await expectStoredAsRecorded(instance, storage, admin.userId);
    // No crash net is left waiting for bytes that were committed or removed.
    const nets = await instance.ctx.db.selectFrom('jobs').select('id').where('type', '=', 'storage.cleanup').execute();
    expect(nets).toEqual([]);
  });

  it('killed (SIGKILL) in the middle, leaves every committed file whole and no byte without a record once the nets have run; the next run imports the rest', { timeout: 120_000 }, async () => {
    const account = await member(admin, instance.baseUrl);
    // Small files (read whole, created in place) and larger ones (streamed through a temporary file);
    // fewer than 1,000 in all, which s3rver lists in one page.
    const files: Record<string, Buffer> = {};
    for (let i = 0; i < 900; i++) files[`d${i % 3}/f${String(i).padStart(4, '0')}.bin`] = randomBytes(i % 50 === 0 ? 150_000 : 4_000 + i);
    const tree = makeTree(files);
    const child = spawn(process.execPath, ['src/cli/main.ts', 'import', tree, '--email', account.email], { env: { ...process.env, ...instance.env }, stdio: 'ignore' });
    const exited = new Promise((resolve) => child.on('close', resolve));
    const committed = async () => (await instance.ctx.db.selectFrom('files').select('id').where('userId', '=', account.userId).execute()).length;
    await vi.waitFor(async () => expect(await committed()).toBeGreaterThanOrEqual(32), { timeout: 60_000, interval: 10 });
    child.kill('SIGKILL');
    await exited;
    const before = await committed();
    expect(before).toBeLessThan(900);

    // Time passes and the nets armed for the files in flight run.
    const past = Date.now() - 2 * 3600_000;
    await instance.ctx.db.updateTable('jobs').set({ runAt: past }).where('type', '=', 'storage.cleanup').execute();
    await instance.jobs.runDueJobs();
    await vi.waitFor(() => expectStoredAsRecorded(instance, storage, account.userId), { timeout: 20_000, interval: 200 });
    const expectWhole = async () => {
      const recorded = await instance.ctx.db.selectFrom('importedFiles').innerJoin('files', 'files.id', 'importedFiles.fileId').select(['relativePath', 'storageKey', 'importedFiles.sha256']).where('files.userId', '=', account.userId).execute();
      for (const { relativePath, storageKey, sha256 } of recorded) {
        const bytes = await storedBytes(instance, storageKey);
        expect(bytes.equals(files[relativePath]!), relativePath).toBe(true);
        expect(createHash('sha256').update(bytes).digest('hex')).toBe(sha256);
      }
      return recorded.length;
    };
    expect(await expectWhole()).toBe(before);

    const rest = await cliOf(instance, 'import', tree, '--email', account.email);
    expect(rest.status, rest.stderr).toBe(0);
    expect([summaryCount(rest.stdout, 'imported'), summaryCount(rest.stdout, 'skipped (already imported)')]).toEqual([900 - before, before]);
    expect(await expectWhole()).toBe(900);
    await expectStoredAsRecorded(instance, storage, account.userId);
  });

  it('stores each file as it is read, whatever size it had when the tree was measured', async () => {
    const account = await member(admin, instance.baseUrl);
    const tree = makeTree({ 'grows.bin': randomBytes(10), 'shrinks.bin': randomBytes(100_000), 'empties.txt': 'some text', 'stays.bin': randomBytes(70_000) });
    const prepared = await prepareImport(instance.ctx, { directory: tree, email: account.email });
    // The totals shown come from measuring the tree; what is stored and charged is what is read.
    const now: Record<string, Buffer> = { 'grows.bin': randomBytes(300_000), 'shrinks.bin': randomBytes(5), 'empties.txt': Buffer.alloc(0), 'stays.bin': fs.readFileSync(path.join(tree, 'stays.bin')) };
    for (const [name, bytes] of Object.entries(now)) fs.writeFileSync(path.join(tree, name), bytes);
    const outcome = await runImport(instance.ctx, prepared, newImportProgress(prepared));
    expect(outcome.failures).toEqual([]);
    const total = Object.values(now).reduce((sum, bytes) => sum + bytes.length, 0);
    expect(outcome.progress).toMatchObject({ totalFiles: 4, totalBytes: 10 + 100_000 + 9 + 70_000, doneFiles: 4, imported: 4, importedBytes: total });

    const listed = await account.get('/api/files?limit=10&sortBy=name');
    expect(listed.body.pagination.total).toBe(4);
    for (const file of listed.body.data as Array<{ name: string; urlPath: string }>) {
      const expected = now[file.name]!;
      const served = await fetch(`${instance.baseUrl}/api/files${file.urlPath}`, { headers: { cookie: account.cookieHeader() } });
      expect(served.status, file.name).toBe(200);
      expect(Buffer.from(await served.arrayBuffer()).equals(expected), file.name).toBe(true);
    }
    // Quota is charged with what was stored.
    const used = await instance.ctx.db.selectFrom('users').select('usedBytes').where('id', '=', account.userId).executeTakeFirstOrThrow();
    expect(Number(used.usedBytes)).toBe(total);
    await expectStoredAsRecorded(instance, storage, account.userId);
  });
  it('imports files and directories whose names are not UTF-8, named as Latin-1, and skips them when run again', async () => {
    const account = await member(admin, instance.baseUrl);
    // Linux names are bytes; a tree copied from an older system may name files in Latin-1.
    const tree = makeTree({ 'ok.txt': 'fine' });
    const cafe = randomBytes(20_000);
    fs.writeFileSync(Buffer.concat([Buffer.from(`${tree}/caf`), Buffer.from([0xe9]), Buffer.from('.txt')]), cafe);
    const dir = Buffer.concat([Buffer.from(`${tree}/d`), Buffer.from([0xe9]), Buffer.from('j'), Buffer.from([0xe0])]);
    fs.mkdirSync(dir);
    fs.writeFileSync(Buffer.concat([dir, Buffer.from('/inner.txt')]), 'inner');

    const prepared = await prepareImport(instance.ctx, { directory: tree, email: account.email });
    const outcome = await runImport(instance.ctx, prepared, newImportProgress(prepared));
    expect(outcome.failures).toEqual([]);
    expect(outcome.progress).toMatchObject({ totalFiles: 3, imported: 3 });
    const listed = await account.get('/api/files?limit=10&sortBy=name');
    const files = listed.body.data as Array<{ name: string; urlPath: string }>;
    expect(files.map((f) => f.name)).toEqual(['café.txt', 'inner.txt', 'ok.txt']);
    const served = await fetch(`${instance.baseUrl}/api/files${files[0]!.urlPath}`, { headers: { cookie: account.cookieHeader() } });
    expect(Buffer.from(await served.arrayBuffer()).equals(cafe)).toBe(true);
    const recorded = await instance.ctx.db.selectFrom('importedFiles').select('relativePath').where('userId', '=', account.userId).orderBy('relativePath').execute();
    expect(recorded.map((r) => r.relativePath)).toEqual(['café.txt', 'déjà/inner.txt', 'ok.txt']);

    const again = await prepareImport(instance.ctx, { directory: tree, email: account.email });
    const second = await runImport(instance.ctx, again, newImportProgress(again));
    expect(second.progress).toMatchObject({ imported: 0, skipped: 3, failed: 0 });
    await expectStoredAsRecorded(instance, storage, account.userId);
  });

  it("renews the crash nets of stored files while they wait for their batch's commit; none is left after it", async () => {
    const account = await member(admin, instance.baseUrl);
    const files: Record<string, Buffer> = {};
    for (let i = 0; i < 3 * IMPORT_BATCH_FILES; i++) files[`f${String(i).padStart(4, '0')}.bin`] = randomBytes(2_000);
    const tree = makeTree(files);
    // The nets' due times as they were first seen, and every net seen moved later while it waited.
    const firstDue = new Map<string, number>();
    const renewed = new Set<string>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const nets = await instance.ctx.db.selectFrom('jobs').select(['dedupeKey', 'runAt']).where('type', '=', 'storage.cleanup').execute();
        for (const { dedupeKey, runAt } of nets) {
          const first = firstDue.get(dedupeKey!);
          if (first === undefined) firstDue.set(dedupeKey!, Number(runAt));
          else if (Number(runAt) > first) renewed.add(dedupeKey!);
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const prepared = await prepareImport(instance.ctx, { directory: tree, email: account.email });
    // Renewed every 100 ms here (every minute by default): small files show no progress of their own.
    const outcome = await runImport(instance.ctx, prepared, newImportProgress(prepared), { renewNetsMs: 100 });
    watching = false;
    await watch;
    expect(outcome.progress).toMatchObject({ imported: 3 * IMPORT_BATCH_FILES, failed: 0 });
    expect(firstDue.size).toBeGreaterThan(0);
    expect(renewed.size).toBeGreaterThan(0);
    // Cancelled with their commits, and no renewal landed after one.
    expect(await instance.ctx.db.selectFrom('jobs').select('id').where('type', '=', 'storage.cleanup').execute()).toEqual([]);
    await expectStoredAsRecorded(instance, storage, account.userId);
  });

  it('the storing thread reads each file to its end, whatever size the walk saw', async () => {
    const account = await member(admin, instance.baseUrl);
    const now: Record<string, Buffer> = { 'grew.bin': randomBytes(300_000), 'shrank.bin': randomBytes(5), 'emptied.txt': Buffer.alloc(0) };
    const tree = makeTree(now);
    // The read buffer is sized by the walked size (src/imports/store-thread.ts); each of these files
    // changed after its walk: a buffer of 11 bytes for 300,000, of 100,001 for 5, of 10 for none.
    const walked: Record<string, number> = { 'grew.bin': 10, 'shrank.bin': 100_000, 'emptied.txt': 9 };
    const names = Object.keys(now);
    const slots = await reserveSlots(instance.ctx, account.userId, names.length);
    const thread = new StoreThread(instance.ctx.config, { concurrency: 2, onAlive: () => undefined });
    try {
      const results = await thread.store(names.map((name, i) => ({ path: Buffer.from(path.join(tree, name)), key: slots[i]!.key, maxBytes: 1_000_000, walkedSize: walked[name]! })));
      for (const [i, name] of names.entries()) {
        const expected = now[name]!;
        expect(results[i], name).toMatchObject({ kind: 'stored', size: expected.length, sha256: createHash('sha256').update(expected).digest('hex') });
        expect((await storedBytes(instance, slots[i]!.key)).equals(expected), name).toBe(true);
      }
    } finally {
      await thread.close();
      await Promise.all(slots.map((slot) => discardStored(instance.ctx, { id: slot.id, key: slot.key, size: 0, sha256: '', head: Buffer.alloc(0) })));
    }
  });

  it("the storing thread fails a file that is gone, became a directory or is over the limit, as that file's own failure, and stores nothing for it", async () => {
    const account = await member(admin, instance.baseUrl);
    // Small files (read whole) and large ones (streamed) alike.
    const tree = makeTree({ 'kept.bin': randomBytes(2_000), 'big.bin': randomBytes(90_000), 'over.bin': randomBytes(3_000) });
    fs.mkdirSync(path.join(tree, 'now-a-directory'));
    const requests = [
      { name: 'gone.bin', walkedSize: 500, maxBytes: 1_000_000 },
      { name: 'gone-large.bin', walkedSize: 500_000, maxBytes: 1_000_000 },
      { name: 'now-a-directory', walkedSize: 100, maxBytes: 1_000_000 },
      { name: 'over.bin', walkedSize: 3_000, maxBytes: 2_999 },
      { name: 'big.bin', walkedSize: 90_000, maxBytes: 89_999 },
      { name: 'kept.bin', walkedSize: 2_000, maxBytes: 2_000 },
    ];
    const slots = await reserveSlots(instance.ctx, account.userId, requests.length);
    const thread = new StoreThread(instance.ctx.config, { concurrency: 2, onAlive: () => undefined });
    try {
      const results = await thread.store(requests.map(({ name, walkedSize, maxBytes }, i) => ({ path: Buffer.from(path.join(tree, name)), key: slots[i]!.key, maxBytes, walkedSize })));
      expect(results.map((result) => (result.kind === 'unreadable' ? `unreadable ${result.code}` : result.kind))).toEqual(['unreadable ENOENT', 'unreadable ENOENT', 'unreadable EISDIR', 'tooLarge', 'tooLarge', 'stored']);
      for (const [i, slot] of slots.entries()) expect(await instance.ctx.storage.stat(slot.key), requests[i]!.name).toEqual(i === 5 ? { size: 2_000 } : null);
    } finally {
      await thread.close();
      await Promise.all(slots.map((slot) => discardStored(instance.ctx, { id: slot.id, key: slot.key, size: 0, sha256: '', head: Buffer.alloc(0) })));
    }
  });
});
