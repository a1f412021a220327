import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import { nameFromBytes } from '../shared/naming.ts';

/** A regular file found under the imported directory. */
export interface TreeFile {
  /** Relative to the imported directory, with `/` between segments: how an import remembers it. */
  relativePath: string;
  /** The file's name in bytes, which need not be UTF-8 (nameFromBytes). */
  absolutePath: Buffer;
  /** As seen when the tree was walked; the bytes stored are what is read later. */
  size: number;
}

/** What a walk meets besides regular files, reported as it goes. */
export interface WalkReports {
  /** Symbolic links, sockets, pipes and devices: not imported (a link would import what it points at, possibly outside the tree, or twice). */
  notRegular(relativePath: string): void;
  /** A directory that could not be listed, with the reason. */
  unreadable(relativePath: string, reason: string): void;
  /** The directory the walk was told to leave out (the instance's own data), where it met it. */
  excluded(relativePath: string): void;
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
 * Every regular file under `root`, depth first, in the order of the names' bytes within each directory (so that two runs
 * over the same tree meet its files in the same order), yielded as the walk finds them. It holds the
 * listings of the directories on its current path, never the tree's list, which took about 240 bytes
 * a file (docs/decisions.md, "Importing a library"). Symbolic links are never followed, whether they
 * name files or directories; `root` itself may be one.
 */
export async function* walkTree(root: string, reports: WalkReports, options: { exclude?: string } = {}): AsyncGenerator<TreeFile> {
  await checkDirectory(root);
  // From the root's real path, so that a directory's path is its real path too (the walk follows no
  // link) and `exclude`, a real path, is met by comparing bytes.
  const walk: Walk = { reports, exclude: options.exclude === undefined ? null : Buffer.from(options.exclude) };
  yield* visit(walk, Buffer.from(await realpath(root)), '');
}

interface Walk {
  reports: WalkReports;
  exclude: Buffer | null;
}

const SEPARATOR = Buffer.from('/');
async function* visit(walk: Walk, dir: Buffer, prefix: string): AsyncGenerator<TreeFile> {
  const { reports } = walk;
  let entries;
  try {
    // As bytes: a name that is not UTF-8 would come back with replacement characters, under which
    // no file can be opened (docs/decisions.md, "Importing a library").
    entries = await readdir(dir, { withFileTypes: true, encoding: 'buffer' });
  } catch (error) {
    reports.unreadable(prefix || '.', `the directory cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    return;
  }
  entries.sort((a, b) => Buffer.compare(a.name, b.name));
  // Sizes are read for a run of files at a time; directories are visited in their place.
  let run: TreeFile[] = [];
  const sized = async (): Promise<TreeFile[]> => {
    const files = await Promise.all(
      run.map(async (file) => {
        // A file removed since the directory was listed is no longer part of the tree.
        const stats = await lstat(file.absolutePath).catch(() => null);
        if (stats === null) return null;
        if (!stats.isFile()) {
          reports.notRegular(file.relativePath);
          return null;
        }
        return { ...file, size: stats.size };
      }),
    );
    run = [];
    return files.filter((file) => file !== null);
  };
  for (const entry of entries) {
    const name = nameFromBytes(entry.name);
    const relativePath = prefix ? `${prefix}/${name}` : name;
    const absolutePath = Buffer.concat([dir, SEPARATOR, entry.name]);
    if (entry.isFile()) {
      run.push({ relativePath, absolutePath, size: 0 });
      if (run.length >= STAT_BATCH) yield* await sized();
    } else if (entry.isDirectory()) {
      yield* await sized();
      if (walk.exclude?.equals(absolutePath)) reports.excluded(relativePath);
      else yield* visit(walk, absolutePath, relativePath);
    } else {
      reports.notRegular(relativePath);
    }
  }
  yield* await sized();
}

/** The number of regular files under `root` and their bytes, by a walk that keeps none of them. */
export async function measureTree(root: string, options: { exclude?: string } = {}): Promise<{ files: number; bytes: number }> {
  const quiet: WalkReports = { notRegular: () => undefined, unreadable: () => undefined, excluded: () => undefined };
  let files = 0;
  let bytes = 0;
  for await (const file of walkTree(root, quiet, options)) {
    files += 1;
    bytes += file.size;
  }
  return { files, bytes };
}
