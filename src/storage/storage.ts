import { Transform } from 'node:stream';
import type { Readable, TransformCallback } from 'node:stream';
import { noteStreamedBytes } from '../memory.ts';
import { isCode } from './local-fs.ts';

/** An inclusive byte range, as HTTP Range requests express it. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface StoredObject {
  stream: Readable;
  /** Total size of the object, not of the range. */
  size: number;
}

export interface PutOptions {
  contentType?: string;
  /**
   * Stop reading and fail with StorageLimitError once more than this many bytes arrive.
   * Nothing is left behind when that happens.
   */
  maxBytes?: number;
  /** Sees every chunk of the body, in order, as it is stored (to hash it while streaming). */
  onData?: (chunk: Buffer) => void;
  /**
   * The object's bytes are durable when put returns, but making its name durable is left to a later
   * syncNames() with its key, which a batch of puts shares (local disk: one fsync of a directory
   * for all the names it holds, instead of one per object). Until then a crash may lose the object.
   */
  deferNameSync?: boolean;
  /**
   * Called once the provider has begun a multipart upload for this write (S3, for a body larger
   * than one part), with its ID: what the write leaves in the bucket, invisible as an object, should
   * its process die before the upload completes or is aborted (the crash safety net aborts it).
   */
  onMultipart?: (uploadId: string) => void;
}

export interface PartInfo {
  partNumber: number;
  etag: string;
}

/** A part as the provider holds it. */
export interface StoredPart extends PartInfo {
  size: number;
}

/**
 * Where bytes live. Every method is keyed by an opaque storage key chosen by the caller
 * (for example `files/<userId>/<fileId>`).
 */
export interface Storage {
  readonly kind: 'local' | 's3';
  /**
   * Identifies the physical place objects go to (provenance). Two processes configured for the
   * same bucket or directory report the same target; a session started against another target
   * must not be continued here.
   */
  readonly target: string;

  /** Writes the whole stream; the object becomes visible only once every byte is durable. */
  put(key: string, body: Readable, options?: PutOptions): Promise<{ size: number }>;
  /** Makes the names of objects put with deferNameSync durable; a no-op where every put is durable anyway (S3). */
  syncNames(keys: readonly string[]): Promise<void>;
  /** Throws StorageNotFoundError when the key does not exist. */
  get(key: string, range?: ByteRange): Promise<StoredObject>;
  stat(key: string): Promise<{ size: number } | null>;
  /** Whether the store can be used with the settings given (an object store's bucket and credentials); throws StorageConfigError if not. */
  checkAccess?(): Promise<void>;
  /** Deleting a missing key is not an error. */
  delete(key: string): Promise<void>;

  createMultipart(key: string, contentType?: string): Promise<{ uploadId: string }>;
  /**
   * A URL a client can PUT one part to without credentials, or null when the provider has none. With
   * `contentLength`, the length is signed: the provider refuses a body of any other length.
   */
  presignPart(key: string, uploadId: string, partNumber: number, expiresInSeconds: number, contentLength?: number): Promise<string | null>;
  uploadPart(
    key: string,
    uploadId: string,
    partNumber: number,
    body: Readable,
    options?: { maxBytes?: number; contentLength?: number },
  ): Promise<{ etag: string; size: number }>;
  /** Parts must be sorted by partNumber and unique. */
  completeMultipart(key: string, uploadId: string, parts: PartInfo[]): Promise<{ size: number }>;
  abortMultipart(key: string, uploadId: string): Promise<void>;
  /**
   * The parts of a multipart upload as the provider knows them, sorted by number (bare ETags).
   * Only providers with presignPart need it: parts PUT straight to a presigned URL never pass through
   * the server, so this is the only way to learn their ETags and sizes. An unknown upload throws
   * StorageUploadGoneError, as uploadPart and completeMultipart do.
   */
  listParts?(key: string, uploadId: string): Promise<StoredPart[]>;
  /**
   * The object's path on this machine, for tools that read only files (sharp, ffmpeg, pdftoppm: see
   * src/media/). Readers must not write to it. Providers whose objects are elsewhere leave it out,
   * and media work copies the bytes to DATA_DIR/tmp instead. Throws StorageNotFoundError for a missing key.
   */
  localPath?(key: string): Promise<string>;

  close(): Promise<void>;
}

export class StorageNotFoundError extends Error {
  constructor(key: string) {
    super(`No stored object at ${key}`);
    this.name = 'StorageNotFoundError';
  }
}

export class StorageLimitError extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(`More than ${limit} bytes`);
    this.name = 'StorageLimitError';
    this.limit = limit;
  }
}

