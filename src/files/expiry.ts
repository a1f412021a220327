import type { Executor } from '../db/account-scope.ts';
import { cancelJob, enqueueJob } from '../jobs/queue.ts';

export const FILE_EXPIRY_JOB = 'file.expire';
const keyFor = (fileId: string) => `file-expiry:${fileId}`;

/** One job per file: setting a new expiry replaces the old one. */
export async function scheduleExpiry(executor: Executor, fileId: string, expiresAt: number): Promise<void> {
  await enqueueJob(executor, { type: FILE_EXPIRY_JOB, payload: { fileId }, runAt: expiresAt, dedupeKey: keyFor(fileId) });
}

export async function cancelExpiry(executor: Executor, fileId: string): Promise<void> {
  await cancelJob(executor, keyFor(fileId));
}
