import type { Executor } from '../db/account-scope.ts';
import { forAccount } from '../db/account-scope.ts';
import { newId } from '../db/ids.ts';
import { dialectOf } from '../db/database.ts';
import { enqueueJob } from '../jobs/queue.ts';
import type { FileReadyEvent } from '../api/webhooks.ts';

/**
 * The webhook outbox: an event becomes one `webhookDeliveries` row per receiving webhook plus one
 * `webhook.deliver` job per row, written in the caller's transaction. The event is therefore sent
 * if and only if the change that caused it commits, and survives restarts until delivered.
 *
 * emitFileReady(trx: Executor, ownerUserId: string, file: FileReadyFile, webhookIds?): Promise<EmittedEvent>
 *
 *   Call it inside the transaction that commits an upload (single or chunked). It writes a delivery
 *   for every ENABLED webhook of the owner (none, cheaply, when there are none) and returns the
 *   event ID and the delivery IDs. After the transaction commits, call `ctx.jobs.wake()` so the
 *   deliveries start at once rather than at the next poll.
 */

export const WEBHOOK_DELIVERY_JOB = 'webhook.deliver';
/**
 * The key of a delivery's job: a resend refused while the delivery is pending reads when its next
 * attempt is due (src/webhooks/webhooks.ts, resendDelivery). Jobs queued before the key existed have none.
 */
export const deliveryJobKey = (deliveryId: string) => `webhook-delivery:${deliveryId}`;
/** The webhook payload version: 1, independent of the API description version (spec, Versioning; Events). */
export const WEBHOOK_PAYLOAD_VERSION = 1 as const;
export const FILE_READY = 'file.ready' as const;

/** The `data` of a file.ready event (contract §5). `size` is in bytes. */
export interface FileReadyFile {
  id: string;
  name: string;
  mimeType: string;
  size: number;
  /** Upper case, as in the file listing. */
  visibility: FileReadyEvent['data']['visibility'];
  hasPassword: boolean;
  folderId: string | null;
  url: string;
  rawUrl: string;
}

export interface DeliveryJobPayload {
  deliveryId: string;
  userId: string;
}

export interface EmittedEvent {
  /** Null when no webhook receives the event. */
  eventId: string | null;
  deliveryIds: string[];
}

export const newEventId = () => `evt_${newId()}`;

/** The JSON body of a file.ready event; exactly the contract's fields, whatever else `file` holds. */
export function fileReadyBody(eventId: string, occurredAt: number, file: FileReadyFile, test = false): string {
  // Typed as the event's one definition (src/api/webhooks.ts), which the OpenAPI document shows.
  const data: FileReadyEvent['data'] = {
    id: file.id,
    name: file.name,
    mimeType: file.mimeType,
    size: file.size,
    visibility: file.visibility,
    hasPassword: file.hasPassword,
    folderId: file.folderId,
    url: file.url,
    rawUrl: file.rawUrl,
  };
  const event: FileReadyEvent = {
    version: WEBHOOK_PAYLOAD_VERSION,
    id: eventId,
    type: FILE_READY,
    occurredAt: new Date(occurredAt).toISOString(),
    ...(test ? { test: true as const } : {}),
    data,
  };
  return JSON.stringify(event);
}

/** Writes pending deliveries of one event body to the given webhooks (of one account) and their jobs. */
export async function queueDeliveries(
  executor: Executor,
  userId: string,
  event: { eventId: string; eventType: string; body: string; test: boolean; createdAt: number },
  webhookIds: readonly string[],
): Promise<string[]> {
  if (webhookIds.length === 0) return [];
  const rows = webhookIds.map((webhookId) => ({
    id: newId(),
    webhookId,
    eventId: event.eventId,
    eventType: event.eventType,
    test: event.test ? 1 : 0,
    body: event.body,
    status: 'pending' as const,
    attempts: 0,
    lastStatus: null,
    lastError: null,
    createdAt: event.createdAt,
    deliveredAt: null,
  }));
  await forAccount(executor, userId).insertInto('webhookDeliveries', rows).execute();
  for (const row of rows) {
    const payload: DeliveryJobPayload = { deliveryId: row.id, userId };
    await enqueueJob(executor, { type: WEBHOOK_DELIVERY_JOB, payload, runAt: event.createdAt, dedupeKey: deliveryJobKey(row.id) });
  }
  return rows.map((r) => r.id);
}

/** Queues a file.ready event (the spec's file-ready event; contract §5) for every enabled webhook of the owner, in the caller's transaction. */
export async function emitFileReady(trx: Executor, ownerUserId: string, file: FileReadyFile, webhookIds?: readonly string[]): Promise<EmittedEvent> {
  // Read once by a commit of several files (src/uploads/commit-file.ts), in the same transaction.
  const webhooks = webhookIds ?? (await enabledWebhookIds(trx, ownerUserId));
  if (webhooks.length === 0) return { eventId: null, deliveryIds: [] };
  const eventId = newEventId();
  const now = Date.now();
  const body = fileReadyBody(eventId, now, file);
  const deliveryIds = await queueDeliveries(trx, ownerUserId, { eventId, eventType: FILE_READY, body, test: false, createdAt: now }, webhooks);
  return { eventId, deliveryIds };
}

/** The account's enabled webhooks, in a stable order: those a file.ready event goes to. */
export async function enabledWebhookIds(trx: Executor, ownerUserId: string): Promise<string[]> {
  const query = forAccount(trx, ownerUserId).selectFrom('webhooks').select('id').where('enabled', '=', 1).orderBy('id');
  // On PostgreSQL the webhooks read are held (FOR KEY SHARE) until the caller's transaction ends: one
  // deleted in between broke the deliveries' foreign key and failed the whole commit (an upload
  // answered 409, a chunked upload's session lost with it). A deletion now waits for the commit and
  // takes its deliveries with it. SQLite runs one writing transaction at a time.
  const rows = await (dialectOf(trx) === 'postgres' ? query.forKeyShare() : query).execute();
  return rows.map((row) => row.id);
}
