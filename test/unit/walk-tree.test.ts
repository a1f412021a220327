import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { measureTree, walkTree, type WalkReports } from '../../src/imports/walk-tree.ts';

let root = '';
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

function makeTree(files: Record<string, string>, directories: string[] = []): string {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-walk-'));
  for (const directory of directories) fs.mkdirSync(path.join(root, directory), { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), content);
  }
  return root;
}

function recording(): WalkReports & { notRegular_: string[]; unreadable_: string[]; excluded_: string[] } {
  const notRegular_: string[] = [];
  const unreadable_: string[] = [];
  const excluded_: string[] = [];
  return { notRegular_, unreadable_, excluded_, notRegular: (p) => notRegular_.push(p), unreadable: (p) => unreadable_.push(p), excluded: (p) => excluded_.push(p) };
}

describe('walking a tree to import', () => {
  it('yields files as it finds them: a directory is listed only when the walk reaches it', async () => {
    // An import holds the files of the batches in flight, never the whole tree's list
    // (docs/decisions.md, "Importing a library").
    const tree = makeTree({ 'a/one.txt': '1', 'a/two.txt': '22' }, ['z']);
    const walk = walkTree(tree, recording());
    const first = await walk.next();
    expect(first.value).toMatchObject({ relativePath: 'a/one.txt', absolutePath: Buffer.from(path.join(tree, 'a', 'one.txt')), size: 1 });
    fs.writeFileSync(path.join(tree, 'z', 'late.txt'), 'later');
    const rest: string[] = [];
    for await (const file of walk) rest.push(`${file.relativePath}:${file.size}`);
    expect(rest).toEqual(['a/two.txt:2', 'z/late.txt:5']);
  });

  it('walks in name order within each directory, and reports what it does not import', async () => {
    const tree = makeTree({ 'b.txt': 'b', 'a/c.txt': 'cc', 'a.txt': 'a', 'a/b/d.txt': 'ddd' });
    fs.symlinkSync(path.join(tree, 'b.txt'), path.join(tree, 'link.txt'));
    fs.symlinkSync(path.join(tree, 'a'), path.join(tree, 'linked-dir'));
    const reports = recording();
    const files: string[] = [];
    for await (const file of walkTree(tree, reports)) files.push(file.relativePath);
    expect(files).toEqual(['a/b/d.txt', 'a/c.txt', 'a.txt', 'b.txt']);
    expect(reports.notRegular_.sort()).toEqual(['link.txt', 'linked-dir']);
    expect(reports.unreadable_).toEqual([]);
    expect(await measureTree(tree)).toEqual({ files: 4, bytes: 7 });
  });

  it('opens names that are not UTF-8 by their bytes and shows them as Latin-1', async () => {
    const tree = makeTree({ 'b.txt': 'b' });
    const latin1 = (text: string) => Buffer.from(text, 'latin1');
    fs.writeFileSync(Buffer.concat([Buffer.from(`${tree}/`), latin1('é.txt')]), 'e acute');
    fs.mkdirSync(Buffer.concat([Buffer.from(`${tree}/`), latin1('déjà')]));
    fs.writeFileSync(Buffer.concat([Buffer.from(`${tree}/`), latin1('déjà/ü.txt')]), 'u');
    const reports = recording();
    const files: Array<[string, number]> = [];
    for await (const file of walkTree(tree, reports)) files.push([file.relativePath, fs.readFileSync(file.absolutePath).length]);
    // In the order of the names' bytes: 'b' (0x62), 'd' (0x64), 'é' (0xe9).
    expect(files).toEqual([['b.txt', 1], ['déjà/ü.txt', 1], ['é.txt', 7]]);
    expect(reports.unreadable_).toEqual([]);
    expect(await measureTree(tree)).toEqual({ files: 3, bytes: 9 });
  });

  it('leaves out the directory it is told to, met by its real path, and reports where', async () => {
    const tree = makeTree({ 'a.txt': 'a', 'data/db.sqlite': 'database', 'data/files/x': 'stored', 'data2/b.txt': 'bb' });
    // Through a link to the tree, and with the excluded directory's real path.
    const link = `${tree}-link`;
    fs.symlinkSync(tree, link);
    try {
      const reports = recording();
      const files: string[] = [];
      for await (const file of walkTree(link, reports, { exclude: fs.realpathSync(path.join(tree, 'data')) })) files.push(file.relativePath);
      expect(files).toEqual(['a.txt', 'data2/b.txt']);
      expect(reports.excluded_).toEqual(['data']);
      expect(await measureTree(link, { exclude: fs.realpathSync(path.join(tree, 'data')) })).toEqual({ files: 2, bytes: 3 });
    } finally {
      fs.rmSync(link);
    }
  });
});
