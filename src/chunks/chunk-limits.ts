/** Limits of chunked uploads (spec, Limits). */
export const chunkLimits = {
  maxPartBytes: 64 * 1024 * 1024,
  maxPartNumber: 10_000,
  inactivityMs: 60 * 60 * 1000,
  partUrlValiditySeconds: 60 * 60,
  /** S3 refuses to assemble a multipart upload whose parts, but the last, are smaller. */
  s3MinPartBytes: 5 * 1024 * 1024,
  /** How long a completed session is kept so that repeating the completion returns the same file. */
  completedRetentionMs: 24 * 60 * 60 * 1000,
  /**
   * A completion renews its lease every completionRenewMs while it works (however long assembling
   * takes), so one whose process died is taken over within this.
   */
  completionLeaseMs: 30 * 1000,
  completionRenewMs: 10 * 1000,
} as const;

export const UPLOAD_ID_PATTERN = /^[a-z0-9]{1,100}$/;
