import { abandonChunkedUpload, newChunkedProgress, PART_SIZE, type ChunkedProgress, type Selectors } from './uploader.ts';

/**
 * Chunked uploads kept past a reload (docs/web.md, "Upload"). A page reloaded, closed or crashed
 * in the middle of a large upload leaves its session on the server, with the parts that arrived;
 * the browser's storage keeps the session's ID and each part's ETag and digest, so the same file
 * chosen again (same account, name, size and modification time, same upload settings) goes on from
 * there instead of sending every byte again, once its parts are checked (uploader.ts). A password
 * is never kept: only whether there was one. An upload with a password resumes once a password is
 * typed again, and the completion carries the one typed now (uploader.ts, sendSession).
 */

const STORAGE_KEY = 'hoard.chunkedUploads';
/** The server forgets a session an hour after its last activity (spec, Chunk upload session). */
const LIFETIME_MS = 3600_000;
/** An account has at most 20 unfinished sessions (docs/decisions.md, "Caps"). */
const MOST_KEPT = 20;

interface Kept {
  account: string;
  name: string;
  size: number;
  lastModified: number;
  /** The upload settings the session was started with (profile, folder, options). */
  settings: string;
  /** It was started with a password (never kept), which must be typed again to resume it. */
  withPassword?: boolean;
  uploadId: string;
  partSize: number;
  /** [part number, ETag, SHA-256 or '' when it could not be read]. */
  parts: Array<[number, string, string]>;
  keptAt: number;
}

export interface InterruptedUpload {
  key: string;
  name: string;
  size: number;
  partsSent: number;
  partCount: number;
  /** Its password must be typed again before the file is chosen. */
  withPassword: boolean;
}

const keyOf = (account: string, file: { name: string; size: number; lastModified: number }) => JSON.stringify([account, file.name, file.size, file.lastModified]);

function readAll(now = Date.now()): Record<string, Kept> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? '{}');
  } catch {
    return {};
  }
  if (!parsed || typeof parsed !== 'object') return {};
  const live: Record<string, Kept> = {};
  for (const [key, kept] of Object.entries(parsed as Record<string, Kept>)) {
    if (kept && typeof kept.uploadId === 'string' && Array.isArray(kept.parts) && kept.keptAt + LIFETIME_MS > now) live[key] = kept;
  }
  return live;
}

function writeAll(all: Record<string, Kept>): void {
  try {
    if (Object.keys(all).length === 0) localStorage.removeItem(STORAGE_KEY);
    else localStorage.setItem(STORAGE_KEY, JSON.stringify(all));
  } catch {
    // Storage full or refused: the upload goes on, it only cannot be resumed after a reload.
  }
}

/** The settings a session is started with, as compared on resuming (whether it has a password is compared apart). */
function settingsOf(selectors: Selectors): string {
  const options = Object.entries(selectors.options ?? {}).filter(([, value]) => value !== undefined).sort(([a], [b]) => a.localeCompare(b));
  return JSON.stringify([selectors.profile, selectors.folder, options]);
}

/**
 * Where an upload of `file` by `account` with these settings keeps its progress: a new progress,
 * or the one an earlier page kept (to be checked before its parts are trusted), wired to keep
 * itself as it goes. A session kept for the same file with other settings is given up: its upload
 * would not be the one asked for now. The caller holds the claim on the file's key (claimKept).
 */
export function resumableProgress(account: string, file: File, selectors: Selectors): { progress: ChunkedProgress; key: string } {
  const progress = newChunkedProgress();
  const settings = settingsOf(selectors);
  const withPassword = Boolean(selectors.password);
  const key = keyOf(account, file);
  const all = readAll();
  const kept = all[key];
  if (kept && kept.settings === settings && (kept.withPassword === true) === withPassword && kept.partSize === PART_SIZE) {
    progress.uploadId = kept.uploadId;
    for (const [partNumber, etag, digest] of kept.parts) {
      progress.etags.set(partNumber, etag);
      if (digest) progress.digests.set(partNumber, digest);
    }
    progress.unchecked = true;
  } else if (kept) {
    giveUpKept(key);
  }
  progress.onRecord = (recorded) => keep(key, { account, name: file.name, size: file.size, lastModified: file.lastModified, settings, withPassword }, recorded);
  return { progress, key };
}

