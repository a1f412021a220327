import { randomBytes } from 'node:crypto';
import type { Db, Dialect } from '../db/database.ts';
import { forAccount } from '../db/account-scope.ts';
import { lockAccountRow } from '../db/locks.ts';
import { newId } from '../db/ids.ts';
import { conflict, invalid, notFound } from '../errors.ts';
import { DELIVERY_TIMEOUT_MS, SECRET_PREFIX } from './deliver.ts';
import { deliveryJobKey, FILE_READY, fileReadyBody, newEventId, queueDeliveries } from './outbox.ts';
import { jobRunAt } from '../jobs/queue.ts';
import { DELIVERIES_KEPT } from './delivery-job.ts';
import type { SecretBox } from '../auth/secret-box.ts';
import { hostRefusal } from './ssrf-guard.ts';
import { takeAttempt } from '../auth/throttle.ts';
import type { Delivery, Webhook } from '../api/webhooks.ts';
import { nameSchema } from '../shared/display-name.ts';
import { keptUrl } from '../shared/http-url.ts';

/** Webhook management: the browser-session routes of contract §3 call these. */

export const webhookLimits = {
  perAccount: 10,
  /** Test sends per account per minute. */
  testSendsPerMinute: 10,
  /** Resent deliveries per account per minute. */
  resendsPerMinute: 10,
  nameLength: 80,
  urlLength: 2048,
  deliveriesListed: DELIVERIES_KEPT,
  /** How long a replaced signing secret keeps signing beside the new one. */
  secretOverlapMs: 24 * 3_600_000,
} as const;

const iso = (ms: number) => new Date(ms).toISOString();
const webhookColumns = ['id', 'name', 'url', 'enabled', 'createdAt', 'updatedAt'] as const;
const deliveryColumns = ['id', 'eventId', 'status', 'attempts', 'lastStatus', 'lastError', 'createdAt', 'deliveredAt'] as const;

function toWebhook(row: { id: string; name: string; url: string; enabled: number; createdAt: number; updatedAt: number }): Webhook {
  return { id: row.id, name: row.name, url: row.url, enabled: row.enabled === 1, createdAt: iso(row.createdAt), updatedAt: iso(row.updatedAt) };
}

function toDelivery(row: { id: string; eventId: string; status: Delivery['status']; attempts: number; lastStatus: number | null; lastError: string | null; createdAt: number; deliveredAt: number | null }): Delivery {
  return { ...row, createdAt: iso(row.createdAt), deliveredAt: row.deliveredAt === null ? null : iso(row.deliveredAt) };
}

