import { api, ApiError, retryAfterOf } from '../api.ts';
import { describeFailure } from '../format.ts';
import type { ProfileOptions, UploadLinks } from '@api';

/**
 * Browser uploads (docs/web.md):
 * - files up to CHUNK_THRESHOLD go in one multipart POST /api/files (XMLHttpRequest, which reports
 *   upload progress where fetch does not);
 * - larger files use the chunked routes: POST /api/files/chunks, then PARTS_IN_PARALLEL parts at a
 *   time (GET the part URL; a `local://` marker means PUT the bytes to our own part route, anything
 *   else is a presigned storage URL, PUT without credentials, whose ETag header is kept), then
 *   POST …/complete. Each part is retried on network errors, 408, 429 and 5xx.
 */
export const MiB = 1024 * 1024;
export const CHUNK_THRESHOLD = 32 * MiB;
/** At least S3's 5 MiB minimum for all parts but the last, well under the 64 MiB part limit. */
export const PART_SIZE = 8 * MiB;
export const PARTS_IN_PARALLEL = 4;
export const PART_ATTEMPTS = 5;

export interface Selectors {
  /** '' = the account's default profile (header omitted), 'none', or a profile ID. */
  profile: string;
  /** '' = unfiled (header omitted), or a folder ID. */
  folder: string;
  /** The upload's own option fields, over its profile's (contract §4); none set = the profile's. */
  options?: ProfileOptions;
  /** '' = no password. The upload's own, never a profile's (spec, Upload profiles). */
  password?: string;
}

/**
 * The option fields as contract §4 names them, as JSON values (the chunked start's body takes them
 * so); a multipart form sends each as text, `tagIds` as a JSON array.
 */
function optionValues(selectors: Selectors): Record<string, string | boolean | string[]> {
  const values: Record<string, string | boolean | string[]> = {};
  for (const [name, value] of Object.entries(selectors.options ?? {})) if (value !== undefined) values[name] = value;
  if (selectors.password) values.password = selectors.password;
  return values;
}

/**
 * What a chunked upload has done so far, kept by the caller across attempts: Retry goes on with the
 * same session and sends only the parts it lacks. A new session would hold the file's size against
 * the quota a second time until the first one expired (an hour), refusing a retry near the quota.
 */
export interface ChunkedProgress {
  uploadId: string | null;
  etags: Map<number, string>;
  /**
   * The SHA-256 (hex) of each part's bytes as sent. A page reloaded mid-upload resumes from what it
   * kept in the browser's storage (upload/resumable.ts); the file chosen again is checked against
   * these, part by part, and a part whose bytes differ is sent again rather than trusted.
   */
  digests: Map<number, string>;
  /** The parts came from an earlier page and have not been checked against this file yet. */
  unchecked: boolean;
  /** Told whenever the session or a part is recorded (the page keeps them past a reload). */
  onRecord?: (progress: ChunkedProgress) => void;
}

export const newChunkedProgress = (): ChunkedProgress => ({ uploadId: null, etags: new Map(), digests: new Map(), unchecked: false });

/** The SHA-256 of a part's bytes, hex; null when the browser cannot read them (the file changed). */
async function digestOf(blob: Blob): Promise<string | null> {
  try {
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', await blob.arrayBuffer()));
    return Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
  } catch {
    return null;
  }
}

/**
 * Gives up the session kept for Retry, once no Retry can come (the row is removed or cleared, the
 * page left, the file changed): the server frees at once the room its declared size held against
 * the quota, which would otherwise stay held for an hour (docs/decisions.md, "Cancelling a chunked
 * upload"). Nobody waits for it: a session completed, expired or already gone answers 409 or 404,
 * and one the page cannot reach lapses on its own.
 */
export function abandonChunkedUpload(progress: ChunkedProgress | undefined): void {
  if (!progress || progress.uploadId === null) return;
  const { uploadId } = progress;
  progress.uploadId = null;
  progress.etags.clear();
  progress.digests.clear();
  api('DELETE', `/api/files/chunks/${encodeURIComponent(uploadId)}`).catch(() => {});
}

