import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dialectUnderTest, startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';
import { uploadFile } from '../support/uploads.ts';
import { storageEnv } from '../support/storage-env.ts';

/**
 * Several processes on one database: with STORAGE=local the bytes are in DATA_DIR, so a process with
 * another DATA_DIR is refused at start-up; with S3 the bucket is shared and DATA_DIR is not.
 */
const servers: TestServer[] = [];
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const stop of stops.splice(0)) await stop();
});

async function start(...args: Parameters<typeof startTestServer>): Promise<TestServer> {
  const server = await startTestServer(...args);
  servers.push(server);
  return server;
}

/** A server holding one uploaded file; returns it and the file's raw path. */
async function serverWithFile(env: Record<string, string> = {}) {
  const server = await start(env);
  const owner = await signUp(server.baseUrl);
  const upload = await uploadFile(owner, 'kept.txt', 'bytes of the kept file');
  expect(upload.status).toBe(200);
  return { server, raw: new URL(upload.body.data.rawUrl as string).pathname };
}

/**
 * The same database for a process with another DATA_DIR. The SQLite database lives in DATA_DIR
 * itself, so there it is a copy of the (closed) database file.
 */
async function sameDatabaseElsewhere(server: TestServer): Promise<string> {
  const otherDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-other-data-'));
  if (dialectUnderTest === 'sqlite') {
    servers.splice(servers.indexOf(server), 1);
    await server.close();
    fs.copyFileSync(path.join(server.dataDir, 'hoard.sqlite'), path.join(otherDir, 'hoard.sqlite'));
  }
  return otherDir;
}

describe('DATA_DIR of processes sharing a database', () => {
  it('STORAGE=local: a process whose DATA_DIR holds none of the database’s files is refused; one with the same DATA_DIR starts', async () => {
    const { server: first, raw } = await serverWithFile();
    const otherDir = await sameDatabaseElsewhere(first);

    await expect(start({}, { databaseUrl: first.databaseUrl, dataDir: otherDir })).rejects.toThrow(
      `DATA_DIR (${otherDir}) holds none of the 1 newest files the database lists. With STORAGE=local, every process sharing a database must use the same DATA_DIR`,
    );

    const same = await start({}, { databaseUrl: first.databaseUrl, dataDir: first.dataDir });
    const download = await new Client(same.baseUrl).get(raw);
    expect(download.status).toBe(200);
    expect(download.text).toBe('bytes of the kept file');
  });

  it('STORAGE=s3: a process with another DATA_DIR starts and serves the files', async () => {
    const s3 = await storageEnv('s3');
    stops.push(s3.stop);
    const { server: first, raw } = await serverWithFile(s3.env);
    const otherDir = await sameDatabaseElsewhere(first);

    const other = await start(s3.env, { databaseUrl: first.databaseUrl, dataDir: otherDir });
    const download = await new Client(other.baseUrl).get(raw);
    expect(download.status).toBe(200);
    expect(download.text).toBe('bytes of the kept file');
  });
});

describe('a DATA_DIR Hoard makes', () => {
  it('is readable by its user alone, and so is a new SQLite database in it', async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-made-'));
    const dataDir = path.join(parent, 'nested', 'data');
    const previous = process.umask(0o022);
    try {
      await start({}, { dataDir });
    } finally {
      process.umask(previous);
    }
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    if (dialectUnderTest === 'sqlite') expect(fs.statSync(path.join(dataDir, 'hoard.sqlite')).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(dataDir, 'secret.key')).mode & 0o777).toBe(0o600);
  });
});

describe('a DATA_DIR that others can reach into', () => {
  type Line = { level: number; msg?: string; [field: string]: unknown };
  const exposed = (lines: Line[]) => lines.filter((line) => line.level === 40 && /^DATA_DIR .* can be read by every user of this machine/.test(line.msg ?? ''));

  it('is told to the operator at every start (an instance from before Hoard made it private keeps its modes)', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-open-'));
    fs.chmodSync(dataDir, 0o755);
    const first: Line[] = [];
    const server = await start({}, { dataDir, databaseUrl: undefined }, first);
    servers.splice(servers.indexOf(server), 1);
    await server.close();
    expect(exposed(first).map((line) => line.msg)).toEqual([`DATA_DIR ${dataDir} can be read by every user of this machine (mode 755): it holds the database, the secret key and every private file's bytes; make it yours alone with: chmod 700 ${dataDir}`]);
    // Its modes are the operator's to change; a group may keep its access (for backups, say).
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o755);
    fs.chmodSync(dataDir, 0o750);
    const after: Line[] = [];
    await start({}, { dataDir, databaseUrl: undefined }, after);
    expect(after.length).toBeGreaterThan(0);
    expect(exposed(after)).toEqual([]);
  });
});

describe('a DATA_DIR restored without its secret.key', () => {
  it('is refused at start while the database holds secrets sealed with a key, rather than given a new key that opens none of them', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-restored-'));
    const first = await start({}, { dataDir, databaseUrl: undefined });
    const owner = await signUp(first.baseUrl);
    // The legacy upload credential is sealed with the key when first asked for.
    expect((await owner.get('/api/profile/upload-token')).status).toBe(200);
    servers.splice(servers.indexOf(first), 1);
    await first.close();
    const keyFile = path.join(dataDir, 'secret.key');
    const key = fs.readFileSync(keyFile, 'utf8').trim();
    fs.rmSync(keyFile);

    await expect(start({}, { dataDir, databaseUrl: undefined })).rejects.toThrow(`${keyFile} is missing, and the database holds secrets sealed with a key (two-factor secrets, upload credentials, webhook signing secrets): restore it from the backup, or set SECRET_KEY to the key. If the key is lost, set SECRET_KEY to a new one of at least 32 characters (README, "SECRET_KEY" says what then has to be made anew)`);
    expect(fs.existsSync(keyFile)).toBe(false);
    // Put back, it opens them again; a new key is taken when the operator sets one.
    fs.writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
    const restored = await start({}, { dataDir, databaseUrl: undefined });
    const signedIn = new Client(restored.baseUrl);
    expect((await signedIn.post('/api/auth/login', { email: owner.email, password: owner.password })).status).toBe(200);
    expect((await signedIn.get('/api/profile/upload-token')).body.data.uploadToken).toMatch(/\S/);
    servers.splice(servers.indexOf(restored), 1);
    await restored.close();
    fs.rmSync(keyFile);
    await start({ SECRET_KEY: 'a new key for an instance whose old one is lost' }, { dataDir, databaseUrl: undefined });
  });
});
