import type { Readable } from 'node:stream';
import type { Selectable } from 'kysely';
import type { AppContext } from '../context.ts';
import type { ChunkSessionsTable } from '../db/schema.ts';
import { forAccount, type Executor } from '../db/account-scope.ts';
import { newId, randomLowerAlnum } from '../db/ids.ts';
import type { Principal } from '../auth/principal.ts';
import { sql } from 'kysely';
import { accountGone, AppError, conflict, forbidden, invalid, notFound, rateLimited, tooLarge } from '../errors.ts';
import { lockAccountRow } from '../db/locks.ts';
import { liveSessions } from '../uploads/reservations.ts';
import { StorageLimitError, StoragePartError, StorageUploadGoneError } from '../storage/storage.ts';
import { sameStorageTarget } from '../storage/targets.ts';
import { waitInWords } from '../auth/throttle.ts';
import { CleanupNet } from '../jobs/storage-cleanup.ts';
import { overLimit, uploadAllowance } from '../uploads/allowance.ts';
import { assertExpiryAction, resolveOptions, type UploadPlan } from '../uploads/upload-plan.ts';
import { hashPassword } from '../auth/passwords.ts';
import type { RequestOptions, ResolvedOptions } from '../shared/upload-options.ts';
import { checkDeclaredType, normalizeMimeType, resolveMimeType } from '../uploads/content-type.ts';
import { commitFile } from '../uploads/commit-file.ts';
import { findOwnedProfile } from '../organisation/profiles.ts';
import type { FileRow } from '../files/file-access.ts';
import { chunkLimits, UPLOAD_ID_PATTERN } from '../shared/chunk-limits.ts';
import { scheduleSessionStorageAbort, scheduleSessionSweep } from './chunk-session-jobs.ts';
import { sizeInWords } from '../shared/sizes.ts';

export type ChunkSession = Selectable<ChunkSessionsTable>;

export interface ChunkInit {
  filename: string;
  mimeType: string | undefined;
  size: number;
  options: RequestOptions;
}

/**
 * POST /api/files/chunks: checks everything a single upload would, then opens a session. The
 * declared size is reserved against the quota from now on (src/uploads/reservations.ts); the checks
 * and the session's row commit together under the account's lock, so sessions opened at once cannot
 * together pass the quota, the open-session cap, or the instance's temporary storage limit.
 * Records the session metadata of the spec (Chunk upload session): the upload option snapshot, the
 * declared total size, the bound profile and the actual storage target (provenance).
 */
export async function startChunkedUpload(ctx: AppContext, principal: Principal, plan: UploadPlan, init: ChunkInit): Promise<{ uploadId: string; fileKey: string }> {
  const userId = principal.user.id;
  // Checked now, as POST /api/files checks a part's type, rather than after every part was sent.
  if (init.mimeType !== undefined && normalizeMimeType(init.mimeType) !== '') checkDeclaredType(init.mimeType);
  const allowance = await uploadAllowance(ctx.db, principal);
  if (init.size > allowance.maxBytes) throw overLimit(allowance);
  const options = await resolveOptions(ctx.db, principal, plan, init.options);
  const passwordHash = options.password ? await hashPassword(options.password) : null;
  const fileId = newId();
  const fileKey = `files/${userId}/${fileId}`;
  const { uploadId: storageUploadId } = await ctx.storage.createMultipart(fileKey, init.mimeType);
  const id = randomLowerAlnum(32);
  try {
    await ctx.db.transaction().execute(async (trx) => {
      await lockAccountRow(trx, ctx.dialect, userId);
      const now = Date.now();
      const open = await liveSessions(trx, now)
        .where('userId', '=', userId)
        .select((eb) => [eb.fn.countAll<number | string>().as('count'), eb.fn.min('lastActivityAt').as('oldest'), eb.fn.sum<number | string | null>('size').as('held')])
        .executeTakeFirstOrThrow();
      if (Number(open.count) >= chunkLimits.maxOpenSessions) {
        // Retry-After: when the least recently active one expires and frees its place (unless its
        // client sends it more parts first), rather than a minute that would only be refused again.
        const freed = Number(open.oldest) + chunkLimits.inactivityMs - now;
        throw rateLimited(
          `You have ${chunkLimits.maxOpenSessions} unfinished chunked uploads, the most allowed at once; complete them, or wait for them to expire after an hour without activity`,
          Math.max(1, Math.ceil(freed / 1000)),
        );
      }
      const again = await uploadAllowance(trx, principal);
      if (init.size > again.maxBytes) throw overLimit(again);
      const limit = ctx.config.chunkedUploadTempLimit;
      const accountHeld = Number(open.held ?? 0);
      const share = Math.floor(limit * chunkLimits.accountShareOfTempLimit);
      if (limit > 0 && accountHeld > 0 && accountHeld + init.size > share) {
        // Its own sessions must end first: when the least recently active one would expire.
        const freed = Number(open.oldest) + chunkLimits.inactivityMs - now;
        throw rateLimited(
          `Your unfinished chunked uploads hold ${sizeInWords(accountHeld)}; one account may hold at most ${sizeInWords(share)} of unfinished uploads at once (a single upload of any allowed size always may). Complete some first, or wait: an unfinished upload expires after an hour without activity`,
          Math.max(1, Math.ceil(freed / 1000)),
        );
      }
      if (limit > 0) {
        // One instance-wide sum: PostgreSQL serialises it with a transaction-scoped advisory lock
        // (SQLite runs one write transaction at a time anyway).
        if (ctx.dialect === 'postgres') await sql`select pg_advisory_xact_lock(${TEMP_LIMIT_LOCK})`.execute(trx);
        const held = await liveSessions(trx, now).select((eb) => eb.fn.sum<number | string | null>('size').as('total')).executeTakeFirst();
        if (Number(held?.total ?? 0) + init.size > limit) {
          throw rateLimited(`The server has no room left for chunked uploads in progress; try again in ${waitInWords(chunkLimits.busyRetryAfterSeconds)}`, chunkLimits.busyRetryAfterSeconds);
        }
      }
      await forAccount(trx, userId)
        .insertInto('chunkSessions', {
          id,
          fileId,
          fileKey,
          filename: init.filename,
          mimeType: init.mimeType ?? null,
          size: init.size,
          options: JSON.stringify(snapshotOf(options, passwordHash)),
          folderId: plan.folderId,
          profileId: plan.profileId,
          boundProfileId: principal.token?.profileId ?? null,
          storageTarget: ctx.storage.target,
          storageUploadId,
          state: 'open',
          completingUntil: null,
          completedFileId: null,
          lastActivityAt: now,
          createdAt: now,
        })
        .execute();
      await scheduleSessionSweep(trx, id, now + chunkLimits.inactivityMs);
    });
  } catch (error) {
    await ctx.storage.abortMultipart(fileKey, storageUploadId).catch(() => undefined);
    throw error;
  }
  return { uploadId: id, fileKey };
}

