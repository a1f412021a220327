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

function recording(): WalkReports & { notRegular_: string[]; unreadable_: string[] } {
  const notRegular_: string[] = [];
  const unreadable_: string[] = [];
  return { notRegular_, unreadable_, notRegular: (p) => notRegular_.push(p), unreadable: (p) => unreadable_.push(p) };
}

describe('walking a tree to import', () => {
  it('yields files as it finds them: a directory is listed only when the walk reaches it', async () => {
    // An import holds the files of the batches in flight, never the whole tree's list
    // (docs/decisions.md, "Importing a library").
    const tree = makeTree({ 'a/one.txt': '1', 'a/two.txt': '22' }, ['z']);
    const walk = walkTree(tree, recording());
    const first = await walk.next();
    expect(first.value).toMatchObject({ relativePath: 'a/one.txt', absolutePath: path.join(tree, 'a', 'one.txt'), size: 1 });
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
});
