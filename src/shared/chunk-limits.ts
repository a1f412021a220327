/**
 * Limits of chunked uploads (spec, Limits). Shared rather than in chunks/: the quota check in uploads/
 * (uploads/reservations.ts) counts a session as live by its inactivity limit.
 */
export const chunkLimits = {
  maxPartBytes: 64 * 1024 * 1024,
  maxPartNumber: 10_000,
  /** Chunk session inactivity: expires after one hour with no activity (spec, Limits). */
  inactivityMs: 60 * 60 * 1000,
  partUrlValiditySeconds: 60 * 60,
  /** S3 refuses to assemble a multipart upload whose parts, but the last, are smaller. */
  s3MinPartBytes: 5 * 1024 * 1024,
  /** How long a completed session is kept so that a repeated completion returns the same file (spec, Chunk upload session). */
  completedRetentionMs: 24 * 60 * 60 * 1000,
  /**
   * A completion renews its lease every completionRenewMs while it works (however long assembling
   * takes), so one whose process died is taken over within this.
   */
  completionLeaseMs: 30 * 1000,
  completionRenewMs: 10 * 1000,
  /** How long a repeated completion waits for the one in progress before answering 409. */
  completionWaitMs: 10 * 60 * 1000,
  /** Unfinished sessions an account may have at once (each reserves its declared size). */
  maxOpenSessions: 20,
  /**
   * The part of CHUNKED_UPLOAD_TEMP_LIMIT one account's unfinished sessions may hold together (one
   * session of any allowed size always may): 20 sessions of the largest file filled the instance's
   * room alone, and every other account's large uploads were refused for as long as it liked.
   */
  accountShareOfTempLimit: 1 / 4,
  /** Retry-After (seconds) when the open-session cap or the instance's temporary storage limit refuses a start. */
  busyRetryAfterSeconds: 60,
  /**
   * A part's reserved room lapses this long after the request streaming it last pushed it back
   * (every partReservationRenewMs): the room of a part whose process died is free again soon, and
   * a client re-sending that part after a restart waits no longer than this.
   */
  partReservationMs: 20 * 1000,
  partReservationRenewMs: 5 * 1000,
} as const;

export const UPLOAD_ID_PATTERN = /^[a-z0-9]{1,100}$/;

/**
 * What is wrong with an instance's largest upload against its room for unfinished chunked uploads,
 * in the operator's words, or null. Above the room, a file of that size can never be sent in parts;
 * above an account's share of it, each account's single session of that size may pass the share
 * (a file larger than the share still goes up), so a few accounts holding one each, without sending a
 * byte, leave every other account's large uploads refused until they end (docs/decisions.md, "Caps").
 */
export function tempLimitProblem(maxUploadBytes: number, tempLimit: number): string | null {
  if (tempLimit <= 0) return null;
  const share = Math.floor(tempLimit * chunkLimits.accountShareOfTempLimit);
  if (maxUploadBytes > tempLimit) {
    return `The largest upload (${maxUploadBytes} bytes) is more than CHUNKED_UPLOAD_TEMP_LIMIT (${tempLimit} bytes): a file above it is always refused when sent in parts, as the web app sends every file over 32 MiB; raise CHUNKED_UPLOAD_TEMP_LIMIT to at least ${4 * maxUploadBytes} bytes (4 × the largest upload)`;
  }
  if (maxUploadBytes > share) {
    // Past limit − largest, no other upload of the largest size fits: this many accounts' sessions.
    const accounts = Math.max(1, Math.floor(tempLimit / maxUploadBytes));
    return `The largest upload (${maxUploadBytes} bytes) is more than a quarter of CHUNKED_UPLOAD_TEMP_LIMIT (${tempLimit} bytes): ${accounts === 1 ? 'one account' : `${accounts} accounts`} starting uploads of that size, without sending a byte, can hold all of its room, and every other account's large uploads are refused (429) until they finish or expire; raise CHUNKED_UPLOAD_TEMP_LIMIT to at least ${4 * maxUploadBytes} bytes (4 × the largest upload)`;
  }
  return null;
}