/** The option snapshot a session keeps: its password hashed, never in clear (docs/decisions.md). */
function snapshotOf(options: ResolvedOptions, passwordHash: string | null): ResolvedOptions {
  return { ...options, password: null, passwordHash };
}

/** The advisory lock key of the instance's temporary-bytes sum (any constant unique in this application). */
const TEMP_LIMIT_LOCK = 0x686f6172;

/** Part number: 1 to 10000 (spec, Limits). */
export function parsePartNumber(raw: string | number): number {
  const value = typeof raw === 'number' ? raw : /^\d{1,6}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(value) || value < 1 || value > chunkLimits.maxPartNumber) throw invalid(`partNumber: must be a whole number from 1 to ${chunkLimits.maxPartNumber}`);
  return value;
}

export function checkUploadId(uploadId: string): string {
  if (!UPLOAD_ID_PATTERN.test(uploadId)) throw invalid('uploadId: must match ^[a-z0-9]{1,100}$');
  return uploadId;
}

/**
 * The session a chunk request may act on: the caller's own, not expired, created with the caller's
 * bound profile (when the caller is a bound token), and still on this instance's storage target.
 */
async function usableSession(ctx: AppContext, principal: Principal, uploadId: string, now: number, options: { uploading: boolean } = { uploading: true }): Promise<ChunkSession> {
  const session = await forAccount(ctx.db, principal.user.id).selectFrom('chunkSessions').selectAll().where('id', '=', checkUploadId(uploadId)).executeTakeFirst();
  if (!session) throw notFound('Upload session not found');
  // One hour with no activity: the session is gone, later use gives 404 (spec, Chunk upload session).
  if (session.state !== 'completed' && session.lastActivityAt + chunkLimits.inactivityMs <= now && (session.completingUntil ?? 0) <= now) {
    throw notFound('Upload session not found (it expired after an hour without activity)');
  }
  // A bound token reaches the sessions created with its profile, whoever created them (spec,
  // Authentication: "Chunk requests may only reach sessions created with the bound profile").
  const bound = principal.token?.profileId ?? null;
  if (bound !== null && session.profileId !== bound) throw forbidden('This token is bound to an upload profile and cannot use a session started with another profile or none');
  // A deleted bound profile fails the token's uploads until it is replaced (spec, Authentication 8),
  // those begun before too: the session's snapshot keeps the options, not the token's standing.
  // Cancelling is no upload, and gives the room back.
  if (bound !== null && options.uploading && !(await findOwnedProfile(ctx.db, principal.user.id, bound))) {
    throw forbidden('The upload profile this token is bound to no longer exists; bind a new token');
  }
  // Provenance (spec, Chunk upload session: "storage target changed or metadata lacks provenance" → 409,
  // including sessions started before it was recorded).
  if (session.storageTarget === null) throw conflict('This upload session has no recorded storage target; start a new upload');
  if (!sameStorageTarget(session.storageTarget, ctx.storage.target)) throw conflict('The storage target changed since this upload started; start a new upload');
  return session;
}

