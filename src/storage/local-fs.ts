import { open } from 'node:fs/promises';

// Filesystem helpers of the local-disk storage (local.ts) and its multipart assembly (local-assembly.ts).

/** Makes a directory's entries (a rename, a new file) durable. */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export function isCode(err: unknown, ...codes: string[]): boolean {
  return err instanceof Error && codes.includes((err as NodeJS.ErrnoException).code ?? '');
}
