import os from 'node:os';
import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import path from 'node:path';
import { z } from 'zod';
import type { S3StorageOptions } from './storage/s3.ts';

/**
 * Configuration comes from the environment only (a .env file is merged into it by the entry point).
 * Every variable is validated here so that a bad value stops start-up with one clear line.
 */
export interface Config {
  port: number;
  host: string;
  baseUrl: string;
  dataDir: string;
  databaseUrl: string | null;
  storage: 'local' | 's3';
  s3: Omit<S3StorageOptions, 'tmpDir'> | null;
  maxUploadSize: number;
  defaultQuota: number;
  trustProxy: boolean;
  /** A request whose body sends no byte for this long, or whose headers take longer, gets a 408 (contract §7). */
  requestIdleTimeoutMs: number;
  /** Open connections for the whole server; 0: no cap. */
  maxConnections: number;
  /** Open connections from one client address; 0: no cap. Not applied behind a trusted proxy (every connection comes from it). */
  maxConnectionsPerIp: number;
  webhookAllowPrivate: boolean;
  /** Key material for secrets stored encrypted (webhook signing secrets); null: DATA_DIR/secret.key. */
  secretKey: string | null;
  /** Testing only: replaces the webhook retry back-off schedule (milliseconds between attempts). */
  webhookRetryDelaysMs: number[] | null;
  /**
   * Testing only: every JSON answer is checked against its route's response schema, and a route
   * without one fails start-up (docs/architecture.md, "One definition of the API").
   */
  checkResponses: boolean;
  logLevel: string;
  /** Upload starts per minute per client IP; 0 switches the limit off (benchmarks only). */
  uploadRateLimit: number;
  /** Days audit records are kept; 0 keeps them forever. */
  auditRetentionDays: number;
  /** Memory for reusable listing responses (src/listing/listing-cache.ts), in bytes; 0 turns it off. */
  listingCacheBytes: number;
  /** Declared bytes all open chunked uploads of the instance may hold in temporary storage; 0: no limit. */
  chunkedUploadTempLimit: number;
  /** Archive requests one process works on at once (contract §9); more get 503 with Retry-After. */
  archiveConcurrency: number;
  /** The WebAuthn relying-party ID of passkeys (contract §8): the host name of BASE_URL unless WEBAUTHN_RP_ID says otherwise. */
  webauthnRpId: string;
  /** Thumbnails this process makes at once (contract §10); 0: it makes none and leaves them to other processes. */
  thumbnailConcurrency: number;
  /** Text recognitions this process runs at once, each in a long-lived worker; 0: it runs none. */
  ocrConcurrency: number;
  /** Images with more pixels than this get neither a thumbnail nor text (a decompression bomb is refused unread). */
  mediaMaxPixels: number;
  /** Stored bytes that may be copied to DATA_DIR/tmp for media work when the storage has no local path (S3); larger files get none. */
  mediaMaxCopyBytes: number;
  /** Server processes sharing the port (src/workers.ts); 1 serves from this process alone. */
  workers: number;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const booleanText = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');
/** Node's timers hold at most 2^31 − 1 ms (24.8 days); a day is more than any client needs. */
const MAX_IDLE_TIMEOUT_MS = 24 * 60 * 60 * 1000;
const byteCount = z.string().regex(/^\d+$/, 'must be a whole number of bytes').transform(Number).pipe(z.number().int().min(0).max(Number.MAX_SAFE_INTEGER));
const port = z.string().regex(/^\d+$/, 'must be a port number').transform(Number).pipe(z.number().int().min(0).max(65535));
const httpOrigin = z.string().refine((v) => {
  try {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && (u.pathname === '/' || u.pathname === '') && !v.endsWith('/') && !u.search && !u.hash;
  } catch {
    return false;
  }
}, 'must be an http(s) origin such as https://files.example.com, without a trailing slash or path')
  // As browsers spell an origin (lower-case scheme and host, no default port, IDN host names in
  // ASCII): the Origin check compares with it, and an upper-case HTTPS:// set no Secure cookie.
  .transform((v) => new URL(v).origin);

const variables = {
  PORT: port.optional(),
  HOST: z.string().min(1).optional(),
  BASE_URL: httpOrigin.optional(),
  DATA_DIR: z.string().min(1).optional(),
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must start with postgres:// (leave it unset for the embedded SQLite database)').optional(),
  STORAGE: z.enum(['local', 's3'], { message: 'must be local or s3' }).optional(),
  S3_ENDPOINT: z.url({ message: 'must be a URL' }).optional(),
  S3_REGION: z.string().min(1).optional(),
  S3_BUCKET: z.string().min(1).optional(),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  S3_FORCE_PATH_STYLE: booleanText.optional(),
  // At least one byte: it is the instance setting's first value, which must be positive, and a
  // 0 kept there would stop every later start (docs/decisions.md, Administration).
  MAX_UPLOAD_SIZE: byteCount.pipe(z.number().min(1, 'must be at least 1 byte')).optional(),
  DEFAULT_QUOTA: byteCount.optional(),
  TRUST_PROXY: booleanText.optional(),
  REQUEST_IDLE_TIMEOUT_MS: z.string().regex(/^\d+$/, 'must be a whole number of milliseconds').transform(Number).pipe(z.number().min(100, 'must be at least 100 milliseconds').max(MAX_IDLE_TIMEOUT_MS, `must be at most ${MAX_IDLE_TIMEOUT_MS} milliseconds (a day)`)).optional(),
  MAX_CONNECTIONS: z.string().regex(/^\d+$/, 'must be a whole number of connections (0: no cap)').transform(Number).optional(),
  MAX_CONNECTIONS_PER_IP: z.string().regex(/^\d+$/, 'must be a whole number of connections (0: no cap)').transform(Number).optional(),
  WEBHOOK_ALLOW_PRIVATE: booleanText.optional(),
  SECRET_KEY: z.string().min(32, 'must be at least 32 characters (e.g. openssl rand -base64 48)').optional(),
  WEBHOOK_RETRY_DELAYS_MS: z
    .string()
    .regex(/^\d+(,\d+){0,19}$/, 'must be 1 to 20 comma-separated whole numbers of milliseconds')
    .transform((v) => v.split(',').map(Number))
    .optional(),
  UPLOAD_RATE_LIMIT: z.string().regex(/^\d+$/, 'must be a whole number of requests per minute').transform(Number).optional(),
  AUDIT_RETENTION_DAYS: z.string().regex(/^\d+$/, 'must be a whole number of days (0 keeps records forever)').transform(Number).optional(),
  CHUNKED_UPLOAD_TEMP_LIMIT: byteCount.optional(),
  LISTING_CACHE_MB: z.string().regex(/^\d+$/, 'must be a whole number of MiB (0 turns the cache off)').transform(Number).optional(),
  WEBAUTHN_RP_ID: z
    .string()
    .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/, 'must be a lowercase host name such as example.com, without scheme or port')
    .max(253)
    .optional(),
  ARCHIVE_CONCURRENCY: z.string().regex(/^[1-9]\d{0,3}$/, 'must be a whole number of requests from 1 to 9999').transform(Number).optional(),
  THUMBNAIL_CONCURRENCY: z.string().regex(/^\d{1,3}$/, 'must be a whole number of thumbnails at once (0: this process makes none)').transform(Number).optional(),
  OCR_CONCURRENCY: z.string().regex(/^\d{1,2}$/, 'must be a whole number of recognitions at once (0: this process runs none)').transform(Number).optional(),
  MEDIA_MAX_PIXELS: z.string().regex(/^[1-9]\d{0,11}$/, 'must be a whole number of pixels').transform(Number).optional(),
  MEDIA_MAX_COPY_BYTES: byteCount.optional(),
  CHECK_RESPONSES: booleanText.optional(),
  WORKERS: z
    .string()
    .regex(/^(auto|[1-9]\d{0,2})$/, 'must be a whole number of processes from 1 to 999, or auto (one per CPU)')
    .transform((v) => (v === 'auto' ? os.availableParallelism() : Number(v)))
    .optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional(),
} satisfies Record<string, z.ZodType>;