/** Refreshes the inactivity timer (spec, Chunk upload session); completion does not refresh it. */
async function touch(ctx: AppContext, session: ChunkSession, now: number): Promise<void> {
  await ctx.db.updateTable('chunkSessions').set({ lastActivityAt: now }).where('id', '=', session.id).execute();
  await scheduleSessionSweep(ctx.db, session.id, now + chunkLimits.inactivityMs);
}

/** The ID prefix of a presigned URL's reserved room (record IDs have no hyphen). */
const PRESIGNED_ROOM = 'url-';

/**
 * The room held by requests still sending a part through this server: live reservations, not a
 * presigned URL's (no request of ours is in flight for those).
 */
function partsArriving(executor: Executor, sessionId: string, now: number) {
  return executor
    .selectFrom('chunkPartReservations')
    .select(['id', 'liveUntil'])
    .where('sessionId', '=', sessionId)
    .where('liveUntil', '>', now)
    .where('id', 'not like', `${PRESIGNED_ROOM}%`);
}

/**
 * "Upload already completed" → 409 on part requests (spec, Errors: 409). A completion under way
 * passes: within its lease it ends with a file or leaves the session open, so that 409 carries
 * `Retry-After` as the completion's own passing 409s do (docs/decisions.md, "One copy of a part at
 * a time").
 */
function assertOpen(session: Pick<ChunkSession, 'state'>): void {
  if (session.state === 'completed') throw conflict('This upload is already completed; start a new upload');
  if (session.state === 'completing') throw conflict('This upload is being completed; repeat the completion to get its file', completionRepeatSeconds);
}

/**
 * A part upload URL: presigned for S3, the `local://` marker for local storage. Refreshes activity.
 * Part upload URL validity: one hour (spec, Limits).
 *
 * A presigned PUT never passes through this server, and S3 can bind only an exact length to it, not
 * a maximum. So a client that names the part's `size` gets a URL with that Content-Length signed,
 * and that room reserved (at most 64 MiB, within the declared size less the other parts, as for a
 * PUT through the server) until the URL expires; asking again for the same part replaces it. Without
 * a size the URL is not bound, and completion checks the parts' sizes as the provider reports them.
 */
export async function partUrl(ctx: AppContext, principal: Principal, uploadId: string, partNumber: number, size?: number): Promise<string> {
  const now = Date.now();
  const session = await usableSession(ctx, principal, uploadId, now);
  assertOpen(session);
  const validitySeconds = chunkLimits.partUrlValiditySeconds;
  let contentLength: number | undefined;
  if (size !== undefined && ctx.storage.kind === 's3') {
    if (size > chunkLimits.maxPartBytes) throw tooLarge('A part may be at most 64 MiB');
    await reservePartRoom(ctx, session, partNumber, size, { id: `${PRESIGNED_ROOM}${session.id}-${partNumber}`, liveUntil: now + validitySeconds * 1000 });
    contentLength = size;
  }
  const url = await ctx.storage.presignPart(session.fileKey, session.storageUploadId, partNumber, validitySeconds, contentLength);
  await touch(ctx, session, now);
  return url ?? `local://chunks/${session.id}/part/${partNumber}`;
}

/**
 * PUT part: streamed to storage, at most 64 MiB and never past the declared size (spec, Limits: part size). The part's room is
 * reserved before the first byte (see reservePartRoom), so parts sent in parallel cannot together pass
 * the declared size; the reservation becomes the part's recorded size once it is stored.
 */
