import { lstat, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** A regular file found under the imported directory. */
export interface TreeFile {
  /** Relative to the imported directory, with `/` between segments: how an import remembers it. */
  relativePath: string;
  absolutePath: string;
  /** As seen when the tree was walked; the bytes stored are what is read later. */
  size: number;
}

export interface Tree {
  files: TreeFile[];
  totalBytes: number;
  /** Symbolic links, sockets, pipes and devices: not imported (a link would import what it points at, possibly outside the tree, or twice). */
  notRegular: string[];
  /** Directories that could not be listed, with the reason. */
  unreadable: Array<{ path: string; reason: string }>;
}

/** Thrown when the directory to import is missing or not a directory. */
export class NotADirectoryError extends Error {}

/** Throws NotADirectoryError, with the message to show, unless `root` is a directory. */
export async function checkDirectory(root: string): Promise<void> {
  const rootStat = await stat(root).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') throw new NotADirectoryError(`No directory at ${root}`);
    throw error;
  });
  if (!rootStat.isDirectory()) throw new NotADirectoryError(`${root} is not a directory`);
}

/** Entries of one directory whose sizes are read at once. */
const STAT_BATCH = 64;

/**
 * Every regular file under `root`, depth first, in name order within each directory (so that two runs
 * over the same tree meet its files in the same order). Symbolic links are never followed, whether
 * they name files or directories; `root` itself may be one.
 */
export async function walkTree(root: string): Promise<Tree> {
  await checkDirectory(root);
  const tree: Tree = { files: [], totalBytes: 0, notRegular: [], unreadable: [] };
  const visit = async (dir: string, prefix: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      tree.unreadable.push({ path: prefix || '.', reason: `the directory cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})` });
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    // Sizes are read for a run of files at a time; directories are visited in their place.
    let run: TreeFile[] = [];
    const flush = async () => {
      const sized = await Promise.all(
        run.map(async (file) => {
          // A file removed since the directory was listed is no longer part of the tree.
          const stats = await lstat(file.absolutePath).catch(() => null);
          if (stats === null) return null;
          if (!stats.isFile()) {
            tree.notRegular.push(file.relativePath);
            return null;
          }
          return { ...file, size: stats.size };
        }),
      );
      for (const file of sized) {
        if (file === null) continue;
        tree.files.push(file);
        tree.totalBytes += file.size;
      }
      run = [];
    };
    for (const entry of entries) {
      const relativePath = prefix ? `${prefix}/${entry.name}` : entry.name;
      const absolutePath = join(dir, entry.name);
      if (entry.isFile()) {
        run.push({ relativePath, absolutePath, size: 0 });
        if (run.length >= STAT_BATCH) await flush();
      } else if (entry.isDirectory()) {
        await flush();
        await visit(absolutePath, relativePath);
      } else {
        tree.notRegular.push(relativePath);
      }
    }
    await flush();
  };
  await visit(root, '');
  return tree;
}