/** `http:`/`https:` only, at most 2,048 characters; literal addresses the SSRF guard refuses are refused now. */
export function validateReceiverUrl(value: string, allowPrivate: boolean): string {
  const text = value.trim();
  if (text.length === 0 || text.length > webhookLimits.urlLength) throw invalid(`url: must be 1 to ${webhookLimits.urlLength} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid('url: must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('url: must be an absolute http:// or https:// URL');
  const refusal = hostRefusal(url.hostname, allowPrivate);
  if (refusal) throw invalid(`url: ${refusal}`);
  // Kept as it is read and called, so the owner sees where deliveries go.
  const kept = keptUrl(text, url);
  if (kept.length > webhookLimits.urlLength) throw invalid(`url: must be at most ${webhookLimits.urlLength} characters once encoded`);
  return kept;
}

function validateName(value: string): string {
  const parsed = nameSchema(webhookLimits.nameLength).safeParse(value);
  if (!parsed.success) throw invalid(`name: ${parsed.error.issues[0]!.message}`);
  return parsed.data;
}

/** `whsec_` + base64 of 32 random bytes (Standard Webhooks). */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

export interface WebhookOptions {
  dialect: Dialect;
  secretBox: SecretBox;
  allowPrivate: boolean;
}

/** Creates a webhook; its signing secret is returned this once and stored encrypted. */
export async function createWebhook(db: Db, options: WebhookOptions, userId: string, input: { name: string; url: string }): Promise<{ webhook: Webhook; secret: string }> {
  const name = validateName(input.name);
  const url = validateReceiverUrl(input.url, options.allowPrivate);
  return db.transaction().execute(async (trx) => {
    // Two concurrent creations at 9 webhooks cannot both pass the count.
    await lockAccountRow(trx, options.dialect, userId);
    const account = forAccount(trx, userId);
    const { count } = await account.selectFrom('webhooks').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
    if (Number(count) >= webhookLimits.perAccount) throw conflict(`An account can have at most ${webhookLimits.perAccount} webhooks; delete one first`);
    const now = Date.now();
    const id = newId();
    const secret = newWebhookSecret();
    const row = { id, name, url, enabled: 1, createdAt: now, updatedAt: now };
    await account.insertInto('webhooks', { ...row, secretEncrypted: options.secretBox.seal(secret, id) }).execute();
    return { webhook: toWebhook(row), secret };
  });
}

export async function listWebhooks(db: Db, userId: string): Promise<Webhook[]> {
  const rows = await forAccount(db, userId).selectFrom('webhooks').select(webhookColumns).orderBy('createdAt', 'asc').orderBy('id', 'asc').execute();
  return rows.map(toWebhook);
}

export async function updateWebhook(
  db: Db,
  options: Pick<WebhookOptions, 'allowPrivate'>,
  userId: string,
  id: string,
  patch: { name?: string | undefined; url?: string | undefined; enabled?: boolean | undefined },
): Promise<Webhook> {
  const changes: { name?: string; url?: string; enabled?: number; updatedAt?: number } = {};
  if (patch.name !== undefined) changes.name = validateName(patch.name);
  if (patch.url !== undefined) changes.url = validateReceiverUrl(patch.url, options.allowPrivate);
  if (patch.enabled !== undefined) changes.enabled = patch.enabled ? 1 : 0;
  const account = forAccount(db, userId);
  if (Object.keys(changes).length > 0) {
    changes.updatedAt = Date.now();
    const result = await account.updateTable('webhooks').set(changes).where('id', '=', id).executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) throw notFound('Webhook not found');
  }
  const row = await account.selectFrom('webhooks').select(webhookColumns).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('Webhook not found');
  return toWebhook(row);
}

/** Deletes the webhook and its delivery log; deliveries not yet sent are dropped. */
export async function deleteWebhook(db: Db, userId: string, id: string): Promise<void> {
  const result = await forAccount(db, userId).deleteFrom('webhooks').where('id', '=', id).executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) throw notFound('Webhook not found');
}

export async function listDeliveries(db: Db, userId: string, webhookId: string): Promise<Delivery[]> {
  const account = forAccount(db, userId);
  const webhook = await account.selectFrom('webhooks').select('id').where('id', '=', webhookId).executeTakeFirst();
  if (!webhook) throw notFound('Webhook not found');
  const rows = await account
    .selectFrom('webhookDeliveries')
    .select(deliveryColumns)
    .where('webhookId', '=', webhookId)
    .orderBy('createdAt', 'desc')
    .orderBy('id', 'desc')
    .limit(webhookLimits.deliveriesListed)
    .execute();
  return rows.map(toDelivery);
}

/**
 * Queues a test file.ready event (`"test": true`, sample file data) to one webhook, enabled or not.
 * The caller wakes the job runner.
 */
export async function sendTestEvent(db: Db, userId: string, webhookId: string, baseUrl: string): Promise<Delivery> {
  // Each test send is a real outbound request; a limit per account keeps one account from using the
  // instance to hammer a URL. A webhook that is not there sends nothing and uses none of it.
  const found = await forAccount(db, userId).selectFrom('webhooks').select('id').where('id', '=', webhookId).executeTakeFirst();
  if (!found) throw notFound('Webhook not found');
  await takeAttempt(db, `webhook-test:${userId}`, webhookLimits.testSendsPerMinute, 60_000, 'Too many test sends; try again later');
  return db.transaction().execute(async (trx) => {
    const account = forAccount(trx, userId);
    const webhook = await account.selectFrom('webhooks').select('id').where('id', '=', webhookId).executeTakeFirst();
    if (!webhook) throw notFound('Webhook not found');
    const eventId = newEventId();
    const now = Date.now();
    const name = 'hoard-test-event.txt';
    const body = fileReadyBody(
      eventId,
      now,
      {
        id: 'test',
        name,
        mimeType: 'text/plain',
        size: 42,
        visibility: 'PUBLIC',
        hasPassword: false,
        folderId: null,
        // Sample links of the right shape; no such file exists.
        url: `${baseUrl}/test/${name}`,
        rawUrl: `${baseUrl}/api/files/test/${name}`,
      },
      true,
    );
    const [deliveryId] = await queueDeliveries(trx, userId, { eventId, eventType: FILE_READY, body, test: true, createdAt: now }, [webhookId]);
    const row = await account.selectFrom('webhookDeliveries').select(deliveryColumns).where('id', '=', deliveryId!).executeTakeFirstOrThrow();
    return toDelivery(row);
  });
}

/**
 * Sends one event to a webhook again, as a new delivery of the same event: the same body and
 * `webhook-id`, so a receiver that keeps the IDs it has seen drops it if it did get it after all.
 * For an event that failed (a receiver down for longer than the retries last, a webhook disabled
 * while it was waiting, a receiver that answered 404 while misconfigured) or one the receiver
 * lost. Not for a delivery still pending, nor to a disabled webhook, which sends nothing.
 * The caller wakes the job runner.
 */
export async function resendDelivery(db: Db, options: Pick<WebhookOptions, 'dialect'>, userId: string, webhookId: string, deliveryId: string): Promise<Delivery> {
  const account = forAccount(db, userId);
  const webhook = await account.selectFrom('webhooks').select(['id', 'enabled']).where('id', '=', webhookId).executeTakeFirst();
  if (!webhook) throw notFound('Webhook not found');
  const found = await account.selectFrom('webhookDeliveries').select('id').where('id', '=', deliveryId).where('webhookId', '=', webhookId).executeTakeFirst();
  if (!found) throw notFound('Delivery not found');
  if (webhook.enabled !== 1) throw conflict('The webhook is disabled and sends nothing; enable it first');
  // Each resend is a real outbound request, limited per account as test sends are.
  await takeAttempt(db, `webhook-resend:${userId}`, webhookLimits.resendsPerMinute, 60_000, 'Too many resends; try again later');
  return db.transaction().execute(async (trx) => {
    // Resends at once (a double click, a script's retries) are taken one after the other, and each
    // sees the copy the one before it queued.
    await lockAccountRow(trx, options.dialect, userId);
    const scoped = forAccount(trx, userId);
    const original = await scoped
      .selectFrom('webhookDeliveries')
      .select(['eventId', 'eventType', 'body', 'test'])
      .where('id', '=', deliveryId)
      .where('webhookId', '=', webhookId)
      .executeTakeFirst();
    // Pruned or deleted with its webhook since it was read.
    if (!original) throw notFound('Delivery not found');
    // One copy of an event on its way at a time (the delivery resent itself, while pending,
    // included): copies sent together reach a receiver within milliseconds of each other, and one
    // that checks the IDs it has seen before storing them would take the event more than once.
    const inFlight = await scoped
      .selectFrom('webhookDeliveries')
      .select('id')
      .where('webhookId', '=', webhookId)
      .where('eventId', '=', original.eventId)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    if (inFlight) {
      // It passes: `Retry-After` is when the pending copy's next attempt is due, and the time a
      // receiver has to answer it. That attempt may be retried again, and the next 409 says when.
      const now = Date.now();
      const due = (await jobRunAt(trx, deliveryJobKey(inFlight.id))) ?? now;
      throw conflict('This event is still being sent to this webhook; resend it once that delivery is delivered or failed', Math.ceil((Math.max(0, due - now) + DELIVERY_TIMEOUT_MS) / 1000));
    }
    const [resentId] = await queueDeliveries(trx, userId, { eventId: original.eventId, eventType: original.eventType, body: original.body, test: original.test === 1, createdAt: Date.now() }, [webhookId]);
    return toDelivery(await scoped.selectFrom('webhookDeliveries').select(deliveryColumns).where('id', '=', resentId!).executeTakeFirstOrThrow());
  });
}

/**
 * A new signing secret for a webhook, returned this once. The one it replaces keeps signing beside it
 * for a day (`webhook-signature` then holds a signature by each, as Standard Webhooks allows), so
 * the receiver can be given the new secret at any time in that window and no delivery fails
 * verification. Deleting and creating the webhook again, the only way before, lost its pending
 * deliveries and its log, and every delivery until the receiver was changed. A second rotation
 * within the day drops the oldest secret.
 */
export async function rotateWebhookSecret(db: Db, options: Pick<WebhookOptions, 'dialect' | 'secretBox'>, userId: string, id: string): Promise<{ webhook: Webhook; secret: string }> {
  return db.transaction().execute(async (trx) => {
    // Two rotations at once: one after the other, each replacing what the last one left.
    await lockAccountRow(trx, options.dialect, userId);
    const account = forAccount(trx, userId);
    const current = await account.selectFrom('webhooks').select([...webhookColumns, 'secretEncrypted']).where('id', '=', id).executeTakeFirst();
    if (!current) throw notFound('Webhook not found');
    const now = Date.now();
    const secret = newWebhookSecret();
    await account
      .updateTable('webhooks')
      .set({ secretEncrypted: options.secretBox.seal(secret, id), previousSecretEncrypted: current.secretEncrypted, previousSecretUntil: now + webhookLimits.secretOverlapMs, updatedAt: now })
      .where('id', '=', id)
      .execute();
    return { webhook: toWebhook({ ...current, updatedAt: now }), secret };
  });
}