export async function putPart(ctx: AppContext, principal: Principal, uploadId: string, partNumber: number, body: Readable, contentLength: number | undefined): Promise<string> {
  const now = Date.now();
  const session = await usableSession(ctx, principal, uploadId, now);
  assertOpen(session);
  if (contentLength !== undefined && contentLength > chunkLimits.maxPartBytes) {
    body.resume();
    throw tooLarge('A part may be at most 64 MiB');
  }
  let reservation: { id: string; maxBytes: number };
  try {
    reservation = await reservePartRoom(ctx, session, partNumber, contentLength);
  } catch (error) {
    body.resume();
    throw error;
  }
  const { maxBytes } = reservation;
  // The room stays reserved while this process streams the part; should it die, the room lapses.
  const renewal = setInterval(() => {
    ctx.db
      .updateTable('chunkPartReservations')
      .set({ liveUntil: Date.now() + chunkLimits.partReservationMs })
      .where('id', '=', reservation.id)
      .execute()
      .catch((error: unknown) => ctx.log.warn({ err: error, sessionId: session.id }, 'could not renew a part reservation'));
  }, chunkLimits.partReservationRenewMs);
  try {
    let stored: { etag: string; size: number };
    try {
      stored = await ctx.storage.uploadPart(session.fileKey, session.storageUploadId, partNumber, body, {
        maxBytes,
        ...(contentLength !== undefined ? { contentLength } : {}),
      });
    } catch (error) {
      if (error instanceof StorageLimitError) throw tooLarge(maxBytes < chunkLimits.maxPartBytes ? 'The parts would be larger than the declared size' : 'A part may be at most 64 MiB');
      // The session moved on under the part (its room lapsed while it streamed): the storage's
      // complaint is about parts that were assembled or removed, and the answer is the session's state.
      const latest = await ctx.db.selectFrom('chunkSessions').select('state').where('id', '=', session.id).executeTakeFirst();
      if (!latest) return await sessionGoneUnderPart(ctx, session);
      assertOpen(latest);
      if (error instanceof StorageUploadGoneError) throw conflict('The parts of this upload are no longer stored; start a new upload');
      throw error;
    }
    if (ctx.storage.kind === 's3' && stored.size < chunkLimits.s3MinPartBytes) {
      const later = await ctx.db.selectFrom('chunkParts').select('partNumber').where('sessionId', '=', session.id).where('partNumber', '>', partNumber).executeTakeFirst();
      if (later) throw invalid(`Part ${partNumber} is smaller than 5 MiB but is not the last part; S3 needs every part except the last to be at least 5 MiB`);
    }
    const recorded = await ctx.db.transaction().execute(async (trx) => {
      // The session's activity is written first: on SQLite that takes the write lock before the
      // session is known to be there, and it is gone when the upload was cancelled while this part
      // arrived (cancelChunkedUpload), whose part is then no part of anything.
      const touched = await trx.updateTable('chunkSessions').set({ lastActivityAt: now }).where('id', '=', session.id).executeTakeFirst();
      if (Number(touched.numUpdatedRows) === 0) return false;
      await trx
        .insertInto('chunkParts')
        .values({ sessionId: session.id, partNumber, etag: stored.etag, size: stored.size })
        .onConflict((oc) => oc.columns(['sessionId', 'partNumber']).doUpdateSet({ etag: stored.etag, size: stored.size }))
        .execute();
      await trx.deleteFrom('chunkPartReservations').where('id', '=', reservation.id).execute();
      return true;
    });
    if (!recorded) return await sessionGoneUnderPart(ctx, session);
    await scheduleSessionSweep(ctx.db, session.id, now + chunkLimits.inactivityMs);
    return stored.etag;
  } finally {
    clearInterval(renewal);
    // Gone already when the part was recorded; otherwise its room is free again.
    await ctx.db.deleteFrom('chunkPartReservations').where('id', '=', reservation.id).execute().catch(() => undefined);
  }
}

/**
 * The session went (cancelled, or its account deleted) while a part streamed into it. The removal
 * of its parts may have run before this part was stored, or (S3 says so of parts in flight) not
 * taken it: the parts are removed once more, and the part is answered as the session is.
 */
async function sessionGoneUnderPart(ctx: AppContext, session: ChunkSession): Promise<never> {
  await scheduleSessionStorageAbort(ctx.db, [session], Date.now());
  ctx.jobs.wake();
  throw notFound('Upload session not found');
}

/**
 * DELETE /api/files/chunks/{uploadId} (docs/decisions.md, "Cancelling a chunked upload"): an open
 * session goes at once, and with it the reservation of its declared size against the account's
 * quota, which otherwise held for an hour after its last part; its stored parts are removed by a
 * job committed with the deletion. A session being completed or completed is a 409, as for a part.
 */
export async function cancelChunkedUpload(ctx: AppContext, principal: Principal, uploadId: string): Promise<void> {
  const session = await usableSession(ctx, principal, uploadId, Date.now(), { uploading: false });
  const cancelled = await ctx.db.transaction().execute(async (trx) => {
    const deleted = await trx.deleteFrom('chunkSessions').where('id', '=', session.id).where('state', '=', 'open').executeTakeFirst();
    if (Number(deleted.numDeletedRows) === 0) return false;
    await scheduleSessionStorageAbort(trx, [session], Date.now());
    return true;
  });
  if (!cancelled) {
    const latest = await ctx.db.selectFrom('chunkSessions').select('state').where('id', '=', session.id).executeTakeFirst();
    if (!latest) throw notFound('Upload session not found');
    assertOpen(latest);
  }
  ctx.jobs.wake();
}

/**
 * Reserves room for part `partNumber`: the declared size less what the other parts take, at most
 * 64 MiB; the Content-Length when there is one (which must fit), else all of that room. Another
 * part takes the larger of its stored size and the room held by a request still sending it: only
 * one of them ends up stored, so a part sent again is not counted twice. This part's own stored
 * size is not counted against its new copy.
 * One reservation at a time per session: PostgreSQL locks the session's row; on SQLite the
 * reservation's insert takes the database's write lock before anything is read. Under that lock the
 * session must still be open: a part never lands under a completion assembling the parts.
 */