export interface UploadHooks {
  /** Bytes sent so far (may go down when a failed part is sent again). */
  onProgress(loaded: number): void;
  /** What the upload is doing; `waiting` while it sends nothing (a 429 waited out), when its rate means nothing. */
  onStatus?(status: string, waiting?: boolean): void;
  signal: AbortSignal;
  /** Where a chunked upload records its session and parts, to be given again on Retry. */
  progress?: ChunkedProgress;
}

export class UploadAborted extends Error {
  constructor() {
    super('Upload cancelled');
    this.name = 'UploadAborted';
  }
}

class NetworkError extends Error {}

/**
 * The chosen file changed (or went) on disk since it was chosen: the browser refuses to read it and
 * fails the request as if the network had (Chromium's ERR_UPLOAD_FILE_CHANGED). No retry can send
 * it: it must be chosen again.
 */
export class FileChanged extends Error {
  constructor(name: string) {
    super(`${name} changed on disk since it was chosen: choose it again to upload it`);
    this.name = 'FileChanged';
  }
}

/** Whether a failed request's bytes can still be read: a changed file throws NotReadableError. */
async function stillReadable(blob: Blob): Promise<boolean> {
  try {
    await blob.slice(0, 1).arrayBuffer();
    return true;
  } catch {
    return false;
  }
}

interface XhrResult {
  status: number;
  header(name: string): string | null;
  text: string;
}

function send(options: {
  method: string;
  url: string;
  body: XMLHttpRequestBodyInit;
  headers?: Record<string, string>;
  withCredentials: boolean;
  onProgress?: (loaded: number) => void;
  signal: AbortSignal;
}): Promise<XhrResult> {
  return new Promise((resolve, reject) => {
    if (options.signal.aborted) return reject(new UploadAborted());
    const xhr = new XMLHttpRequest();
    xhr.open(options.method, options.url);
    xhr.withCredentials = options.withCredentials;
    for (const [name, value] of Object.entries(options.headers ?? {})) xhr.setRequestHeader(name, value);
    if (options.onProgress) {
      const report = options.onProgress;
      xhr.upload.onprogress = (event) => report(event.loaded);
    }
    const onAbort = () => xhr.abort();
    options.signal.addEventListener('abort', onAbort, { once: true });
    const done = () => options.signal.removeEventListener('abort', onAbort);
    xhr.onload = () => {
      done();
      resolve({ status: xhr.status, header: (name) => xhr.getResponseHeader(name), text: xhr.responseText });
    };
    xhr.onerror = () => {
      done();
      reject(new NetworkError('The connection failed'));
    };
    xhr.ontimeout = xhr.onerror;
    xhr.onabort = () => {
      done();
      reject(new UploadAborted());
    };
    xhr.send(options.body);
  });
}

function parseJson(text: string): any {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

function failure(result: XhrResult): ApiError {
  const retryAfter = retryAfterOf({ get: result.header });
  return new ApiError(result.status, describeFailure(result.status, parseJson(result.text), retryAfter), retryAfter);
}

function selectorHeaders(selectors: Selectors): Record<string, string> {
  const headers: Record<string, string> = {};
  if (selectors.profile) headers['X-Upload-Profile'] = selectors.profile;
  if (selectors.folder) headers['X-Upload-Folder'] = selectors.folder;
  return headers;
}

/** How often an upload refused with 429 is started again by itself, and the longest wait it sits out. */
export const START_ATTEMPTS = 5;
export const LONGEST_AUTOMATIC_WAIT_S = 120;
/**
 * How often a completion answered "still under way elsewhere" (409 with Retry-After) is repeated:
 * each such answer comes after the server waited up to 10 minutes, so about an hour in all.
 */
const COMPLETION_WAITS = 6;

/**
 * A 429 stored nothing (the upload-start limit counts 30 starts a minute per address; a session cap
 * names when a place frees up), so the upload waits the `Retry-After` it was given and starts again
 * by itself: dropping 40 files used to leave 10 failed, each to be retried by hand a minute later.
 * Other failures are shown at once: a single upload has no idempotency key, so one cut off after
 * the server stored it must not be sent twice without the user's say.
 */
export async function uploadFile(file: File, selectors: Selectors, hooks: UploadHooks): Promise<UploadLinks> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await (file.size > CHUNK_THRESHOLD ? uploadChunked(file, selectors, hooks) : uploadSingle(file, selectors, hooks));
    } catch (error) {
      const wait = error instanceof ApiError && error.status === 429 ? (error.retryAfter ?? 60) : null;
      if (wait === null || wait > LONGEST_AUTOMATIC_WAIT_S || attempt >= START_ATTEMPTS || hooks.signal.aborted) throw error;
      hooks.onProgress(0);
      for (let left = Math.max(1, Math.ceil(wait)); left > 0; left--) {
        hooks.onStatus?.(`Too many uploads at once: starting again in ${left} s`, true);
        await sleep(1000, hooks.signal);
      }
    }
  }
}

