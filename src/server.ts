import fs from 'node:fs';
import path from 'node:path';
import type { Socket } from 'node:net';
import pino, { type Logger } from 'pino';
import type { Config } from './config.ts';
import { ArchiveCapacity } from './archives/capacity.ts';
import type { AppContext } from './context.ts';
import { openDatabase, type Db } from './db/database.ts';
import { migrate } from './db/migrator.ts';
import { ensureBuiltinRoles } from './auth/roles.ts';
import { ensureSettings, initialSettings, readSettings } from './settings/instance-settings.ts';
import { tempLimitProblem } from './shared/chunk-limits.ts';
import { createStorage } from './storage/create-storage.ts';
import { checkDataDirHoldsFiles } from './storage/data-dir-check.ts';
import { checkSecretKey, openSecretBox } from './secret-key-check.ts';
import { buildApp, type App } from './http/app.ts';
import { AuditLog } from './audit/audit-log.ts';
import { ListingCache } from './listing/listing-cache.ts';
import { AUDIT_PRUNE_JOB, auditPruneHandler, scheduleAuditPrune } from './audit/audit-retention.ts';
import { RATE_LIMIT_PRUNE_JOB, rateLimitPruneHandler, scheduleRateLimitPrune } from './auth/throttle.ts';
import { scheduleSessionSweep, SESSION_SWEEP_JOB, sessionSweepHandler } from './auth/sessions.ts';
import { JobRunner } from './jobs/queue.ts';
import { sealPlaintextUploadTokens } from './tokens/legacy-token.ts';
import { WEBHOOK_DELIVERY_SLOTS, webhookJobHandlers } from './webhooks/delivery-job.ts';
import { WEBHOOK_DELIVERY_JOB } from './webhooks/outbox.ts';
import { FILE_EXPIRY_JOB } from './files/expiry.ts';
import { fileExpiryHandler } from './files/expire-file.ts';
import { scheduleTmpSweep, STORAGE_CLEANUP_JOB, storageCleanupHandler, TMP_SWEEP_JOB, tmpSweepHandler } from './jobs/storage-cleanup.ts';
import { MediaWorker } from './media/media-worker.ts';
import { scheduleSearchMerge, SEARCH_MERGE_JOB, searchMergeHandler } from './listing/search-index.ts';
import { giveWayToRequests, OCR_JOB, ocrHandler, THUMBNAIL_JOB, thumbnailHandler, MEDIA_BACKFILL_JOB } from './media/media-jobs.ts';
import { RequestLoad } from './shared/request-load.ts';
import { mediaBackfillHandler, scheduleMediaBackfillIfNeeded } from './media/backfill.ts';
import { CHUNK_SESSION_SWEEP_JOB, CHUNK_STORAGE_ABORT_JOB, chunkSessionSweepHandler, chunkStorageAbortHandler } from './chunks/chunk-session-jobs.ts';
import { dataDirExposure, ensureDataDir } from './data-dir.ts';
import { requestLogFields } from './http/logged-url.ts';

export interface RunningServer {
  app: App;
  ctx: AppContext;
  /** The background job runner (tests call jobs.runDueJobs()). */
  jobs: JobRunner;
  /** The address actually listened on (useful with PORT=0). */
  url: string;
  close(): Promise<void>;
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      // Credentials must never reach a log line: neither in the request's own line, nor where a library
      // logs the headers it was handed (the multipart parser does at trace: `busboyOptions.headers`).
      // Paths named one by one: a wildcard path cost about 4 µs more on every line, the access log's
      // line of every request among them; test/http/log-secrets.test.ts looks for any other leak.
      redact: {
        paths: [
          ...['req.headers', 'busboyOptions.headers'].flatMap((headers) => [`${headers}.authorization`, `${headers}.cookie`, `${headers}["proxy-authorization"]`]),
          'res.headers["set-cookie"]',
        ],
        censor: '[redacted]',
      },
      // Fastify's request fields, with the URL's secrets left out (src/http/logged-url.ts).
      serializers: { req: requestLogFields },
    },
    // Written in the background: lines logged while a write is under way go out together in the
    // next one, instead of a blocking write per line (two per request). pino flushes what is left
    // when the process exits.
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/**
 * What a process needs of the database before it serves: migrations applied, built-in roles and
 * instance settings present. Safe to repeat; the primary of several workers (src/workers.ts) runs it
 * once before starting them, so that they do not race to apply the same migration.
 */
