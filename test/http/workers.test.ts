import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { serverProcess, type ServerProcess } from '../support/server-process.ts';
import { Client, signUp } from '../support/client.ts';
import { createToken, uploadFile } from '../support/uploads.ts';

// WORKERS (src/workers.ts): several server processes on one port, sharing the database and the
// data directory. Each test runs `node src/main.ts` as production does, on SQLite or PostgreSQL.

let running: ServerProcess[] = [];
afterEach(() => {
  for (const p of running) p.stop();
  running = [];
});

async function start(env: Record<string, string>): Promise<ServerProcess> {
  const p = await serverProcess({ WORKERS: '2', ...env }, 'hoard-workers-');
  running.push(p);
  await p.start();
  return p;
}

/** The worker processes of a primary (its children running Node). */
function workerPids(primary: number): number[] {
  const out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(primary)], { encoding: 'utf8' });
  return out.split('\n').map((l) => Number(l.trim())).filter((n) => n > 0);
}

/** POST /api/files without credentials on a connection of its own; resolves with the status. */
function bareUploadStart(baseUrl: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${baseUrl}/api/files`, { method: 'POST', agent: false, headers: { connection: 'close', 'content-length': '0' } }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode!));
    });
    request.on('error', reject);
    request.end();
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Takes the database's write lock as another program would; resolves with its release. */
async function holdWriteLock(p: ServerProcess): Promise<() => Promise<void>> {
  if (p.databaseUrl) {
    const client = new pg.Client({ connectionString: p.databaseUrl });
    await client.connect();
    await client.query('begin');
    await client.query('lock table jobs, settings in access exclusive mode');
    return async () => {
      await client.query('commit');
      await client.end();
    };
  }
  const db = new Database(path.join(p.dataDir, 'hoard.sqlite'));
  db.exec('begin immediate');
  return async () => {
    db.exec('commit');
    db.close();
  };
}

async function answers(baseUrl: string): Promise<boolean> {
  try {
    return (await fetch(`${baseUrl}/api/health`, { signal: AbortSignal.timeout(1000) })).status === 200;
  } catch {
    return false;
  }
}

describe('WORKERS=2', () => {
  it('serves one port from two processes, each with its own upload-start limit', async () => {
    const p = await start({ UPLOAD_RATE_LIMIT: '3' });
    expect(workerPids(p.pid()!)).toHaveLength(2);
    // Connections are handed in turn to the workers that are listening; each lets 3 upload starts a
    // minute through (spec, Limits: per client IP per application process), so two processes let
    // exactly 6 through. The second may start listening a moment after the first answers: starts
    // are sent until 6 have passed, then more, which must all be refused.
    let passed = 0;
    const deadline = Date.now() + 20_000;
    while (passed < 6 && Date.now() < deadline) {
      const status = await bareUploadStart(p.baseUrl);
      if (status !== 429) {
        expect(status).toBe(401);
        passed += 1;
      } else {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    expect(passed).toBe(6);
    const after: number[] = [];
    for (let i = 0; i < 8; i++) after.push(await bareUploadStart(p.baseUrl));
    expect(after).toEqual(Array(8).fill(429));
  });

  it("says the start's advice to the operator once, not once per worker", async () => {
    // A largest upload above a quarter of the temporary room: advice every start gives.
    const output: string[] = [];
    const p = await serverProcess({ WORKERS: '2', LOG_LEVEL: 'warn', MAX_UPLOAD_SIZE: '400000000', CHUNKED_UPLOAD_TEMP_LIMIT: '1000000000' }, 'hoard-workers-', { output });
    running.push(p);
    await p.start();
    await vi.waitFor(() => expect(workerPids(p.pid()!)).toHaveLength(2), { timeout: 20_000 });
    // Both serve: the second has finished its start too.
    await sleep(1500);
    const advice = output.filter((line) => line.includes('is more than a quarter of CHUNKED_UPLOAD_TEMP_LIMIT'));
    expect(advice).toHaveLength(1);
  });

  it('takes concurrent uploads through both processes without a failure, and runs each job once', async () => {
    const hits: string[] = [];
    const receiver = http.createServer((request, response) => {
      hits.push(String(request.headers['webhook-id']));
      request.resume();
      request.on('end', () => response.end('ok'));
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const p = await start({ UPLOAD_RATE_LIMIT: '0', WEBHOOK_ALLOW_PRIVATE: 'true' });
      const owner = await signUp(p.baseUrl);
      const hook = await owner.post('/api/webhooks', { name: 'counter', url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` });
      expect(hook.status).toBe(201);
      // Many clients at once (each its own connections), so both processes commit at the same time.
      const clients = Array.from({ length: 8 }, () => Object.assign(new Client(p.baseUrl), { cookies: new Map(owner.cookies) }));
      const count = 48;
      const statuses = await Promise.all(Array.from({ length: count }, (_, i) => uploadFile(clients[i % clients.length]!, `file-${i}.txt`, `contents ${i}`).then((r) => r.status)));
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      const listing = await owner.get('/api/files?limit=100');
      expect(listing.body.pagination.total).toBe(count);
      expect(new Set(listing.body.data.map((f: { name: string }) => f.name)).size).toBe(count);
      // Every file.ready delivery arrives, and none twice, though both processes run the job loop.
      await vi.waitFor(() => expect(hits.length).toBeGreaterThanOrEqual(count), { timeout: 20_000, interval: 100 });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(hits).toHaveLength(count);
      expect(new Set(hits).size).toBe(count);
    } finally {
      receiver.close();
    }
  });

  it('replaces a worker that dies; SIGTERM stops them all; killing the primary takes the workers with it', async () => {
    const p = await start({});
    const primary = p.pid()!;
    const [first] = workerPids(primary);
    process.kill(first!, 'SIGKILL');
    await vi.waitFor(
      () => {
        const now = workerPids(primary);
        expect(now).toHaveLength(2);
        expect(now).not.toContain(first);
      },
      { timeout: 10_000, interval: 100 },
    );
    await vi.waitFor(async () => expect(await answers(p.baseUrl)).toBe(true), { timeout: 10_000, interval: 100 });

    const workers = workerPids(primary);
    expect(await p.signal('SIGTERM')).toBe(0);
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await vi.waitFor(() => expect(workers.filter(alive)).toEqual([]), { timeout: 5000, interval: 100 });

    await p.start();
    const next = workerPids(p.pid()!);
    expect(next).toHaveLength(2);
    await p.kill();
    await vi.waitFor(() => expect(next.filter(alive)).toEqual([]), { timeout: 5000, interval: 100 });
    expect(await answers(p.baseUrl)).toBe(false);
  });

  it('finishes an upload in progress when every process gets the signal, as Ctrl-C and a service stop give it; a second one to the primary stops them at once', async () => {
    /** An upload whose client sends the first half and waits: resolves with its status, once `finish` sent the rest. */
    const slowUpload = (baseUrl: string, token: string) => {
      const boundary = 'slow-upload-boundary';
      const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
      const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
      const half = Buffer.alloc(256 * 1024, 1);
      const request = http.request(`${baseUrl}/api/files`, { method: 'POST', agent: false, headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + 2 * half.length + tail.length) } });
      const answered = new Promise<number>((resolve, reject) => {
        request.on('response', (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode!));
        });
        request.on('error', reject);
      });
      answered.catch(() => undefined);
      request.write(head);
      request.write(half);
      return { answered, finish: () => request.end(Buffer.concat([half, tail])) };
    };
    const p = await start({});
    const owner = await signUp(p.baseUrl);
    const token = await createToken(owner, ['files:upload']);

    // A service stop: SIGTERM to the primary and to each worker (systemd's control group), or Ctrl-C in a terminal.
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const upload = slowUpload(p.baseUrl, token);
      await sleep(500);
      const workers = workerPids(p.pid()!);
      const exited = p.signal(signal);
      for (const pid of workers) process.kill(pid, signal);
      await sleep(1000);
      upload.finish();
      expect(await upload.answered).toBe(200);
      expect(await exited).toBe(0);
      await p.start();
    }

    // A second Ctrl-C while they wait for it: all stop at once.
    const held = slowUpload(p.baseUrl, token);
    await sleep(500);
    const workers = workerPids(p.pid()!);
    for (const pid of [p.pid()!, ...workers]) process.kill(pid, 'SIGINT');
    await sleep(500);
    const began = Date.now();
    expect(await p.signal('SIGINT')).toBe(1);
    expect(Date.now() - began).toBeLessThan(5000);
    await expect(held.answered).rejects.toThrow();
    await vi.waitFor(() => expect(workers.filter(alive)).toEqual([]), { timeout: 5000, interval: 100 });
    // Three starts of three processes each: 21 s alone, past 30 s on a loaded machine.
  }, 90_000);

  it('keeps serving when a replacement cannot start at once: it is tried again, the other worker serves on', async () => {
    const p = await start({});
    const primary = p.pid()!;
    // The database's write lock held by another program (a hand-run sqlite3 or psql session) past
    // the 5 s a start waits for it: a worker started meanwhile fails, or waits, until it is free.
    const release = await holdWriteLock(p);
    try {
      const [first] = workerPids(primary);
      process.kill(first!, 'SIGKILL');
      await sleep(10_000);
    } finally {
      await release();
    }
    await vi.waitFor(
      () => {
        expect(alive(primary)).toBe(true);
        expect(workerPids(primary)).toHaveLength(2);
      },
      { timeout: 20_000, interval: 200 },
    );
    await vi.waitFor(async () => expect(await answers(p.baseUrl)).toBe(true), { timeout: 10_000, interval: 100 });
  }, 60_000);

  it('stops with an error when the workers cannot start', async () => {
    const blocker = http.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const port = (blocker.address() as AddressInfo).port;
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-workers-'));
      const child = spawn(process.execPath, ['src/main.ts'], { env: { PATH: process.env.PATH ?? '', WORKERS: '2', PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent' } });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      const result = { code, stderr };
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(new RegExp(`hoard: could not start: PORT=${port}: the port is in use`));
    } finally {
      blocker.close();
    }
  });
});
