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
