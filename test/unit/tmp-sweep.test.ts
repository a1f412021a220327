import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sweepTemporaryDir } from '../../src/storage/tmp-sweep.ts';

const HOUR = 3600_000;

/** Writes `file` under `root` with `bytes` bytes, last modified `age` ago. */
function place(root: string, file: string, bytes: number, age: number): void {
  const full = path.join(root, file);
  fs.mkdirSync(path.dirname(full), { recursive: true });
  fs.writeFileSync(full, Buffer.alloc(bytes));
  const at = (Date.now() - age) / 1000;
  fs.utimesSync(full, at, at);
}
function age(root: string, dir: string, by: number): void {
  const at = (Date.now() - by) / 1000;
  fs.utimesSync(path.join(root, dir), at, at);
}

describe('sweepTemporaryDir', () => {
  it('removes what no write touched for the safe age, and nothing a live write or an open session holds', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-sweep-'));
    place(tmp, 'dead.tmp', 1000, 2 * HOUR);
    place(tmp, 'live.tmp', 10, 1000);
    place(tmp, 'part-dead/part', 2000, 2 * HOUR);
    age(tmp, 'part-dead', 2 * HOUR);
    place(tmp, 'part-live/part', 20, 1000);
    age(tmp, 'part-live', 2 * HOUR);
    // An open session's directory: old parts stay, a write killed long ago goes.
    place(tmp, 'multipart/open/key', 5, 2 * HOUR);
    place(tmp, 'multipart/open/1.abc', 300, 2 * HOUR);
    place(tmp, 'multipart/open/tmp-dead', 400, 2 * HOUR);
    place(tmp, 'multipart/open/tmp-live', 40, 1000);
    // A directory no session names: removed once all of it is old, kept while anything in it is fresh.
    place(tmp, 'multipart/orphan/key', 5, 2 * HOUR);
    place(tmp, 'multipart/orphan/assembly', 500, 2 * HOUR);
    age(tmp, 'multipart/orphan', 2 * HOUR);
    place(tmp, 'multipart/starting/key', 5, 1000);
    fs.mkdirSync(path.join(tmp, 'multipart', 'empty'));
    age(tmp, 'multipart/empty', 2 * HOUR);

    const removed = await sweepTemporaryDir(tmp, HOUR, async (uploadId) => uploadId === 'open');
    expect(removed).toEqual({ items: 5, bytes: 1000 + 2000 + 400 + 505 });
    const left = (dir: string) => fs.readdirSync(path.join(tmp, dir)).sort();
    expect(left('.')).toEqual(['live.tmp', 'multipart', 'part-live']);
    expect(left('multipart')).toEqual(['open', 'starting']);
    expect(left('multipart/open')).toEqual(['1.abc', 'key', 'tmp-live']);
    expect(await sweepTemporaryDir(path.join(tmp, 'missing'), HOUR, async () => false)).toEqual({ items: 0, bytes: 0 });
  });
});
