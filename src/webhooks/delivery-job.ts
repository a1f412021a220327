import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { forAccount, type AccountScope } from '../db/account-scope.ts';
import { jobDone, retryJob, type ClaimedJob, type JobHandlers, type JobOutcome } from '../jobs/queue.ts';
import { DELIVERY_TIMEOUT_MS, sendWebhook, type DeliveryResult } from './deliver.ts';
import { WEBHOOK_DELIVERY_JOB, type DeliveryJobPayload } from './outbox.ts';
import type { SecretBox } from '../auth/secret-box.ts';
import type { Lookup } from './ssrf-guard.ts';

/**
 * Waits between attempts: 8 attempts over about 10.7 hours (30 s, 2 min, 10 min, 30 min, 1 h, 3 h,
 * 6 h), each ±20 % jitter so receivers recovering from an outage are not hit all at once.
 */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [30_000, 120_000, 600_000, 1_800_000, 3_600_000, 10_800_000, 21_600_000];

/** Finished deliveries kept per webhook (the newest); older ones are pruned as new ones finish. */
export const DELIVERIES_KEPT = 100;

export interface WebhookDeliveryOptions {
  db: Db;
  log: Logger;
  secretBox: SecretBox;
  allowPrivate: boolean;
  /** Back-off between attempts; attempts = length + 1. Tests pass short ones. */
  retryDelaysMs?: readonly number[] | null | undefined;
  timeoutMs?: number;
  lookup?: Lookup;
}

const jitter = (ms: number) => Math.round(ms * (0.8 + Math.random() * 0.4));

/**
 * Delivery jobs run in slots of their own, apart from expiry and the other instance jobs: a backlog
 * of deliveries to receivers that never answer (each attempt holds its slot for the whole time-out)
 * never delays an expiry or a clean-up. Deliveries mostly wait on the network, so there are more
 * of them than of the shared slots.
 */
export const WEBHOOK_DELIVERY_SLOTS = 16;

/** While a receiver stalls: sends to one webhook at once, and to all of one account's stalling webhooks. */
const STALLED_SENDS_PER_WEBHOOK = 1;
const STALLED_SENDS_PER_ACCOUNT = 2;
/**
 * How long a delivery that may not be sent yet waits before it is looked at again (±20 %): at least
 * this, and at most STALLED_WAIT_MAX_MS (see StallThrottle.wait).
 */
const STALLED_WAIT_MS = 30_000;
const STALLED_WAIT_MAX_MS = 3_600_000;

/**
 * Keeps one account's stalling receivers from taking every delivery slot (docs/decisions.md,
 * "Webhooks"). A webhook stalls when an attempt fails after half the time-out or more (no answer,
 * or one trickling in): such an attempt holds its slot for seconds, where a refused connection or
 * a quick 500 costs nothing. While it stalls, its deliveries are sent one at a time, and an
 * account's stalling webhooks at most two at a time; every other due delivery to them waits, without
 * counting an attempt. The first attempt that ends quickly ends the stall.
 *
 * Kept per process, in memory: a throttle, not state. A restart forgets it, and the first attempts
 * find the stall again.
 */
class StallThrottle {
  private readonly stalled = new Set<string>();
  /** Per stalling webhook, the latest time a waiting delivery was told to come back at. */
  private readonly turns = new Map<string, number>();
  private readonly sending = new Map<string, number>();
  private readonly accountSending = new Map<string, number>();

  private readonly timeoutMs: number;

  constructor(timeoutMs: number) {
    this.timeoutMs = timeoutMs;
  }

  /** Whether an attempt to this webhook may start now; if so, it is counted until `ended`. */
  begin(userId: string, webhookId: string): boolean {
    if (this.stalled.has(webhookId)) {
      if ((this.sending.get(webhookId) ?? 0) >= STALLED_SENDS_PER_WEBHOOK) return false;
      if ((this.accountSending.get(userId) ?? 0) >= STALLED_SENDS_PER_ACCOUNT) return false;
    }
    this.sending.set(webhookId, (this.sending.get(webhookId) ?? 0) + 1);
    this.accountSending.set(userId, (this.accountSending.get(userId) ?? 0) + 1);
    return true;
  }