export async function prepareDatabase(db: Db, config: Config, log: Logger): Promise<void> {
  const applied = await migrate(db, undefined, () => log.warn('the database is locked by another process (another start upgrading it, `migrate`, the import): waiting for it, up to 15 minutes'));
  if (applied.length > 0) log.info({ migrations: applied }, 'database migrated');
  await ensureBuiltinRoles(db);
  await ensureSettings(db, initialSettings(config));
}

/**
 * Why listening failed, in the words of the variable to change: Node's own ("getaddrinfo ENOTFOUND
 * …", "listen EADDRINUSE …") name neither. Null for anything else.
 */
function listenProblem(error: unknown, config: Config): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'EADDRINUSE') return `PORT=${config.port}: the port is in use on ${config.host} (by another Hoard, or another program)`;
  if (code === 'EACCES') return `PORT=${config.port}: not allowed to listen on this port (ports below 1024 need privileges)`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EADDRNOTAVAIL' || code === 'EAI_NONAME') return `HOST=${config.host}: not an address of this machine`;
  return null;
}

/**
 * Opens the database (migrating it), the storage and the HTTP server. `notices: false` keeps the
 * start's advice to the operator (a readable DATA_DIR, a small temporary room, another key, BASE_URL
 * naming port 0) unsaid: of several workers of one instance, which find the same, only the first
 * says it (src/main.ts), not each one again.
 */