async function reservePartRoom(
  ctx: AppContext,
  session: ChunkSession,
  partNumber: number,
  contentLength: number | undefined,
  /** A presigned URL's reservation: one per part (a new URL replaces it), held until the URL expires. */
  presigned?: { id: string; liveUntil: number },
): Promise<{ id: string; maxBytes: number }> {
  const id = presigned?.id ?? newId();
  return ctx.db.transaction().execute(async (trx) => {
    if (ctx.dialect === 'postgres') await trx.selectFrom('chunkSessions').select('id').where('id', '=', session.id).forUpdate().execute();
    const now = Date.now();
    if (presigned) await trx.deleteFrom('chunkPartReservations').where('id', '=', id).execute();
    await trx.insertInto('chunkPartReservations').values({ id, sessionId: session.id, partNumber, bytes: 0, liveUntil: presigned?.liveUntil ?? now + chunkLimits.partReservationMs }).execute();
    const current = await trx.selectFrom('chunkSessions').select('state').where('id', '=', session.id).executeTakeFirst();
    if (!current) throw notFound('Upload session not found');
    assertOpen(current);
    // One request at a time per part: two copies of a part written at once could each remove the
    // other's file as an older version, losing the part after both were answered 200. A copy sent
    // while an earlier one is still arriving (a client retrying after its own time-out) waits for
    // it; a request that died holds the part until its room lapses, within 20 seconds. The 409 says
    // when to look again (Retry-After): unlike the specification's other 409s, the session stays
    // usable, and a client that knows the header sends the part again then.
    if (!presigned) {
      const arriving = await partsArriving(trx, session.id, now).where('partNumber', '=', partNumber).where('id', '!=', id).orderBy('liveUntil', 'desc').executeTakeFirst();
      if (arriving) {
        const retryAfter = Math.max(1, Math.ceil((Number(arriving.liveUntil) - now) / 1000));
        // The wait is the reservation's own: one left by an earlier version (whose reservations lived
        // 5 minutes) lasts longer than this version's 20 seconds.
        throw conflict(`Part ${partNumber} is still arriving in an earlier request; send it again once that request is answered (a request cut off frees the part within ${retryAfter} ${retryAfter === 1 ? 'second' : 'seconds'})`, retryAfter);
      }
    }
    const claims = trx
      .selectFrom('chunkParts')
      .select(['partNumber', 'size as bytes'])
      .where('sessionId', '=', session.id)
      .where('partNumber', '!=', partNumber)
      .unionAll(
        trx
          .selectFrom('chunkPartReservations')
          .select(['partNumber', 'bytes'])
          .where('sessionId', '=', session.id)
          .where('partNumber', '!=', partNumber)
          .where('liveUntil', '>', now),
      );
    const perPart = trx
      .selectFrom(claims.as('claims'))
      .select((eb) => eb.fn.max('claims.bytes').as('bytes'))
      .groupBy('claims.partNumber');
    const taken = await trx
      .selectFrom(perPart.as('perPart'))
      .select((eb) => eb.fn.sum<number | string | null>('perPart.bytes').as('total'))
      .executeTakeFirst();
    const room = session.size - Number(taken?.total ?? 0);
    const maxBytes = Math.max(0, Math.min(chunkLimits.maxPartBytes, room));
    if (contentLength !== undefined && contentLength > maxBytes) throw tooLarge('The parts would be larger than the declared size');
    const bytes = contentLength ?? maxBytes;
    await trx.updateTable('chunkPartReservations').set({ bytes }).where('id', '=', id).execute();
    return { id, maxBytes: bytes };
  });
}

export interface CompletionRequest {
  parts: Array<{ PartNumber: number; ETag: string }>;
  visibility?: 'PUBLIC' | 'PRIVATE' | undefined;
  password?: string | undefined;
}