  /**
   * How long a delivery to `webhookId` that may not be sent now waits. Its turns are spaced a
   * time-out apart, the pace at which one send at a time gets through to a receiver that does not
   * answer, from STALLED_WAIT_MS to STALLED_WAIT_MAX_MS ahead. Each waiting delivery is a claim of a
   * delivery slot when it comes back: thousands of them back every 30 s took all the slots, and
   * every account's events waited behind them, minutes late and later with each upload.
   */
  wait(webhookId: string, now = Date.now()): number {
    const turn = Math.min(Math.max(now + STALLED_WAIT_MS, (this.turns.get(webhookId) ?? 0) + this.timeoutMs), now + STALLED_WAIT_MAX_MS);
    this.turns.set(webhookId, turn);
    return turn - now;
  }

  ended(userId: string, webhookId: string, result: DeliveryResult, elapsedMs: number): void {
    const down = (map: Map<string, number>, key: string) => {
      const left = (map.get(key) ?? 1) - 1;
      if (left > 0) map.set(key, left);
      else map.delete(key);
    };
    down(this.sending, webhookId);
    down(this.accountSending, userId);
    if (result.result === 'retry' && elapsedMs >= this.timeoutMs / 2) this.stalled.add(webhookId);
    else if (elapsedMs < this.timeoutMs / 2) {
      this.stalled.delete(webhookId);
      this.turns.delete(webhookId);
    }
  }
}

/** The job handlers of webhook delivery, to register with the JobRunner. */
export function webhookJobHandlers(options: WebhookDeliveryOptions): JobHandlers {
  const throttle = new StallThrottle(options.timeoutMs ?? DELIVERY_TIMEOUT_MS);
  return { [WEBHOOK_DELIVERY_JOB]: (job) => deliverOnce(options, throttle, job) };
}

async function finishDelivery(account: AccountScope, id: string, previousAttempts: number, values: { status: 'delivered' | 'failed' | 'pending'; attempts: number; lastStatus: number | null; lastError: string | null; deliveredAt?: number }) {
  // Guarded by the attempt count read before sending, so an attempt whose job lease was lost
  // meanwhile cannot overwrite a later attempt's result. But not a delivery: the receiver has the
  // event, whatever another attempt met. Guarded too, it lost to a stale attempt that had written
  // its time-out first, and the delivery stayed "pending" with no job left to send it.
  await account
    .updateTable('webhookDeliveries')
    .set({ ...values, lastError: values.lastError?.slice(0, 1000) ?? null })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .$if(values.status !== 'delivered', (q) => q.where('attempts', '=', previousAttempts))
    .execute();
}

async function pruneDeliveries(account: AccountScope, webhookId: string): Promise<void> {
  await account
    .deleteFrom('webhookDeliveries')
    .where('webhookId', '=', webhookId)
    .where('status', '<>', 'pending')
    .where('id', 'not in', (eb) =>
      eb.selectFrom('webhookDeliveries').select('id').where('webhookId', '=', webhookId).orderBy('createdAt', 'desc').orderBy('id', 'desc').limit(DELIVERIES_KEPT),
    )
    .execute();
}

