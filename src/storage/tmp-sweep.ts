import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * DATA_DIR/tmp holds what writes in progress need: `<id>.tmp` files of local writes, S3 parts spooled
 * to `part-*` directories, and the `multipart/<uploadId>` directories of local chunked uploads (whose
 * `tmp-*` files are parts being written). A process killed mid-write leaves these behind; nothing else
 * would ever remove them.
 *
 * An item is debris once nothing in it was modified for `safeAgeMs`: every writer here keeps its
 * file's modification time fresh while bytes arrive (FileSink writes at least once a minute). A
 * chunked upload's directory is kept whole while its session is open (`inUse`); only its stale `tmp-*`
 * files go. The session sweep removes the directory when the session ends.
 */
export async function sweepTemporaryDir(tmpDir: string, safeAgeMs: number, inUse: (uploadId: string) => Promise<boolean>, now = Date.now()): Promise<{ items: number; bytes: number }> {
  const cutoff = now - safeAgeMs;
  const removed = { items: 0, bytes: 0 };
  const remove = async (path: string, usage: Usage) => {
    await rm(path, { recursive: true, force: true });
    removed.items += 1;
    removed.bytes += usage.bytes;
  };
  for (const name of await entries(tmpDir)) {
    const path = join(tmpDir, name);
    if (name === 'multipart') {
      for (const uploadId of await entries(path)) {
        const dir = join(path, uploadId);
        if (await inUse(uploadId)) {
          for (const file of (await entries(dir)).filter((f) => f.startsWith('tmp-'))) {
            const usage = await usageOf(join(dir, file));
            if (usage && usage.newest < cutoff) await remove(join(dir, file), usage);
          }
          continue;
        }
        const usage = await usageOf(dir);
        if (usage && usage.newest < cutoff) await remove(dir, usage);
      }
      continue;
    }
    const usage = await usageOf(path);
    if (usage && usage.newest < cutoff) await remove(path, usage);
  }
  return removed;
}

interface Usage {
  /** The latest modification time of the item or anything in it. */
  newest: number;
  bytes: number;
}

/** Null when the item vanished meanwhile (its writer finished). */
async function usageOf(path: string): Promise<Usage | null> {
  const stats = await lstat(path).catch(() => null);
  if (!stats) return null;
  const usage = { newest: stats.mtimeMs, bytes: stats.isFile() ? stats.size : 0 };
  if (stats.isDirectory()) {
    for (const name of await entries(path)) {
      const inner = await usageOf(join(path, name));
      if (!inner) continue;
      usage.newest = Math.max(usage.newest, inner.newest);
      usage.bytes += inner.bytes;
    }
  }
  return usage;
}

async function entries(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}
