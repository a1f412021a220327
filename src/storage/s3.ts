import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type { Socket } from 'node:net';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListPartsCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { ByteCounter, markIfCutOff, StorageLimitError, StorageConfigError, StorageNotFoundError, StoragePartError, StorageUnavailableError, StorageUploadGoneError } from './storage.ts';
import type { ByteRange, PartInfo, PutOptions, Storage, StoredObject, StoredPart } from './storage.ts';

/**
 * How long a completion may take before the store says anything: S3 itself answers at once and
 * keeps the connection alive while it assembles, but S3-compatible stores may stay silent while
 * they put a large object together.
 */
const COMPLETION_ANSWER_MS = 10 * 60_000;

export interface S3StorageOptions {
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  /** Where parts of unknown length are spooled before upload; defaults to the OS temp dir. */
  tmpDir?: string;
  /**
   * How long the store may stay silent (no byte either way on a request's connection) before the
   * request is given up on; REQUEST_IDLE_TIMEOUT_MS, the same patience a client gets.
   */
  idleTimeoutMs?: number;
}

/**
 * ETags are returned bare (no surrounding quotes), the same as LocalStorage, and accepted quoted
 * or bare, since browsers uploading to a presigned URL see the quoted HTTP header form.
 */
export class S3Storage implements Storage {
  readonly kind = 's3';
  readonly target: string;
  readonly #client: S3Client;
  readonly #patient: S3Client;
  /** How long a store may stay silent before a call is given up on: 1.25 × REQUEST_IDLE_TIMEOUT_MS. */
  readonly #silence: number;
  readonly #bucket: string;
  readonly #tmpDir: string;