async function uploadSingle(file: File, selectors: Selectors, hooks: UploadHooks): Promise<UploadLinks> {
  const form = new FormData();
  // The fields go before the file, so the server checks them before it stores a byte.
  for (const [name, value] of Object.entries(optionValues(selectors))) form.append(name, Array.isArray(value) ? JSON.stringify(value) : String(value));
  form.append('file', file, file.name);
  hooks.onStatus?.('Uploading');
  let result: XhrResult;
  try {
    result = await send({ method: 'POST', url: '/api/files', body: form, headers: selectorHeaders(selectors), withCredentials: true, onProgress: (loaded) => hooks.onProgress(Math.min(loaded, file.size)), signal: hooks.signal });
  } catch (error) {
    if (error instanceof NetworkError) {
      if (!(await stillReadable(file))) throw new FileChanged(file.name);
      throw new Error('The connection failed during the upload; try again');
    }
    throw error;
  }
  if (result.status < 200 || result.status >= 300) throw failure(result);
  hooks.onProgress(file.size);
  return (parseJson(result.text) as { data: UploadLinks }).data;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(new UploadAborted());
    const timer = window.setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        window.clearTimeout(timer);
        reject(new UploadAborted());
      },
      { once: true },
    );
  });

/**
 * A server error other than 507: the server out of storage space is not mended by sending the
 * bytes again, so that failure is shown at once (docs/decisions.md, "A full disk").
 */
const transientServerError = (error: unknown) => error instanceof ApiError && error.status >= 500 && error.status !== 507;
/**
 * A 409 with Retry-After is a part still arriving in an earlier request (one cut off by a lost
 * connection or a restart of the server): the session stays usable, and the part goes again once
 * that request is done. Any other 409 means the session cannot go on.
 */
const passingConflict = (error: unknown): error is ApiError & { retryAfter: number } => error instanceof ApiError && error.status === 409 && error.retryAfter !== null;
const retryable = (error: unknown) =>
  error instanceof NetworkError || (error instanceof ApiError && (error.status === 408 || error.status === 429)) || passingConflict(error) || transientServerError(error);

/**
 * The session itself is gone or cannot go on (expired after an hour, its parts no longer stored, the
 * storage changed): a 404, or a 409 that gives no time to come back. Only then does a Retry start over.
 */
const sessionUnusable = (error: unknown) => error instanceof ApiError && (error.status === 404 || (error.status === 409 && error.retryAfter === null));

async function uploadChunked(file: File, selectors: Selectors, hooks: UploadHooks): Promise<UploadLinks> {
  const progress = hooks.progress ?? newChunkedProgress();
  if (progress.uploadId !== null) {
    try {
      if (progress.unchecked) await checkKeptParts(file, progress, hooks);
      hooks.onStatus?.('Resuming');
      return await sendSession(file, progress.uploadId, progress, hooks, selectors.password);
    } catch (error) {
      if (hooks.signal.aborted || !sessionUnusable(error)) throw error;
      progress.uploadId = null;
      progress.etags.clear();
      progress.digests.clear();
    }
  }
  hooks.onStatus?.('Starting');
  const start: Record<string, unknown> = { ...optionValues(selectors), filename: file.name, size: file.size };
  if (file.type) start.mimeType = file.type;
  const { uploadId } = await api<{ uploadId: string; fileKey: string }>('POST', '/api/files/chunks', start, selectorHeaders(selectors));
  progress.uploadId = uploadId;
  progress.onRecord?.(progress);
  return sendSession(file, uploadId, progress, hooks, selectors.password);
}

