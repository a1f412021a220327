import type { Db, Dialect } from '../db/database.ts';
import { forAccount, type Executor } from '../db/account-scope.ts';
import { newId } from '../db/ids.ts';
import { lockAccountRow } from '../db/locks.ts';
import { inBatches } from '../db/batches.ts';
import { conflict, invalid, notFound } from '../errors.ts';
import { iso, parseField } from './common.ts';
import { byName } from '../shared/name-order.ts';
import { nameSchema } from '../shared/display-name.ts';

export const folderLimits = {
  nameLength: 100,
  /** Levels of nesting, a top-level folder being level 1. */
  depth: 32,
  /** Folders an account may have: every Files page lists them all (docs/decisions.md, "Caps per account"). */
  perAccount: 1000,
} as const;
export const folderNameSchema = nameSchema(folderLimits.nameLength);

export type { Folder as FolderView } from '../api/organisation.ts';
import type { Folder as FolderView } from '../api/organisation.ts';

interface FolderRow {
  id: string;
  name: string;
  parentId: string | null;
  createdAt: number;
  updatedAt: number;
}

const folderColumns = ['id', 'name', 'parentId', 'createdAt', 'updatedAt'] as const;

function toView(row: FolderRow): FolderView {
  return { id: row.id, name: row.name, parentId: row.parentId, createdAt: iso(row.createdAt), updatedAt: iso(row.updatedAt) };
}

/** A folder of the account, or null when the ID is unknown or belongs to another account. */
export async function findOwnedFolder(db: Executor, userId: string, folderId: string): Promise<FolderView | null> {
  const row = await forAccount(db, userId).selectFrom('folders').select(folderColumns).where('id', '=', folderId).executeTakeFirst();
  return row ? toView(row) : null;
}

/** Every folder of the account as a flat list sorted by name; `parentId` gives the tree. */
export async function listFolders(db: Executor, userId: string): Promise<FolderView[]> {
  const rows = await forAccount(db, userId).selectFrom('folders').select(folderColumns).execute();
  return rows.sort(byName).map(toView);
}

/** The account's folder tree as parent links, read once so checks need no query per level. */
class Tree {
  readonly parentOf = new Map<string, string | null>();
  readonly childrenOf = new Map<string, string[]>();

  constructor(rows: Array<{ id: string; parentId: string | null }>) {
    for (const { id, parentId } of rows) {
      this.parentOf.set(id, parentId);
      if (parentId !== null) this.childrenOf.set(parentId, [...(this.childrenOf.get(parentId) ?? []), id]);
    }
  }

  /** The folder and its ancestors, nearest first (bounded even if stored data had a cycle). */
  chain(id: string): string[] {
    const out: string[] = [];
    let current: string | null | undefined = id;
    while (current != null && out.length <= this.parentOf.size && !out.includes(current)) {
      out.push(current);
      current = this.parentOf.get(current);
    }
    return out;
  }

  /** Levels in the subtree rooted at `id`, itself included. */
  height(id: string, seen = new Set<string>()): number {
    if (seen.has(id)) return 0;
    seen.add(id);
    let deepest = 0;
    for (const child of this.childrenOf.get(id) ?? []) deepest = Math.max(deepest, this.height(child, seen));
    return 1 + deepest;
  }
}

/**
 * The folder and every folder below it, by ID with its path from the folder (the names of the
 * folders on the way, the folder itself an empty path). An account has at most
 * `folderLimits.perAccount` folders, read at once; empty when the account has no such folder.
 */
export async function folderSubtree(db: Executor, userId: string, folderId: string): Promise<Map<string, string[]>> {
  const rows = await forAccount(db, userId).selectFrom('folders').select(['id', 'parentId', 'name']).execute();
  const tree = new Tree(rows);
  const names = new Map(rows.map((row) => [row.id, row.name]));
  const found = new Map<string, string[]>();
  const waiting: Array<[string, string[]]> = names.has(folderId) ? [[folderId, []]] : [];
  // Each folder once, even if stored data had a cycle.
  for (let next = waiting.pop(); next !== undefined; next = waiting.pop()) {
    const [id, path] = next;
    if (found.has(id)) continue;
    found.set(id, path);
    for (const child of tree.childrenOf.get(id) ?? []) waiting.push([child, [...path, names.get(child)!]]);
  }
  return found;
}

async function loadTree(db: Executor, userId: string): Promise<Tree> {
  return new Tree(await forAccount(db, userId).selectFrom('folders').select(['id', 'parentId']).execute());
}

const tooDeep = () => invalid(`parentId: folders can be nested at most ${folderLimits.depth} levels deep`);