  constructor(options: S3StorageOptions) {
    const { endpoint, region, bucket, accessKeyId, secretAccessKey, forcePathStyle } = options;
    const idle = options.idleTimeoutMs ?? 30_000;
    // With no time-outs (the SDK's default) a store that accepts connections and then answers
    // nothing held every request on it, and every job, for as long as the store stayed silent
    // (docs/decisions.md, "So is an object store that cannot be reached").
    const connectionTimeout = Math.min(idle, 10_000);
    this.#silence = Math.ceil(idle * 1.25);
    const common = {
      endpoint,
      region,
      forcePathStyle,
      credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
      // The default (WHEN_SUPPORTED) adds CRC32 checksums: presigned part URLs would then demand a
      // checksum the browser cannot know, and S3-compatible servers such as s3rver reject or
      // mis-store the aws-chunked bodies that carry trailing checksums.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    } as const;
    // Writes and short calls: an attempt ends after a silence (no byte either way) of a quarter more
    // than a client's idle time, so a part streamed straight from a client that pauses meets the
    // client's own 408 first.
    this.#client = new S3Client({ ...common, requestHandler: { connectionTimeout, socketTimeout: this.#silence } });
    // Reads and completions, where silence is no fault: a read's connection stays quiet while a slow
    // client takes the bytes already read (Hoard reads on only as they go), and a store may assemble
    // a large upload before it says anything. Bounded instead until the answer begins (`#answered`).
    this.#patient = new S3Client({ ...common, requestHandler: { connectionTimeout } });
    this.#bucket = bucket;
    this.#tmpDir = options.tmpDir ?? tmpdir();
    this.target = `s3:${endpoint?.replace(/\/+$/, '') ?? `aws:${region}`}/${bucket}`;
  }

  /**
   * A call on the patient client whose answer must begin within `deadlineMs`; once it has (a read's
   * headers, a completion's result), it runs on for as long as its bytes take.
   */
  async #answered<T>(deadlineMs: number, call: (abortSignal: AbortSignal) => Promise<T>): Promise<T> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), deadlineMs);
    try {
      return await call(abort.signal);
    } catch (error) {
      if (abort.signal.aborted) throw new StorageUnavailableError(`The object store did not answer within ${deadlineMs} ms`, { cause: error });
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<{ size: number }> {
    const counter = new ByteCounter({ maxBytes: options.maxBytes, onData: options.onData });
    // Errors from the source (client abort, a multipart part cut short) reach Upload through the
    // counter, also one the source had failed with before put was called (pipe would never end).
    if (body.errored) counter.destroy(body.errored);
    else body.on('error', (err) => counter.destroy(err)).pipe(counter);
    const { onMultipart } = options;
    const upload = new Upload({
      client: onMultipart ? reportingMultipart(this.#client, onMultipart) : this.#client,
      params: { Bucket: this.#bucket, Key: key, Body: counter, ContentType: options.contentType },
    });
    try {
      // A failing body makes Upload abort its multipart upload and done() waits for that, whereas
      // upload.abort() would settle done() at once and leave the cleanup racing.
      await upload.done();
    } catch (err) {
      body.destroy();
      throw bodyFailure(counter) ?? err;
    }
    return { size: counter.bytes };
  }

  async syncNames(): Promise<void> {
    // An object is durable once its upload has completed: nothing is left to do.
  }

  async get(key: string, range?: ByteRange): Promise<StoredObject> {
    // S3 ignores a malformed Range and sends the whole object, so reject it here instead.
    if (range && !isWellFormed(range)) {
      throw new RangeError(`Invalid range ${range.start}-${range.end}`);
    }
    try {
      const res = await this.#answered(this.#silence, (abortSignal) =>
        this.#patient.send(
          new GetObjectCommand({
            Bucket: this.#bucket,
            Key: key,
            Range: range ? `bytes=${range.start}-${range.end}` : undefined,
          }),
          { abortSignal },
        ),
      );
      const total = /\/(\d+)$/.exec(res.ContentRange ?? '')?.[1];
      const size = total !== undefined ? Number(total) : res.ContentLength;
      if (!(res.Body instanceof Readable) || size === undefined) {
        throw new Error(`Unexpected GetObject response for ${key}`);
      }
      watchForSilence(res.Body, this.#silence);
      return { stream: res.Body, size };
    } catch (err) {
      if (isNotFound(err)) throw new StorageNotFoundError(key);
      if (errorName(err) === 'InvalidRange') {
        throw new RangeError(`Range ${range?.start}-${range?.end} is not satisfiable`, { cause: err });
      }
      throw err;
    }
  }

  /**
   * Whether the bucket exists and these credentials may use it, asked once at start: a bucket that
   * is missing or refused made every upload fail later, each with the store's own words. Asked as a
   * read of a key that is not there, which needs only the object permission Hoard needs anyway
   * (HeadBucket would need s3:ListBucket, which a least-privilege policy does not grant, and a HEAD
   * answer has no body to tell a missing bucket from a missing key). Throws StorageConfigError
   * saying which setting to look at; within `timeoutMs`, else as the store's silence.
   */
  async checkAccess(timeoutMs = 10_000): Promise<void> {
    try {
      const answer = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: `.hoard-access-check/${Date.now().toString(36)}` }), { abortSignal: AbortSignal.timeout(timeoutMs) });
      // A key of that name after all: its bytes are not wanted.
      if (answer.Body instanceof Readable) answer.Body.destroy();
    } catch (err) {
      const name = errorName(err);
      // Not there, as asked; or refused for want of s3:ListBucket, which is how S3 answers a read of
      // a missing key without it: the bucket is there and these credentials may try.
      if (name === 'NoSuchKey' || name === 'NotFound' || name === 'AccessDenied') return;
      // Neither S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY nor any of the SDK's own sources: its words name no setting.
      if (name === 'CredentialsProviderError') throw new StorageConfigError('no credentials for the store: set S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (or give the machine AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile, or an instance role)');
      if (name === 'NoSuchBucket') throw new StorageConfigError(`the bucket "${this.#bucket}" does not exist (${this.target}); create it, or set S3_BUCKET to one that exists`);
      if (name === 'InvalidAccessKeyId' || name === 'SignatureDoesNotMatch') throw new StorageConfigError(`the store refuses these credentials (${this.target}, ${name}); check S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY`);
      if (name === 'PermanentRedirect' || name === 'AuthorizationHeaderMalformed' || name === 'InvalidRegion') throw new StorageConfigError(`the bucket "${this.#bucket}" is in another region (${this.target}, ${name}); check S3_REGION and S3_ENDPOINT`);
      if (name === 'TimeoutError' || name === 'AbortError') throw new StorageUnavailableError(`the object store did not answer within ${timeoutMs / 1000} s`, { cause: err });
      throw err;
    }
  }