export async function startServer(config: Config, log: Logger = createLogger(config.logLevel), { notices = true }: { notices?: boolean } = {}): Promise<RunningServer> {
  ensureDataDir(config.dataDir);
  const advise = (text: string | null, fields?: object) => {
    if (notices && text !== null) log.warn(fields ?? {}, text);
  };
  advise(dataDirExposure(config.dataDir));
  fs.mkdirSync(path.join(config.dataDir, 'tmp'), { recursive: true });
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, log });
  await prepareDatabase(database.db, config, log);

  const storage = await createStorage({ kind: config.storage, dataDir: config.dataDir, ...(config.s3 ? { s3: config.s3 } : {}) });
  // A process whose DATA_DIR lacks the database's files would serve 404s for them: refused.
  await checkDataDirHoldsFiles(database.db, storage, config.dataDir, log).catch(async (error: unknown) => {
    await storage.close();
    await database.close();
    throw error;
  });
  const secretBox = await openSecretBox(database.db, config).catch(async (error: unknown) => {
    await storage.close();
    await database.close();
    throw error;
  });
  await checkSecretKey(database.db, secretBox, notices ? log : { error: () => {} });
  advise(tempLimitProblem((await readSettings(database.db)).maxUploadSizeBytes, config.chunkedUploadTempLimit));
  // Before serving: no legacy upload credential stays in plaintext (migration 0011).
  const sealed = await sealPlaintextUploadTokens(database.db, secretBox);
  if (sealed > 0) log.info({ accounts: sealed }, 'encrypted plaintext upload credentials');
  const ctx: AppContext = { config, db: database.db, reader: database.reader, dialect: database.dialect, storage, log, audit: new AuditLog(database.db, log), secretBox, listingCache: new ListingCache(config.listingCacheBytes), archiveCapacity: new ArchiveCapacity(config.archiveConcurrency), load: new RequestLoad(), jobs: { wake: () => jobs.wake() } };
  // Thumbnails and text recognition (contract §10) run in a low-priority process of their own, started
  // on first use; a process configured for neither leaves that work to the others.
  const media = config.thumbnailConcurrency > 0 || config.ocrConcurrency > 0 ? new MediaWorker({ maxPixels: config.mediaMaxPixels, ocrConcurrency: Math.max(1, config.ocrConcurrency), log }) : null;
  const mediaHandlers = media ? { ...(config.thumbnailConcurrency > 0 ? { [THUMBNAIL_JOB]: thumbnailHandler(ctx, media, await MediaWorker.tools()) } : {}), ...(config.ocrConcurrency > 0 ? { [OCR_JOB]: ocrHandler(ctx, media) } : {}) } : {};
  // Every background job type and its handler.
  const jobs = new JobRunner(ctx, {
    ...mediaHandlers,
    [MEDIA_BACKFILL_JOB]: mediaBackfillHandler(ctx),
    [FILE_EXPIRY_JOB]: fileExpiryHandler(ctx),
    [STORAGE_CLEANUP_JOB]: storageCleanupHandler(ctx),
    [TMP_SWEEP_JOB]: tmpSweepHandler(ctx),
    [CHUNK_SESSION_SWEEP_JOB]: chunkSessionSweepHandler(ctx),
    [CHUNK_STORAGE_ABORT_JOB]: chunkStorageAbortHandler(ctx),
    [AUDIT_PRUNE_JOB]: auditPruneHandler(ctx),
    [RATE_LIMIT_PRUNE_JOB]: rateLimitPruneHandler(ctx),
    [SESSION_SWEEP_JOB]: sessionSweepHandler(ctx),
    [SEARCH_MERGE_JOB]: searchMergeHandler(ctx),
    ...webhookJobHandlers({ db: ctx.db, log, secretBox, allowPrivate: config.webhookAllowPrivate, retryDelaysMs: config.webhookRetryDelaysMs }),
  }, {
    typeConcurrency: { [THUMBNAIL_JOB]: config.thumbnailConcurrency, [OCR_JOB]: config.ocrConcurrency, [WEBHOOK_DELIVERY_JOB]: WEBHOOK_DELIVERY_SLOTS },
    // Media work gives way to requests: while they keep coming, at most one job of each kind a second.
    typeGate: { [THUMBNAIL_JOB]: giveWayToRequests(ctx.load), [OCR_JOB]: giveWayToRequests(ctx.load) },
  });
  const app = await buildApp(ctx);
  // Open connections, so that a stop can close those that never sent a byte (below). Kept per
  // connection, not per request: nothing is added to a request's path.
  const connections = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  // What the process opened besides the HTTP server, closed in order: on a stop, and when it cannot listen.
  const closeBehindServer = async () => {
    await jobs.stop();
    await media?.close();
    await ctx.audit.close();
    await storage.close();
    await database.close();
  };
  const address = await app.listen({ port: config.port, host: config.host }).catch(async (error: unknown) => {
    await app.close();
    await closeBehindServer();
    const problem = listenProblem(error, config);
    throw problem === null ? error : new Error(problem, { cause: error });
  });
  // PORT=0 listens on a port chosen now, which the default BASE_URL cannot name: every link would say port 0.
  if (new URL(config.baseUrl).port === '0') advise('BASE_URL names port 0: the links Hoard returns point nowhere; set BASE_URL to the address clients reach', { address });
  // Prunes now, then daily; a later start (of any process) moves the next prune to that start.
  await scheduleAuditPrune(ctx.db, config.auditRetentionDays);
  await scheduleRateLimitPrune(ctx.db);
  await scheduleSessionSweep(ctx.db);
  // SQLite's search index is merged when it has grown in many segments: checked daily.
  await scheduleSearchMerge(ctx.db, ctx.dialect);
  // Leftovers of writes killed with an earlier process go now, then every quarter of an hour.
  await scheduleTmpSweep(ctx.db, config.dataDir);
  // Files older than the media settings being on get their thumbnails and text, paced.
  await scheduleMediaBackfillIfNeeded(ctx);
  jobs.start();

  return {
    app,
    ctx,
    jobs,
    url: address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1'),
    async close() {
      // app.close() waits for every open connection, but closes idle keep-alive connections only
      // once, when it starts: one whose response was still going out would then hold shutdown for
      // its whole keep-alive time (72 s). Close connections as they become idle instead. Node's
      // idle connections leave out one that has sent nothing yet (a browser's preconnection, a
      // client pool's spare): it held a stop for the whole idle time of headers (30 s). No
      // response is owed on a connection that has asked nothing.
      const sweep = setInterval(() => {
        app.server.closeIdleConnections();
        for (const socket of connections) if (socket.bytesRead === 0) socket.destroy();
      }, 100);
      try {
        await app.close();
      } finally {
        clearInterval(sweep);
      }
      await closeBehindServer();
    },
  };
}