async function deliverOnce(options: WebhookDeliveryOptions, throttle: StallThrottle, job: ClaimedJob): Promise<JobOutcome> {
  const { deliveryId, userId } = job.payload as DeliveryJobPayload;
  const account = forAccount(options.db, userId);
  const row = await account
    .selectFrom('webhookDeliveries')
    .innerJoin('webhooks', 'webhooks.id', 'webhookDeliveries.webhookId')
    .select([
      'webhookDeliveries.id',
      'webhookDeliveries.webhookId',
      'webhookDeliveries.eventId',
      'webhookDeliveries.body',
      'webhookDeliveries.test',
      'webhookDeliveries.status',
      'webhookDeliveries.attempts',
      'webhookDeliveries.lastStatus',
      'webhookDeliveries.lastError',
      'webhooks.url',
      'webhooks.enabled',
      'webhooks.secretEncrypted',
      'webhooks.previousSecretEncrypted',
      'webhooks.previousSecretUntil',
    ])
    .where('webhookDeliveries.id', '=', deliveryId)
    .executeTakeFirst();
  // Deleted with its webhook or account, or already finished by an earlier run of this job.
  if (!row || row.status !== 'pending') return jobDone();

  const attempt = row.attempts + 1;
  const fail = async (error: string, attempts: number, lastStatus: number | null = null) => {
    await finishDelivery(account, row.id, row.attempts, { status: 'failed', attempts, lastStatus, lastError: error });
    await pruneDeliveries(account, row.webhookId);
    return jobDone();
  };

  // Disabling a webhook stops what it has not sent yet; a test event is sent regardless.
  // One already attempted keeps what its last attempt met.
  if (row.enabled !== 1 && row.test !== 1) {
    if (row.attempts === 0) return fail('The webhook was disabled before this delivery was sent', 0);
    return fail(`${row.lastError ?? 'Not delivered'} (the webhook was disabled before it was sent again)`, row.attempts, row.lastStatus);
  }

  const delays = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  let secret: string;
  try {
    secret = options.secretBox.open(row.secretEncrypted, row.webhookId);
  } catch {
    // A process started with another key than the others sharing the database (README, "PostgreSQL"):
    // the delivery is tried again on the retry schedule, so a process with the right key may send it;
    // failed only when none did.
    options.log.error({ webhookId: row.webhookId }, 'webhook secret cannot be decrypted: SECRET_KEY or DATA_DIR/secret.key differs from the one it was sealed with');
    // Rotating makes a new secret under this key, keeping the webhook, its log and its ID.
    const error = "The signing secret cannot be decrypted with this instance's key (SECRET_KEY or DATA_DIR/secret.key changed, or differs between processes); give every process the same key, or, if the key was changed for good, rotate this webhook's secret (Rotate secret) and give the receiver the new one";
    if (attempt > delays.length) return fail(`${error} (gave up after ${attempt} attempts)`, attempt);
    await finishDelivery(account, row.id, row.attempts, { status: 'pending', attempts: attempt, lastStatus: null, lastError: error });
    return retryJob(jitter(delays[attempt - 1]!), error);
  }

  // The secret a rotation replaced signs too while its overlap lasts (src/webhooks/webhooks.ts,
  // rotateWebhookSecret). One this process cannot open is left out: the current one still signs.
  let previousSecret: string | undefined;
  if (row.previousSecretEncrypted !== null && row.previousSecretUntil !== null && row.previousSecretUntil > Date.now()) {
    try {
      previousSecret = options.secretBox.open(row.previousSecretEncrypted, row.webhookId);
    } catch {
      // Left out, as said above.
    }
  }

  if (!throttle.begin(userId, row.webhookId)) return retryJob(jitter(throttle.wait(row.webhookId)), 'Waiting: the receiver is not answering, and an earlier delivery to it is being sent');
  const began = Date.now();
  let result: DeliveryResult = { result: 'retry', status: null, error: 'The delivery attempt did not end' };
  try {
    result = await sendWebhook({
      url: row.url,
      secret,
      previousSecret,
      messageId: row.eventId,
      body: row.body,
      allowPrivate: options.allowPrivate,
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.lookup ? { lookup: options.lookup } : {}),
    });
  } finally {
    throttle.ended(userId, row.webhookId, result, Date.now() - began);
  }

  if (result.result === 'delivered') {
    await finishDelivery(account, row.id, row.attempts, { status: 'delivered', attempts: attempt, lastStatus: result.status, lastError: null, deliveredAt: Date.now() });
    await pruneDeliveries(account, row.webhookId);
    return jobDone();
  }

  // The full reason (addresses included) is for the log; the owner sees the generic one.
  const detail = result.detail ?? result.error;
  if (result.result === 'retry' && attempt <= delays.length) {
    options.log.info({ deliveryId: row.id, webhookId: row.webhookId, attempt, error: detail }, 'webhook delivery attempt failed; will retry');
    await finishDelivery(account, row.id, row.attempts, { status: 'pending', attempts: attempt, lastStatus: result.status, lastError: result.error });
    return retryJob(jitter(delays[attempt - 1]!), result.error);
  }
  const error = result.result === 'retry' ? `${result.error} (gave up after ${attempt} attempts)` : result.error;
  options.log.info({ deliveryId: row.id, webhookId: row.webhookId, attempt, error: detail }, 'webhook delivery failed');
  return fail(error, attempt, result.status);
}