  async stat(key: string): Promise<{ size: number } | null> {
    try {
      const res = await this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: key }));
      return { size: res.ContentLength ?? 0 };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: key }));
  }

  async createMultipart(key: string, contentType?: string): Promise<{ uploadId: string }> {
    const res = await this.#client.send(
      new CreateMultipartUploadCommand({ Bucket: this.#bucket, Key: key, ContentType: contentType }),
    );
    if (!res.UploadId) throw new Error(`CreateMultipartUpload returned no UploadId for ${key}`);
    return { uploadId: res.UploadId };
  }

  async presignPart(key: string, uploadId: string, partNumber: number, expiresInSeconds: number, contentLength?: number): Promise<string> {
    const command = new UploadPartCommand({
      Bucket: this.#bucket,
      Key: key,
      UploadId: uploadId,
      PartNumber: partNumber,
      ...(contentLength !== undefined ? { ContentLength: contentLength } : {}),
    });
    // A presigned PUT can bind an exact length only (S3 has no maximum for it): Content-Length is then
    // one of the signed headers, and S3 answers 403 to a body of another length.
    return getSignedUrl(this.#client, command, { expiresIn: expiresInSeconds, ...(contentLength !== undefined ? { signableHeaders: new Set(['content-length']) } : {}) });
  }

  async uploadPart(
    key: string,
    uploadId: string,
    partNumber: number,
    body: Readable,
    options: { maxBytes?: number; contentLength?: number } = {},
  ): Promise<{ etag: string; size: number }> {
    const { maxBytes, contentLength } = options;
    if (maxBytes !== undefined && contentLength !== undefined && contentLength > maxBytes) {
      body.destroy();
      throw new StorageLimitError(maxBytes);
    }
    if (contentLength === undefined) return this.#uploadSpooledPart(key, uploadId, partNumber, body, maxBytes);

    const counter = new ByteCounter({ maxBytes, expectedBytes: contentLength });
    // The HTTP handler does not notice a failing body by itself; abort the request so the
    // server is not left waiting for bytes that will never come.
    const abort = new AbortController();
    counter.on('error', (err) => abort.abort(err));
    body.on('error', (err) => counter.destroy(err)).pipe(counter);
    try {
      const res = await this.#client.send(
        new UploadPartCommand({
          Bucket: this.#bucket,
          Key: key,
          UploadId: uploadId,
          PartNumber: partNumber,
          Body: counter,
          ContentLength: contentLength,
        }),
        { abortSignal: abort.signal },
      );
      return { etag: requireEtag(res.ETag), size: counter.bytes };
    } catch (err) {
      body.destroy();
      if (errorName(err) === 'NoSuchUpload') throw new StorageUploadGoneError(uploadId, { cause: err });
      throw bodyFailure(counter) ?? err;
    }
  }

  async completeMultipart(key: string, uploadId: string, parts: PartInfo[]): Promise<{ size: number }> {
    if (parts.length === 0) throw new StoragePartError('A multipart upload needs at least one part');
    try {
      await this.#answered(Math.max(this.#silence, COMPLETION_ANSWER_MS), (abortSignal) =>
        this.#patient.send(
          new CompleteMultipartUploadCommand({
            Bucket: this.#bucket,
            Key: key,
            UploadId: uploadId,
            MultipartUpload: {
              Parts: parts.map((part) => ({ PartNumber: part.partNumber, ETag: `"${bareEtag(part.etag)}"` })),
            },
          }),
          { abortSignal },
        ),
      );
    } catch (err) {
      if (errorName(err) === 'NoSuchUpload') throw new StorageUploadGoneError(uploadId, { cause: err });
      if (['InvalidPart', 'InvalidPartOrder', 'EntityTooSmall'].includes(errorName(err) ?? '')) {
        throw new StoragePartError(`Cannot complete upload ${uploadId}: ${(err as Error).message}`, { cause: err });
      }
      throw err;
    }
    const stored = await this.stat(key);
    if (!stored) throw new Error(`Completed multipart upload ${uploadId} but ${key} is missing`);
    return stored;
  }

  async abortMultipart(key: string, uploadId: string): Promise<void> {
    try {
      await this.#client.send(new AbortMultipartUploadCommand({ Bucket: this.#bucket, Key: key, UploadId: uploadId }));
    } catch (err) {
      if (errorName(err) !== 'NoSuchUpload') throw err;
    }
  }

  async listParts(key: string, uploadId: string): Promise<StoredPart[]> {
    const parts: StoredPart[] = [];
    let marker: string | undefined;
    try {
      for (;;) {
        const res = await this.#client.send(new ListPartsCommand({ Bucket: this.#bucket, Key: key, UploadId: uploadId, PartNumberMarker: marker }));
        for (const part of res.Parts ?? []) {
          if (part.PartNumber !== undefined && part.ETag) parts.push({ partNumber: part.PartNumber, etag: bareEtag(part.ETag), size: part.Size ?? 0 });
        }
        if (!res.IsTruncated || !res.NextPartNumberMarker) break;
        marker = res.NextPartNumberMarker;
      }
    } catch (err) {
      if (errorName(err) === 'NoSuchUpload') throw new StorageUploadGoneError(uploadId, { cause: err });
      throw err;
    }
    return parts.sort((a, b) => a.partNumber - b.partNumber);
  }

  async close(): Promise<void> {
    this.#client.destroy();
    this.#patient.destroy();
  }

  /** UploadPart needs a Content-Length up front, so a body of unknown length goes to disk first. */
  async #uploadSpooledPart(
    key: string,
    uploadId: string,
    partNumber: number,
    body: Readable,
    maxBytes: number | undefined,
  ): Promise<{ etag: string; size: number }> {
    await mkdir(this.#tmpDir, { recursive: true });
    const dir = await mkdtemp(join(this.#tmpDir, 'part-'));
    try {
      const file = join(dir, 'part');
      const counter = new ByteCounter({ maxBytes });
      const handle = await open(file, 'wx');
      await pipeline(body, counter, handle.createWriteStream());
      const res = await this.#client.send(
        new UploadPartCommand({
          Bucket: this.#bucket,
          Key: key,
          UploadId: uploadId,
          PartNumber: partNumber,
          Body: createReadStream(file),
          ContentLength: counter.bytes,
        }),
      );
      return { etag: requireEtag(res.ETag), size: counter.bytes };
    } catch (err) {
      if (errorName(err) === 'NoSuchUpload') throw new StorageUploadGoneError(uploadId, { cause: err });
      throw err;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

function isWellFormed({ start, end }: ByteRange): boolean {
  return Number.isInteger(start) && Number.isInteger(end) && start >= 0 && end >= start;
}

function bareEtag(etag: string): string {
  return etag.replaceAll('"', '');
}

function requireEtag(etag: string | undefined): string {
  if (!etag) throw new Error('UploadPart response has no ETag');
  return bareEtag(etag);
}

function errorName(err: unknown): string | undefined {
  return err instanceof Error ? err.name : undefined;
}

/** GetObject reports NoSuchKey; HEAD responses have no body, so HeadObject only says NotFound. */
function isNotFound(err: unknown): boolean {
  const name = errorName(err);
  return name === 'NoSuchKey' || name === 'NotFound';
}

/**
 * Ends a read whose store stops sending in the middle of the bytes while Hoard waits for them.
 * Silence counts only while the read's buffer has room: a slow reader holds it full, and then the
 * store is rightly asked for nothing. Once the store has sent every byte (`complete`), nothing is
 * awaited from it: a slow reader may take the last ones out of the buffer as slowly as it likes.
 * A read that fails on its connection (reset, cut off) is the store's state too, answered 503 like
 * a call that could not be made (`markIfCutOff`).
 */
function watchForSilence(body: Readable & { socket?: Socket | null; complete?: boolean }, silenceMs: number): void {
  const socket = body.socket;
  let last = Date.now();
  const heard = () => {
    last = Date.now();
  };
  socket?.on('data', heard);
  const timer = setInterval(() => {
    if (body.complete === true) return stop();
    if (body.readableLength >= body.readableHighWaterMark) return heard();
    if (Date.now() - last > silenceMs) body.destroy(new StorageUnavailableError(`The object store sent nothing for ${silenceMs} ms in the middle of an answer`));
  }, Math.max(25, Math.floor(silenceMs / 4)));
  timer.unref();
  const stop = () => {
    clearInterval(timer);
    socket?.off('data', heard);
  };
  body.once('close', stop);
  body.on('error', markIfCutOff);
}

/**
 * The client for one Upload, telling `onMultipart` the ID of the multipart upload it begins as soon
 * as the store answers, before any part is sent (Upload itself says so only after the first part).
 */
function reportingMultipart(client: S3Client, onMultipart: (uploadId: string) => void): S3Client {
  return new Proxy(client, {
    get(target, property) {
      if (property !== 'send') return Reflect.get(target, property, target);
      return async (...args: Parameters<S3Client['send']>) => {
        const output: unknown = await target.send(...args);
        const uploadId = (output as { UploadId?: unknown } | undefined)?.UploadId;
        // The answer that brings an upload ID to a command that named none: CreateMultipartUpload.
        // (Not `instanceof`: Upload may load the client package's other build, whose classes differ.)
        const input = (args[0] as { input?: object }).input;
        if (typeof uploadId === 'string' && input !== undefined && !('UploadId' in input)) onMultipart(uploadId);
        return output;
      };
    },
  });
}

/**
 * The body's own failure, when it is why a write failed: the client's (an aborted request), or the
 * counter's limit. Not the AbortError of a read the S3 client stopped because its request to the
 * store failed: that failure is the store's, and its error says so (a 503, not a 500).
 */
function bodyFailure(counter: ByteCounter): Error | null {
  const failure = counter.errored;
  return failure && failure.name !== 'AbortError' ? failure : null;
}