/**
 * Parts an earlier page sent, checked against the file chosen now: one of the same name, size and
 * modification time is very likely the same file, but a part whose bytes differ would be joined
 * into the file silently, so each is read and its digest compared. Those that differ, or were
 * recorded without a digest, are sent again (a part sent again replaces the stored one).
 */
async function checkKeptParts(file: File, progress: ChunkedProgress, hooks: UploadHooks): Promise<void> {
  const numbers = [...progress.etags.keys()];
  let checked = 0;
  const report = () => hooks.onStatus?.(`Checking ${numbers.length} ${numbers.length === 1 ? 'part' : 'parts'} sent before${checked > 0 ? ` (${checked} done)` : ''}`);
  report();
  // Two at a time: the browser reads and digests each off the page's thread, so a second keeps
  // another core busy. Chromium on a 2-core machine, 8 MiB parts: 3.5 s a GiB one after another,
  // 2.4–2.6 s two at a time (three: no faster).
  let next = 0;
  const checker = async () => {
    while (next < numbers.length) {
      if (hooks.signal.aborted) throw new UploadAborted();
      const partNumber = numbers[next++]!;
      const kept = progress.digests.get(partNumber);
      const now = kept === undefined ? null : await digestOf(partSlice(file, partNumber));
      if (now === null || now !== kept) {
        progress.etags.delete(partNumber);
        progress.digests.delete(partNumber);
      }
      checked++;
      report();
    }
  };
  await Promise.all([checker(), checker()]);
  if (hooks.signal.aborted) throw new UploadAborted();
  progress.unchecked = false;
  progress.onRecord?.(progress);
}

const partSlice = (file: File, partNumber: number) => file.slice((partNumber - 1) * PART_SIZE, Math.min(file.size, partNumber * PART_SIZE));

/**
 * Sends the parts not yet in `etags` (recording each as it arrives), then completes the session.
 * `password` goes with the completion too, which replaces the one the session started with: a
 * session resumed after a reload was started by a page whose password was kept nowhere
 * (upload/resumable.ts), and the one typed now is the one asked for.
 */