const bareEtag = (etag: string) => etag.trim().replace(/^W\//, '').replace(/^"|"$/g, '').toLowerCase();

/** The parts to assemble: unique, sorted by number, each known with that ETag. */
function validateParts(request: CompletionRequest, known: Map<number, { etag: string; size: number }>, s3: boolean) {
  if (request.parts.length === 0) throw invalid('parts: list at least one part');
  const chosen = new Map<number, string>();
  for (const part of request.parts) {
    const number = parsePartNumber(part.PartNumber);
    const etag = bareEtag(part.ETag);
    const previous = chosen.get(number);
    if (previous !== undefined && previous !== etag) throw invalid(`parts: part ${number} is listed twice with different ETags`);
    chosen.set(number, etag);
  }
  const sorted = [...chosen.entries()].sort(([a], [b]) => a - b);
  return sorted.map(([number, etag], index) => {
    const stored = known.get(number);
    if (!stored || bareEtag(stored.etag) !== etag) throw invalid(`parts: part ${number} with ETag ${etag} was not uploaded`);
    if (s3 && index < sorted.length - 1 && stored.size < chunkLimits.s3MinPartBytes) {
      throw invalid(`parts: part ${number} is smaller than 5 MiB but is not the last part; S3 needs every part except the last to be at least 5 MiB`);
    }
    return { partNumber: number, etag: stored.etag, size: stored.size };
  });
}

/**
 * Completion. Exactly one request assembles a session (others wait for it and get the same file);
 * a repeated completion returns the same committed file while session metadata exists (spec, Chunk
 * upload session: repeated completion).
 * the file is committed together with the session's completed state, so file.ready fires once.
 *
 * Crash safety: the assembled object's clean-up is scheduled before assembling (and pushed back while
 * the completion lives), and the completion lease is short and renewed while it works. A request that
 * takes over the lease of a completion whose process died finds either the assembled object (and
 * commits it), the parts (and assembles them), or neither (409: start a new upload), never a 500.
 */
export async function completeChunkedUpload(ctx: AppContext, principal: Principal, uploadId: string, request: CompletionRequest): Promise<FileRow> {
  let session = await usableSession(ctx, principal, uploadId, Date.now());
  const waitUntil = Date.now() + chunkLimits.completionWaitMs;
  let takenOver: boolean;
  // This request's claim of the lease: what it renews, commits and undoes holds only while the
  // session still names it (migration 0050-completion-claims).
  const claim = newId();
  for (;;) {
    if (session.state === 'completed') return completedFile(ctx, session);
    const claimed = await ctx.db
      .updateTable('chunkSessions')
      .set({ state: 'completing', completingUntil: Date.now() + chunkLimits.completionLeaseMs, completionClaim: claim })
      .where('id', '=', session.id)
      .where((eb) => eb.or([eb('state', '=', 'open'), eb.and([eb('state', '=', 'completing'), eb('completingUntil', '<', Date.now())])]))
      .executeTakeFirst();
    // What the request waits for, should the wait run out: a 409 after which the session goes on,
    // so it says when to repeat the completion (docs/decisions.md, "Parts and completion exclude each other").
    let waitingFor = () => conflict('Another request is still completing this upload; repeat the completion later to get its file', completionRepeatSeconds);
    if (Number(claimed.numUpdatedRows) === 1) {
      // A part still arriving through this server is not assembled under it: the claim stands only
      // when no request holds room for a part. (Asked after the claim, in a statement of its own: a
      // part's reservation either committed before the claim, and is seen here, or is made after it
      // and finds the session completing.) A presigned URL's room is no request in flight.
      const arriving = await partsArriving(ctx.db, session.id, Date.now()).executeTakeFirst();
      if (!arriving) {
        // A lease that ran out: the completion holding it died, possibly after assembling.
        takenOver = session.state === 'completing';
        break;
      }
      await ctx.db
        .updateTable('chunkSessions')
        .set({ state: session.state, completingUntil: session.completingUntil, completionClaim: session.completionClaim })
        .where('id', '=', session.id)
        .where('completionClaim', '=', claim)
        .execute();
      const lapses = Math.max(1, Math.ceil((Number(arriving.liveUntil) - Date.now()) / 1000));
      waitingFor = () => conflict('A part of this upload is still arriving; complete the upload once every part has been answered', lapses);
    }
    // Another completion holds the lease and renews it while it works, or a part is still arriving: wait for it.
    if (Date.now() > waitUntil) throw waitingFor();
    await new Promise((resolve) => setTimeout(resolve, 250));
    session = await usableSession(ctx, principal, uploadId, Date.now());
  }

  const net = new CleanupNet(ctx, session.fileKey);
  const lease = renewLease(ctx, session.id, claim, net);
  let assembled = false;
  try {
    // Should this process die from here on, the assembled object is removed minutes later.
    await net.arm();
    // Chunked uploads keep the option snapshot from their start (spec, Authentication 8).
    const snapshot = JSON.parse(session.options) as ResolvedOptions;
    const plan: UploadPlan = { profileId: session.profileId, folderId: session.folderId, base: { ...snapshot, expiration: 'DISABLED' }, bound: session.boundProfileId !== null || principal.token?.profileId != null };
    const overrides: RequestOptions = {};
    if (request.visibility !== undefined) overrides.visibility = request.visibility;
    if (request.password) overrides.password = request.password;
    const resolved = await resolveOptions(ctx.db, principal, plan, overrides);
    // The snapshot's expiry was set aside from the plan above; its action needs its permission still.
    if (snapshot.expiresAt !== null || snapshot.expiresAfter != null) assertExpiryAction(principal, snapshot.expiryAction);
    // An instant that passed while the parts arrived: refused as POST /api/files refuses it once its
    // bytes are in, rather than a file made only to be expired at once.
    if (snapshot.expiresAfter == null && snapshot.expiresAt !== null && snapshot.expiresAt <= Date.now()) {
      throw invalid('expiresAt: the expiry given at the start passed before the upload was completed; start a new upload with a later expiresAt');
    }
    // A password given now replaces the snapshot's, which is kept hashed (snapshots of sessions
    // started before that hold it in clear, and are hashed at the commit as any upload's).
    const options: ResolvedOptions = resolved.password ? { ...snapshot, visibility: resolved.visibility, password: resolved.password, passwordHash: null } : { ...snapshot, visibility: resolved.visibility };

    // A completion that died after assembling left the object, and the parts are gone into it.
    const leftBehind = takenOver ? await ctx.storage.stat(session.fileKey) : null;
    if (leftBehind) {
      assembled = true;
      if (leftBehind.size !== session.size) throw conflict('An interrupted completion left this upload unusable; start a new upload');
    } else {
      const parts = validateParts(request, await knownParts(ctx, session, request), ctx.storage.kind === 's3');
      const total = parts.reduce((sum, p) => sum + p.size, 0);
      // The assembled size must equal the declared size (spec, POST /api/files/chunks/{uploadId}/complete).
      if (total !== session.size) throw invalid(`The parts hold ${total} bytes but the upload declared ${session.size}`);
      let stored: { size: number };
      try {
        stored = await ctx.storage.completeMultipart(session.fileKey, session.storageUploadId, parts);
      } catch (error) {
        if (error instanceof StoragePartError) throw invalid(`parts: ${error.message}`);
        // Another request may have assembled them meanwhile, having taken a lease this one lost.
        if (await claimLost(ctx, session.id, claim)) throw lostClaim();
        // Or one whose lease this request took over did, after this request looked: its object is
        // this session's, whole, and committed here (the parts went into it).
        const other = await ctx.storage.stat(session.fileKey).catch(() => null);
        if (other?.size !== session.size) throw error;
        stored = other;
      }
      assembled = true;
      // The provider's own word on what it assembled (a part may have been replaced since it was listed).
      if (stored.size !== session.size) throw invalid(`The parts hold ${stored.size} bytes but the upload declared ${session.size}`);
    }
    const head = await readHead(ctx, session.fileKey, session.size);
    const mimeType = await resolveMimeType(session.mimeType ?? undefined, head, session.filename);

    // No renewal may land after the commit cancels the clean-up.
    await lease.stop();
    const file = await commitFile(
      ctx,
      principal,
      { id: session.fileId, storageKey: session.fileKey, originalName: session.filename, mimeType, size: session.size, sha256: null, folderId: session.folderId, options },
      async (trx) => {
        // The token's validity is checked again by the commit itself (src/uploads/commit-file.ts):
        // 403 when it was revoked or expired meanwhile (spec, POST .../complete).
        const completed = await trx
          .updateTable('chunkSessions')
          .set({ state: 'completed', completedFileId: session.fileId, completingUntil: null, completionClaim: null })
          .where('id', '=', session.id)
          .where('state', '=', 'completing')
          .where('completionClaim', '=', claim)
          .executeTakeFirst();
        // Taken over since: the file is the other request's to commit, and this one's is undone.
        if (Number(completed.numUpdatedRows) !== 1) throw lostClaim();
        await trx.deleteFrom('chunkParts').where('sessionId', '=', session.id).execute();
        await trx.deleteFrom('chunkPartReservations').where('sessionId', '=', session.id).execute();
        await scheduleSessionSweep(trx, session.id, Date.now() + chunkLimits.completedRetentionMs);
      },
      session.id,
    );
    // Parts a dead completion had assembled from may still be beside the object (local storage).
    if (leftBehind) await ctx.storage.abortMultipart(session.fileKey, session.storageUploadId).catch(() => undefined);
    return file;
  } catch (error) {
    await lease.stop();
    // An administrator deleted the account meanwhile: its sessions went with it, and their parts'
    // removal may have pulled the bytes from under the assembly. The generic 401, as for any request
    // of an account that is gone, not the 500 of parts the storage no longer finds.
    const accountLeft = !(error instanceof AppError) && !(await ctx.db
        .selectFrom('users')
        .select('id')
        .where('id', '=', principal.user.id)
        .executeTakeFirst()
        // A database that cannot answer says nothing of the account: the first error stands.
        .catch(() => ({ id: principal.user.id })));
    // Only while the session still names this request's claim: one that took the lease over may be
    // assembling or have committed the file whose object this is.
    let stillMine: boolean;
    if (assembled || error instanceof StorageUploadGoneError) {
      // The parts are gone into an object that will never be committed: the session cannot be retried.
      const ended = await ctx.db.deleteFrom('chunkSessions').where('id', '=', session.id).where('state', '=', 'completing').where('completionClaim', '=', claim).executeTakeFirst();
      stillMine = Number(ended.numDeletedRows) === 1;
      if (stillMine) await ctx.storage.delete(session.fileKey).catch(() => undefined);
    } else {
      const reopened = await ctx.db
        .updateTable('chunkSessions')
        .set({ state: 'open', completingUntil: null, completionClaim: null })
        .where('id', '=', session.id)
        .where('state', '=', 'completing')
        .where('completionClaim', '=', claim)
        .executeTakeFirst();
      stillMine = Number(reopened.numUpdatedRows) === 1;
    }
    if (accountLeft) throw accountGone();
    // What failed was this request's loss of the lease (the other committed the file first, under
    // the same ID, or assembled the parts): the other request's outcome is the upload's, as a
    // repeated completion would get it.
    if (!stillMine) return outcomeOfTakeover(ctx, principal, uploadId, waitUntil);
    if (error instanceof StorageUploadGoneError) throw conflict('The parts of this upload are no longer stored (an earlier completion was interrupted); start a new upload');
    // A refusal the client could otherwise take for one to mend and complete again (a type, a
    // quota, a size) says that the session went with it (docs/decisions.md, "A failed completion").
    if (assembled && error instanceof AppError && (error.kind === 'invalid' || error.kind === 'too_large')) {
      throw new AppError(error.kind, `${/[.!?…]$/.test(error.message) ? error.message : `${error.message}.`} This upload has ended; start a new one.`);
    }
    throw error;
  }
}

/** Whether the session no longer names `claim`: another request took the completion over, or ended it. */
async function claimLost(ctx: AppContext, sessionId: string, claim: string): Promise<boolean> {
  const row = await ctx.db.selectFrom('chunkSessions').select('completionClaim').where('id', '=', sessionId).executeTakeFirst();
  return row?.completionClaim !== claim;
}

/**
 * Retry-After of the completion's 409s after which the session goes on: another completion renews
 * its lease this often, so its outcome is known within about this long.
 */
const completionRepeatSeconds = chunkLimits.completionRenewMs / 1000;
const lostClaim = () => conflict('Another request took over the completion of this upload; repeat the completion to get its file', completionRepeatSeconds);

/** Waits for the completion that took this one's lease over: its file, or 409 when it ended without one. */
async function outcomeOfTakeover(ctx: AppContext, principal: Principal, uploadId: string, waitUntil: number): Promise<FileRow> {
  for (;;) {
    const session = await usableSession(ctx, principal, uploadId, Date.now());
    if (session.state === 'completed') return completedFile(ctx, session);
    if (session.state !== 'completing' || Date.now() > waitUntil) throw lostClaim();
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Keeps the completion lease (and the assembled object's clean-up) alive while this process works on
 * the completion; a process that dies stops renewing, and another request takes over within a lease.
 */
function renewLease(ctx: AppContext, sessionId: string, claim: string, net: CleanupNet): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = running
      .then(async () => {
        const renewed = await ctx.db
          .updateTable('chunkSessions')
          .set({ completingUntil: Date.now() + chunkLimits.completionLeaseMs })
          .where('id', '=', sessionId)
          .where('state', '=', 'completing')
          .where('completionClaim', '=', claim)
          .executeTakeFirst();
        // A lease taken over is not taken back; the object's net is the other request's now.
        if (Number(renewed.numUpdatedRows) === 1) net.alive();
      })
      .catch((error: unknown) => ctx.log.warn({ err: error, sessionId }, 'could not renew a completion lease'));
  }, chunkLimits.completionRenewMs);
  return {
    async stop() {
      clearInterval(timer);
      await running;
      await net.settled();
    },
  };
}

/**
 * The parts the server knows of: those uploaded through it (chunkParts), and, when the request names
 * a part it did not see, the provider's own listing. Parts PUT straight to a presigned S3 URL never
 * pass through the server; their ETags and sizes are known only to the provider.
 */
async function knownParts(ctx: AppContext, session: ChunkSession, request: CompletionRequest): Promise<Map<number, { etag: string; size: number }>> {
  const known = new Map<number, { etag: string; size: number }>(
    (await ctx.db.selectFrom('chunkParts').select(['partNumber', 'etag', 'size']).where('sessionId', '=', session.id).execute()).map((p) => [p.partNumber, p] as const),
  );
  const unseen = request.parts.some((part) => {
    const recorded = known.get(part.PartNumber);
    return !recorded || bareEtag(recorded.etag) !== bareEtag(part.ETag);
  });
  if (unseen && ctx.storage.listParts) {
    for (const part of await ctx.storage.listParts(session.fileKey, session.storageUploadId)) known.set(part.partNumber, part);
  }
  return known;
}

async function completedFile(ctx: AppContext, session: ChunkSession): Promise<FileRow> {
  const file = await forAccount(ctx.db, session.userId).selectFrom('files').selectAll().where('id', '=', session.completedFileId!).executeTakeFirst();
  if (!file) throw notFound('The file of this completed upload no longer exists');
  return file;
}

async function readHead(ctx: AppContext, key: string, size: number): Promise<Buffer> {
  if (size === 0) return Buffer.alloc(0);
  const object = await ctx.storage.get(key, { start: 0, end: Math.min(size, 4100) - 1 });
  const chunks: Buffer[] = [];
  for await (const chunk of object.stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

