import type { Db } from '../db/database.ts';
import type { Principal } from '../auth/principal.ts';
import { hasPermission } from '../auth/permissions.ts';
import { readSettings } from '../settings/instance-settings.ts';
import { accountGone, tooLarge } from '../errors.ts';
import { effectiveQuotaBytes } from '../shared/quota.ts';
import { reservedBytes } from './reservations.ts';
import { sizeInWords } from '../shared/sizes.ts';

export interface Allowance {
  /** The instance's per-file limit. */
  sizeLimit: number;
  /** Bytes the account may still store, or null without a quota. */
  quotaRemaining: number | null;
  /** Bytes the account's unfinished chunked uploads hold against the quota (0 without a quota). */
  reserved: number;
  /** The smaller of the two: the most bytes this upload may have. */
  maxBytes: number;
}

/**
 * The quota that applies to this upload, or null for none. `quotas.bypass` (and so Administrator)
 * lifts the instance's default quota only: not a quota set on the account, nor the file-size limit.
 */
export function quotaFor(principal: Principal, userQuota: number | null, defaultQuota: number): number | null {
  return effectiveQuotaBytes(userQuota, defaultQuota, hasPermission(principal.permissions, 'quotas.bypass'));
}

/** What the account may still store: its quota less the bytes it uses and those its open chunked uploads reserve. */
export async function uploadAllowance(db: Db, principal: Principal): Promise<Allowance> {
  const settings = await readSettings(db);
  const user = await db.selectFrom('users').select(['quotaBytes', 'usedBytes']).where('id', '=', principal.user.id).executeTakeFirstOrThrow(accountGone);
  const quota = quotaFor(principal, user.quotaBytes, settings.defaultQuotaBytes);
  const reserved = quota === null ? 0 : await reservedBytes(db, principal.user.id, Date.now());
  const quotaRemaining = quota === null ? null : Math.max(0, quota - user.usedBytes - reserved);
  return { sizeLimit: settings.maxUploadSizeBytes, quotaRemaining, reserved, maxBytes: Math.min(settings.maxUploadSizeBytes, quotaRemaining ?? Infinity) };
}

/** The 413 for an upload that went past `maxBytes`, naming the limit that was reached. */
export function overLimit(allowance: Allowance) {
  if (allowance.quotaRemaining !== null && allowance.quotaRemaining < allowance.sizeLimit) {
    return quotaExceeded(allowance.quotaRemaining, allowance.reserved);
  }
  return tooLarge(`The file exceeds the maximum upload size of ${sizeInWords(allowance.sizeLimit)}`);
}

/**
 * The 413 of the quota. Room held by unfinished chunked uploads is named: the account's usage does
 * not show it, and without the word an owner sees free room that uploads are refused (decisions.md,
 * "Quota reservations").
 */
export function quotaExceeded(left: number, reserved: number) {
  const held = reserved > 0 ? `; ${sizeInWords(reserved)} more are held by your unfinished chunked uploads until they complete, are cancelled or lapse after an hour without activity` : '';
  return tooLarge(`The upload exceeds your storage quota (${sizeInWords(left)} left${held})`);
}