type Parsed = { [K in keyof typeof variables]: z.output<(typeof variables)[K]> };

/** The database an instance works on, in the words the operator set it with (never a password). */
export function databaseName(config: Pick<Config, 'databaseUrl' | 'dataDir'>): string {
  if (config.databaseUrl === null) return `the SQLite database ${path.join(config.dataDir, 'hoard.sqlite')}`;
  const url = new URL(config.databaseUrl);
  return `the PostgreSQL database ${url.host}${url.pathname}`;
}

/**
 * Reads `.env` from the working directory into the environment, if there is one (contract §1). One
 * that cannot be read (no permission, a directory, bad syntax) is a ConfigError that names it.
 */
export function loadDotEnv(): void {
  if (!existsSync('.env')) return;
  let text: string;
  try {
    text = readFileSync('.env', 'utf8');
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    throw new ConfigError(`.env in ${process.cwd()} cannot be read (${code ?? message ?? 'unknown error'})`);
  }
  // As process.loadEnvFile does: a variable the environment already has keeps its value.
  for (const [name, value] of Object.entries(parseEnv(text))) if (process.env[name] === undefined) process.env[name] = value;
}

export function loadConfig(env: Record<string, string | undefined>): Config {
  const parsed: Partial<Parsed> = {};
  for (const [name, schema] of Object.entries(variables)) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const result = schema.safeParse(raw);
    if (!result.success) {
      const reason = result.error.issues[0]?.message ?? 'is invalid';
      // A secret's value is never echoed, not even a wrong one.
      const shown = name === 'SECRET_KEY' ? '(hidden)' : JSON.stringify(raw);
      throw new ConfigError(`${name}=${shown} ${reason.startsWith('must') ? reason : `is invalid: ${reason}`}`);
    }
    (parsed as Record<string, unknown>)[name] = result.data;
  }

  const listenPort = parsed.PORT ?? 3000;
  const baseUrl = parsed.BASE_URL ?? `http://localhost:${listenPort}`;
  const baseHost = new URL(baseUrl).hostname;
  // A passkey's relying-party ID must be the page's host or a domain it belongs to (WebAuthn, "RP ID").
  const webauthnRpId = parsed.WEBAUTHN_RP_ID ?? baseHost;
  if (baseHost !== webauthnRpId && !baseHost.endsWith(`.${webauthnRpId}`)) {
    throw new ConfigError(`WEBAUTHN_RP_ID=${JSON.stringify(webauthnRpId)} must be the host name of BASE_URL (${baseHost}) or a domain it belongs to`);
  }
  const storage = parsed.STORAGE ?? 'local';
  if (storage === 's3' && !parsed.S3_BUCKET) {
    throw new ConfigError('S3_BUCKET must be set when STORAGE=s3');
  }
  // One of the two alone was passed to nobody, and the AWS SDK then looked for both elsewhere: the
  // machine's AWS_* variables or role, other credentials than the operator meant, or none at all.
  for (const [name, other] of [['S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'], ['S3_SECRET_ACCESS_KEY', 'S3_ACCESS_KEY_ID']] as const) {
    if (storage === 's3' && parsed[name] !== undefined && parsed[other] === undefined) {
      throw new ConfigError(`${name} is set without ${other}: set both, or neither (then the AWS SDK's own: AWS_* variables, a profile, an instance role)`);
    }
  }

  return {
    port: listenPort,
    host: parsed.HOST ?? '0.0.0.0',
    baseUrl,
    dataDir: path.resolve(parsed.DATA_DIR ?? './data'),
    databaseUrl: parsed.DATABASE_URL ?? null,
    storage,
    s3:
      storage === 's3'
        ? {
            endpoint: parsed.S3_ENDPOINT,
            region: parsed.S3_REGION ?? 'us-east-1',
            bucket: parsed.S3_BUCKET!,
            accessKeyId: parsed.S3_ACCESS_KEY_ID,
            secretAccessKey: parsed.S3_SECRET_ACCESS_KEY,
            forcePathStyle: parsed.S3_FORCE_PATH_STYLE ?? Boolean(parsed.S3_ENDPOINT),
            idleTimeoutMs: parsed.REQUEST_IDLE_TIMEOUT_MS ?? 30_000,
          }
        : null,
    maxUploadSize: parsed.MAX_UPLOAD_SIZE ?? 1073741824,
    defaultQuota: parsed.DEFAULT_QUOTA ?? 0,
    trustProxy: parsed.TRUST_PROXY ?? false,
    requestIdleTimeoutMs: parsed.REQUEST_IDLE_TIMEOUT_MS ?? 30_000,
    maxConnections: parsed.MAX_CONNECTIONS ?? 2048,
    maxConnectionsPerIp: parsed.MAX_CONNECTIONS_PER_IP ?? 256,
    webhookAllowPrivate: parsed.WEBHOOK_ALLOW_PRIVATE ?? false,
    secretKey: parsed.SECRET_KEY ?? null,
    webhookRetryDelaysMs: parsed.WEBHOOK_RETRY_DELAYS_MS ?? null,
    checkResponses: parsed.CHECK_RESPONSES ?? false,
    logLevel: parsed.LOG_LEVEL ?? 'info',
    uploadRateLimit: parsed.UPLOAD_RATE_LIMIT ?? 30,
    auditRetentionDays: parsed.AUDIT_RETENTION_DAYS ?? 90,
    listingCacheBytes: (parsed.LISTING_CACHE_MB ?? 32) * 1024 * 1024,
    chunkedUploadTempLimit: parsed.CHUNKED_UPLOAD_TEMP_LIMIT ?? 20 * 1024 * 1024 * 1024,
    webauthnRpId,
    archiveConcurrency: parsed.ARCHIVE_CONCURRENCY ?? 4,
    thumbnailConcurrency: parsed.THUMBNAIL_CONCURRENCY ?? 1,
    ocrConcurrency: parsed.OCR_CONCURRENCY ?? 1,
    // 100 megapixels: a 24-megapixel photo or a long panorama passes; a bomb of 60000×60000 does not.
    mediaMaxPixels: parsed.MEDIA_MAX_PIXELS ?? 100_000_000,
    mediaMaxCopyBytes: parsed.MEDIA_MAX_COPY_BYTES ?? 1073741824,
    workers: parsed.WORKERS ?? 1,
  };
}