export async function createFolder(db: Db, dialect: Dialect, userId: string, input: { name: string; parentId?: string | null | undefined }): Promise<FolderView> {
  const name = parseField(folderNameSchema, input.name, 'name');
  const parentId = input.parentId ?? null;
  return db.transaction().execute(async (trx) => {
    // Serialises folder moves, so two concurrent moves cannot together make a cycle.
    await lockAccountRow(trx, dialect, userId);
    const tree = await loadTree(trx, userId);
    if (tree.parentOf.size >= folderLimits.perAccount) throw conflict(`An account can have at most ${folderLimits.perAccount} folders; delete one first`);
    if (parentId !== null) {
      if (!tree.parentOf.has(parentId)) throw notFound('Parent folder not found');
      if (tree.chain(parentId).length + 1 > folderLimits.depth) throw tooDeep();
    }
    const now = Date.now();
    const row: FolderRow = { id: newId(), name, parentId, createdAt: now, updatedAt: now };
    await forAccount(trx, userId).insertInto('folders', row).execute();
    return toView(row);
  });
}

/** Renames and/or moves a folder; `parentId: null` moves it to the top level. */
export async function updateFolder(
  db: Db,
  dialect: Dialect,
  userId: string,
  id: string,
  changes: { name?: string | undefined; parentId?: string | null | undefined },
): Promise<FolderView> {
  const name = changes.name === undefined ? undefined : parseField(folderNameSchema, changes.name, 'name');
  return db.transaction().execute(async (trx) => {
    await lockAccountRow(trx, dialect, userId);
    const account = forAccount(trx, userId);
    const existing = await account.selectFrom('folders').select(folderColumns).where('id', '=', id).executeTakeFirst();
    if (!existing) throw notFound('Folder not found');
    const next: FolderRow = { ...existing };
    if (name !== undefined) next.name = name;
    if (changes.parentId !== undefined && changes.parentId !== existing.parentId) {
      const parentId = changes.parentId;
      if (parentId !== null) {
        const tree = await loadTree(trx, userId);
        if (!tree.parentOf.has(parentId)) throw notFound('Parent folder not found');
        const ancestors = tree.chain(parentId);
        if (ancestors.includes(id)) throw invalid('parentId: a folder cannot be moved into itself or one of its own subfolders');
        if (ancestors.length + tree.height(id) > folderLimits.depth) throw tooDeep();
      }
      next.parentId = parentId;
    }
    if (next.name !== existing.name || next.parentId !== existing.parentId) {
      next.updatedAt = Math.max(Date.now(), Number(existing.updatedAt));
      await account.updateTable('folders').set({ name: next.name, parentId: next.parentId, updatedAt: next.updatedAt }).where('id', '=', id).execute();
    }
    return toView(next);
  });
}

/**
 * Deletes a folder: its files become unfiled and its subfolders move up to the deleted folder's
 * parent. Nothing else is deleted. The files are unfiled a batch at a time first (src/db/batches.ts);
 * the rest, the subfolders and the folder itself go in one transaction. Should the process end
 * half-way, the folder is still there with the files not yet unfiled, and deleting it again finishes.
 */
export async function deleteFolder(db: Db, dialect: Dialect, userId: string, id: string): Promise<void> {
  await inBatches(dialect, (rows) =>
    db.transaction().execute(async (trx) => {
      await lockAccountRow(trx, dialect, userId);
      // Through the folder's index, and then by ID: offered the account's index, SQLite would walk
      // all of the account's files for each batch.
      const account = forAccount(trx, userId, { notByOwnerIndex: dialect === 'sqlite' });
      const files = await account.selectFrom('files').select('id').where('folderId', '=', id).limit(rows).execute();
      if (files.length > 0) await account.updateTable('files').set({ folderId: null, updatedAt: Date.now() }).where('id', 'in', files.map((file) => file.id)).execute();
      return files.length;
    }),
  );
  await db.transaction().execute(async (trx) => {
    await lockAccountRow(trx, dialect, userId);
    const account = forAccount(trx, userId);
    const existing = await account.selectFrom('folders').select(['id', 'parentId']).where('id', '=', id).executeTakeFirst();
    if (!existing) throw notFound('Folder not found');
    const now = Date.now();
    await account.updateTable('files').set({ folderId: null, updatedAt: now }).where('folderId', '=', id).execute();
    await account.updateTable('folders').set({ parentId: existing.parentId, updatedAt: now }).where('parentId', '=', id).execute();
    await account.deleteFrom('folders').where('id', '=', id).execute();
  });
}