function keep(key: string, about: Pick<Kept, 'account' | 'name' | 'size' | 'lastModified' | 'settings' | 'withPassword'>, progress: ChunkedProgress): void {
  const all = readAll();
  if (progress.uploadId === null) {
    delete all[key];
  } else {
    const parts = [...progress.etags].map(([partNumber, etag]): [number, string, string] => [partNumber, etag, progress.digests.get(partNumber) ?? '']);
    all[key] = { ...about, uploadId: progress.uploadId, partSize: PART_SIZE, parts, keptAt: Date.now() };
    // The oldest go first past the account's cap: their sessions are the first to lapse anyway.
    const keys = Object.keys(all).sort((a, b) => all[a]!.keptAt - all[b]!.keptAt);
    for (const old of keys.slice(0, Math.max(0, keys.length - MOST_KEPT))) delete all[old];
  }
  writeAll(all);
}

/** Forgets what was kept for an upload (finished, or given up by the page that runs it). */
export function forgetKept(key: string | null): void {
  if (key === null) return;
  const all = readAll();
  if (!(key in all)) return;
  delete all[key];
  writeAll(all);
}

/** The account's uploads a page left unfinished, newest first: choosing the file again resumes each. */
export function interruptedUploads(account: string, running: ReadonlySet<string>): InterruptedUpload[] {
  return Object.entries(readAll())
    .filter(([key, kept]) => kept.account === account && !running.has(key))
    .sort(([, a], [, b]) => b.keptAt - a.keptAt)
    .map(([key, kept]) => ({ key, name: kept.name, size: kept.size, partsSent: kept.parts.length, partCount: Math.ceil(kept.size / kept.partSize), withPassword: kept.withPassword === true }));
}

/**
 * Gives up an interrupted upload: its session is cancelled on the server, and nothing is kept.
 * False, and nothing done, when another page of this browser is sending it now (claimKept).
 */
export async function discardInterrupted(key: string): Promise<boolean> {
  const release = await claimKept(key);
  if (release === null) return false;
  try {
    giveUpKept(key);
    return true;
  } finally {
    release();
  }
}

/** Cancels the session kept under `key` and forgets it (the caller has the claim on it). */
function giveUpKept(key: string): void {
  const kept = readAll()[key];
  if (!kept) return;
  const progress = newChunkedProgress();
  progress.uploadId = kept.uploadId;
  abandonChunkedUpload(progress);
  forgetKept(key);
}

/*
 * Two pages of one browser (two tabs of the Upload page) share the kept uploads. A page claims a
 * kept upload while it sends it, with a lock of the browser's Web Locks API, which the browser lets
 * go when the page goes, however it goes. Another page choosing the same file then sends it in a
 * session of its own rather than the same parts into the same session, and neither lists the other's
 * running upload as unfinished nor offers to discard it. A browser without the API claims nothing.
 */
const LOCK_PREFIX = 'hoard.chunkedUpload:';

/** Claims the kept upload under `key` for this page: the release, or null when another page holds it. */
export function claimKept(key: string): Promise<(() => void) | null> {
  const locks = globalThis.navigator?.locks;
  if (!locks) return Promise.resolve(() => {});
  return new Promise((resolve, reject) => {
    locks
      .request(LOCK_PREFIX + key, { ifAvailable: true }, (lock) => {
        if (lock === null) {
          resolve(null);
          return undefined;
        }
        // Held until released: the lock lasts as long as the promise its callback returns.
        return new Promise<void>((release) => resolve(() => release()));
      })
      .catch(reject);
  });
}

/** The keys of the kept uploads pages of this browser are sending now (this page's included). */
export async function claimedKeys(): Promise<Set<string>> {
  const locks = globalThis.navigator?.locks;
  if (!locks) return new Set();
  const { held = [] } = await locks.query();
  return new Set(held.flatMap(({ name }) => (name?.startsWith(LOCK_PREFIX) ? [name.slice(LOCK_PREFIX.length)] : [])));
}

/** Calls `onChange` when another page changes what is kept; returns the unsubscribe. */
export function onKeptChange(onChange: () => void): () => void {
  const listener = (event: StorageEvent) => {
    if (event.key === STORAGE_KEY || event.key === null) onChange();
  };
  globalThis.addEventListener('storage', listener);
  return () => globalThis.removeEventListener('storage', listener);
}

/** The key an upload of `file` by `account` is kept under (to tell it from the interrupted ones). */
export const resumableKey = keyOf;
