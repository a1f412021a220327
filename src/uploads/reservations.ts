import { type Executor } from '../db/account-scope.ts';
import { chunkLimits } from '../shared/chunk-limits.ts';

/**
 * The declared size of every live chunked-upload session is reserved against its account's quota,
 * from its start until its completion (where the file's real charge replaces it) or its expiry. No
 * counter is kept: the reservation is the session row itself, so it cannot drift; a session that
 * expired no longer counts even before the sweep deletes it.
 *
 * Live: not completed, and either active within the inactivity limit or held by a completion.
 */
export function liveSessions(executor: Executor, now: number) {
  return executor
    .selectFrom('chunkSessions')
    .where('state', '!=', 'completed')
    .where((eb) => eb.or([eb('lastActivityAt', '>', now - chunkLimits.inactivityMs), eb('completingUntil', '>', now)]));
}

/** Bytes reserved by the account's live sessions (but `exceptSessionId`, the one being completed). */
export async function reservedBytes(executor: Executor, userId: string, now: number, exceptSessionId?: string): Promise<number> {
  let query = liveSessions(executor, now).where('userId', '=', userId);
  if (exceptSessionId !== undefined) query = query.where('id', '!=', exceptSessionId);
  const row = await query.select((eb) => eb.fn.sum<number | string | null>('size').as('total')).executeTakeFirst();
  return Number(row?.total ?? 0);
}