/** The multipart upload no longer exists (completed, or aborted): its parts are gone. */
export class StorageUploadGoneError extends Error {
  constructor(uploadId: string, options?: ErrorOptions) {
    super(`No multipart upload ${uploadId}`, options);
    this.name = 'StorageUploadGoneError';
  }
}

/** A multipart upload cannot be completed as asked: a part is missing or its ETag is stale. */
export class StoragePartError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StoragePartError';
  }
}

/** The object store did not begin to answer a call in the time it is given, or fell silent in the middle of one (S3Storage). */
export class StorageUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StorageUnavailableError';
  }
}

/** The object store is set up wrongly for Hoard (a missing bucket, refused credentials): the operator's to mend. */
export class StorageConfigError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StorageConfigError';
  }
}

/** The S3 client's names for an answer that says the bucket or credentials are wrong, not the request. */
const MISCONFIGURED = new Set(['NoSuchBucket', 'AccessDenied', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AllAccessDisabled', 'InvalidBucketName', 'PermanentRedirect', 'AuthorizationHeaderMalformed', 'InvalidRegion']);

/**
 * Whether a storage call failed because the object store is set up wrongly for Hoard (the bucket
 * missing, the credentials refused, another region): no request of a client's can mend that, and
 * a retry will not either until the operator does (docs/decisions.md, "A misconfigured bucket").
 */
export function isStorageMisconfigured(error: unknown): boolean {
  if (error instanceof StorageConfigError) return true;
  return error instanceof Error && '$metadata' in error && MISCONFIGURED.has(error.name);
}

/** Network failures of a call to the object store: it could not be reached, or stopped answering. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);
/** The S3 client's names for an answer that says "later", as opposed to "wrong". */
const LATER = new Set(['TimeoutError', 'RequestTimeout', 'SlowDown', 'ServiceUnavailable', 'InternalError']);

/** Errors of an object store's answer cut off in the middle, as `markIfCutOff` found them. */
const cutOff = new WeakSet<object>();

/**
 * Marks the error of a read's body when it is the connection's failure (reset, cut off: the
 * socket's codes above, or Node's "aborted"), so that `isStorageUnavailable` knows it as the store's.
 * Such errors carry no `$metadata`: they come from the body's stream, after the call has answered.
 */
export function markIfCutOff(error: Error & { code?: unknown }): void {
  if (error.message === 'aborted' || (typeof error.code === 'string' && NETWORK_CODES.has(error.code))) cutOff.add(error);
}

/**
 * Whether a storage call failed because the object store cannot be used right now (S3 unreachable,
 * timing out, answering 5xx or SlowDown, after the client's own retries) rather than because of the
 * request. Only the S3 client's errors carry `$metadata`; local disk faults are not of this kind.
 */
export function isStorageUnavailable(error: unknown): boolean {
  if (error instanceof StorageUnavailableError) return true;
  if (error instanceof Error && cutOff.has(error)) return true;
  if (!(error instanceof Error) || !('$metadata' in error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return (status !== undefined && status >= 500) || LATER.has(error.name);
}

/**
 * The disk that holds DATA_DIR (files, temporary files, spooled parts) has no space left, or the
 * account Hoard runs as is over its disk quota. Not the request's fault, and a retry in a few
 * seconds will not find room either (docs/decisions.md, "A full disk").
 */
export function isStorageFull(error: unknown): boolean {
  return isCode(error, 'ENOSPC', 'EDQUOT');
}

/**
 * Counts bytes flowing through and fails mid-stream, so an oversized or truncated body is
 * rejected while it arrives instead of after it has been stored.
 */
export class ByteCounter extends Transform {
  bytes = 0;
  readonly #maxBytes: number | undefined;
  readonly #expectedBytes: number | undefined;
  readonly #onData: ((chunk: Buffer) => void) | undefined;

  constructor(limits: { maxBytes?: number | undefined; expectedBytes?: number | undefined; onData?: ((chunk: Buffer) => void) | undefined } = {}) {
    super();
    this.#maxBytes = limits.maxBytes;
    this.#expectedBytes = limits.expectedBytes;
    this.#onData = limits.onData;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    noteStreamedBytes(chunk.length);
    if (this.#maxBytes !== undefined && this.bytes > this.#maxBytes) {
      callback(new StorageLimitError(this.#maxBytes));
    } else if (this.#expectedBytes !== undefined && this.bytes > this.#expectedBytes) {
      callback(new Error(`Body is longer than the declared ${this.#expectedBytes} bytes`));
    } else {
      this.#onData?.(chunk);
      callback(null, chunk);
    }
  }

  override _flush(callback: TransformCallback): void {
    if (this.#expectedBytes !== undefined && this.bytes !== this.#expectedBytes) {
      callback(new Error(`Body has ${this.bytes} bytes, not the declared ${this.#expectedBytes}`));
    } else {
      callback();
    }
  }
}
