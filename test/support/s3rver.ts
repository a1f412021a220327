import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error s3rver ships no type declarations
import S3rverModule from 's3rver';

interface KoaContext {
  method: string;
  path: string;
  query: Record<string, string | string[] | undefined>;
  status: number;
  type: string;
  body: unknown;
}
type Middleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>;

interface S3rverInstance {
  middleware: Middleware[];
  store: { getResourcePath(bucket: string, key: string | undefined, resource: string): string };
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
  httpServer: { closeAllConnections(): void };
}
const S3rver = S3rverModule as new (options: Record<string, unknown>) => S3rverInstance;

export interface S3rverHandle {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Multipart uploads neither completed nor aborted; on real S3 these would keep costing money. */
  pendingUploadIds(): Promise<string[]>;
  stop(): Promise<void>;
  /** Stops at once, cutting the requests under way off, as a store that crashed or went off the network. */
  cutOff(): Promise<void>;
  /**
   * Keeps accepting connections but answers nothing until thawed, as a store whose process froze or
   * whose gateway lost its upstream: requests wait, with neither an answer nor a refusal.
   */
  freeze(): void;
  thaw(): void;
  /** Answers every request 503 Service Unavailable while `down`, as a store in an outage. */
  outage(down: boolean): void;
  /**
   * Answers each CompleteMultipartUpload only after `ms` of silence, as a store that assembles a
   * large object before it says anything (0: at once again).
   */
  delayCompletions(ms: number): void;
}

export async function startS3rver(): Promise<S3rverHandle> {
  const directory = await mkdtemp(join(tmpdir(), 'hoard-s3rver-'));
  const bucket = 'hoard-test';
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  let frozen: { thawed: Promise<void>; thaw: () => void } | null = null;
  let completionDelayMs = 0;
  let down = false;
  const holdWhileFrozen: Middleware = async (ctx, next) => {
    if (frozen) await frozen.thawed;
    if (down) {
      ctx.status = 503;
      ctx.type = 'application/xml';
      ctx.body = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>ServiceUnavailable</Code><Message>Service is unable to handle request.</Message></Error>';
      return;
    }
    // CompleteMultipartUpload: POST with ?uploadId.
    if (completionDelayMs > 0 && ctx.method === 'POST' && typeof ctx.query['uploadId'] === 'string') await new Promise((resolve) => setTimeout(resolve, completionDelayMs));
    return next();
  };
  // Koa composes middleware when the server starts listening, so this runs before s3rver's router.
  server.middleware.unshift(holdWhileFrozen, abortMultipartUpload(server), listParts(server));
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    region: 'us-east-1',
    // s3rver's built-in account.
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    async pendingUploadIds() {
      return readdir(server.store.getResourcePath(bucket, undefined, 'uploads')).catch(() => []);
    },
    freeze() {
      if (frozen) return;
      let thaw = () => {};
      const thawed = new Promise<void>((resolve) => (thaw = resolve));
      frozen = { thawed, thaw };
    },
    thaw() {
      frozen?.thaw();
      frozen = null;
    },
    outage(now: boolean) {
      down = now;
    },
    delayCompletions(ms: number) {
      completionDelayMs = ms;
    },
    async cutOff() {
      const closing = server.close();
      server.httpServer.closeAllConnections();
      await closing;
    },
    async stop() {
      frozen?.thaw();
      frozen = null;
      await server.close();
      // A write that a killed server's request started can still land in the store while it is
      // removed (ENOTEMPTY, seen once in CI after test/http/archive-crash.test.ts): retried.
      await rm(directory, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    },
  };
}

/**
 * s3rver 3.7.1 routes no AbortMultipartUpload (DELETE ?uploadId answers 405 MethodNotAllowed),
 * which both S3Storage.abortMultipart and lib-storage's cleanup after a failed put rely on.
 * This fills the gap the way S3 behaves: the upload's parts go away, an unknown id is NoSuchUpload.
 */
function abortMultipartUpload(server: S3rverInstance): Middleware {
  return async (ctx, next) => {
    const uploadId = ctx.query['uploadId'];
    const bucket = ctx.path.split('/')[1];
    if (ctx.method !== 'DELETE' || typeof uploadId !== 'string' || !bucket) return next();
    const dir = /^[0-9a-f]+$/.test(uploadId)
      ? join(server.store.getResourcePath(bucket, undefined, 'uploads'), uploadId)
      : undefined;
    if (!dir || !(await stat(dir).catch(() => null))) {
      ctx.status = 404;
      ctx.type = 'application/xml';
      ctx.body =
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code>' +
        '<Message>The specified upload does not exist.</Message></Error>';
      return;
    }
    await rm(dir, { recursive: true, force: true });
    ctx.status = 204;
  };
}

/**
 * s3rver 3.7.1 routes no ListParts either (GET ?uploadId answers 405), which S3Storage.listParts uses
 * to learn the ETags and sizes of parts PUT straight to a presigned URL. s3rver keeps each part as
 * uploads/<uploadId>/<partNumber> with its MD5 (the ETag) beside it in <partNumber>.md5.
 */
function listParts(server: S3rverInstance): Middleware {
  return async (ctx, next) => {
    const uploadId = ctx.query['uploadId'];
    const [, bucket, ...keyParts] = ctx.path.split('/');
    if (ctx.method !== 'GET' || typeof uploadId !== 'string' || !bucket || keyParts.length === 0) return next();
    const dir = /^[0-9a-f]+$/.test(uploadId) ? join(server.store.getResourcePath(bucket, undefined, 'uploads'), uploadId) : undefined;
    const names = dir ? await readdir(dir).catch(() => null) : null;
    ctx.type = 'application/xml';
    if (!dir || !names) {
      ctx.status = 404;
      ctx.body = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>';
      return;
    }
    const marker = Number(ctx.query['part-number-marker'] ?? 0) || 0;
    const maxParts = Math.min(Number(ctx.query['max-parts'] ?? 1000) || 1000, 1000);
    const numbers = names.filter((name) => /^\d+$/.test(name)).map(Number).filter((n) => n > marker).sort((a, b) => a - b);
    const page = numbers.slice(0, maxParts);
    const parts = await Promise.all(
      page.map(async (n) => {
        // The MD5 is written once the part is complete: a part still arriving is not listed yet.
        const md5 = await readFile(join(dir, `${n}.md5`), 'utf8').catch(() => null);
        if (md5 === null) return '';
        const info = await stat(join(dir, String(n)));
        return `<Part><PartNumber>${n}</PartNumber><LastModified>${info.mtime.toISOString()}</LastModified><ETag>"${md5.trim()}"</ETag><Size>${info.size}</Size></Part>`;
      }),
    );
    const truncated = numbers.length > page.length;
    ctx.status = 200;
    ctx.body =
      '<?xml version="1.0" encoding="UTF-8"?>\n<ListPartsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
      `<Bucket>${bucket}</Bucket><Key>${keyParts.join('/')}</Key><UploadId>${uploadId}</UploadId>` +
      `<PartNumberMarker>${marker}</PartNumberMarker><NextPartNumberMarker>${page.at(-1) ?? marker}</NextPartNumberMarker>` +
      `<MaxParts>${maxParts}</MaxParts><IsTruncated>${truncated}</IsTruncated>${parts.join('')}</ListPartsResult>`;
  };
}