async function sendSession(file: File, uploadId: string, progress: ChunkedProgress, hooks: UploadHooks, password: string | undefined): Promise<UploadLinks> {
  const { etags, digests } = progress;
  const partCount = Math.ceil(file.size / PART_SIZE);
  const partBlob = (partNumber: number) => partSlice(file, partNumber);
  const partSize = (partNumber: number) => Math.min(file.size, partNumber * PART_SIZE) - (partNumber - 1) * PART_SIZE;
  const inFlight = new Map<number, number>();
  let finishedBytes = [...etags.keys()].reduce((sum, partNumber) => sum + partSize(partNumber), 0);
  const report = () => hooks.onProgress(finishedBytes + [...inFlight.values()].reduce((a, b) => a + b, 0));
  report();
  let nextPart = 1;
  // Cancelling the upload, or one part failing for good, stops every other part.
  const local = new AbortController();
  const signal = local.signal;
  const stop = () => local.abort();
  hooks.signal.addEventListener('abort', stop, { once: true });
  const missing = partCount - etags.size;
  // Digests still being made of parts sent: waited for before completion, so none is recorded after it.
  const digesting: Array<Promise<void>> = [];
  hooks.onStatus?.(missing === partCount ? `Uploading ${partCount} parts` : `Uploading ${missing} of ${partCount} parts`);

  const sendPart = async (partNumber: number): Promise<string> => {
    const blob = partBlob(partNumber);
    // Asked with fetch, whose network failure is a TypeError: it is the connection's, retried as a
    // part's own network failure is (it ended the whole upload at the first blip or server restart).
    const { url } = await api<{ url: string }>('GET', `/api/files/chunks/${uploadId}/part/${partNumber}`).catch((error: unknown) => {
      throw error instanceof TypeError ? new NetworkError(error.message) : error;
    });
    const onProgress = (loaded: number) => {
      inFlight.set(partNumber, loaded);
      report();
    };
    if (url.startsWith('local://')) {
      const result = await send({
        method: 'PUT',
        url: `/api/files/chunks/${uploadId}/part/${partNumber}`,
        body: blob,
        headers: { 'Content-Type': 'application/octet-stream' },
        withCredentials: true,
        onProgress,
        signal,
      });
      if (result.status < 200 || result.status >= 300) throw failure(result);
      return (parseJson(result.text) as { data: { etag: string } }).data.etag;
    }
    // A presigned storage URL: no cookies, no Authorization; the ETag header is the receipt.
    const result = await send({ method: 'PUT', url, body: blob, withCredentials: false, onProgress, signal });
    if (result.status < 200 || result.status >= 300) throw new ApiError(result.status, `The storage refused part ${partNumber} (HTTP ${result.status})`);
    const etag = result.header('ETag');
    if (!etag) throw new Error("The storage did not expose the ETag header: allow it in the bucket's CORS configuration (ExposeHeaders: ETag)");
    return etag;
  };

  const worker = async () => {
    while (nextPart <= partCount && !signal.aborted) {
      const partNumber = nextPart++;
      if (etags.has(partNumber)) continue;
      const size = partSize(partNumber);
      // Read and digested while the part goes up, without holding it up: the record a later page
      // checks the file against. A part kept without one is sent again by that page.
      const digest = digestOf(partBlob(partNumber));
      for (let attempt = 1; ; attempt++) {
        try {
          const etag = await sendPart(partNumber);
          etags.set(partNumber, etag);
          digests.delete(partNumber);
          progress.onRecord?.(progress);
          digesting.push(
            digest.then((sent) => {
              // Unless the upload was given up, or the part sent again, meanwhile.
              if (sent === null || etags.get(partNumber) !== etag) return;
              digests.set(partNumber, sent);
              progress.onRecord?.(progress);
            }),
          );
          break;
        } catch (error) {
          inFlight.delete(partNumber);
          report();
          if (error instanceof NetworkError && !(await stillReadable(partBlob(partNumber)))) {
            local.abort();
            throw new FileChanged(file.name);
          }
          if (!retryable(error) || attempt >= PART_ATTEMPTS) {
            local.abort();
            if (error instanceof NetworkError) throw new Error(`Part ${partNumber} failed ${attempt} times: the connection failed`);
            throw error;
          }
          hooks.onStatus?.(`Retrying part ${partNumber} (attempt ${attempt + 1} of ${PART_ATTEMPTS})`);
          const wait = error instanceof ApiError && error.retryAfter ? error.retryAfter * 1000 : 1000 * 2 ** (attempt - 1);
          await sleep(wait, signal);
        }
      }
      inFlight.delete(partNumber);
      finishedBytes += size;
      report();
    }
  };

  try {
    await Promise.all(Array.from({ length: Math.min(PARTS_IN_PARALLEL, partCount) }, () => worker()));
  } finally {
    hooks.signal.removeEventListener('abort', stop);
  }
  if (hooks.signal.aborted) throw new UploadAborted();
  await Promise.all(digesting);

  hooks.onStatus?.('Assembling');
  const parts = [...etags.entries()].sort(([a], [b]) => a - b).map(([PartNumber, ETag]) => ({ PartNumber, ETag }));
  let waits = 0;
  let failures = 0;
  for (;;) {
    try {
      // Completion answers the upload links without a wrapper; repeating it returns the same file.
      return await api<UploadLinks>('POST', `/api/files/chunks/${uploadId}/complete`, password ? { parts, password } : { parts });
    } catch (error) {
      // A 409 with Retry-After: another completion of this upload is still under way (one whose
      // answer a lost connection took, after the server waited 10 minutes for it), or a part still
      // arrives. Its outcome is this upload's, so the completion is repeated, not the upload.
      if (passingConflict(error) && waits < COMPLETION_WAITS) {
        waits += 1;
        hooks.onStatus?.('Waiting for the server to finish assembling');
        await sleep(Math.min(error.retryAfter, LONGEST_AUTOMATIC_WAIT_S) * 1000, hooks.signal);
        continue;
      }
      const transient = error instanceof TypeError || transientServerError(error);
      failures += 1;
      if (!transient || failures >= 3) throw error;
      await sleep(1000 * failures, hooks.signal);
    }
  }
}
