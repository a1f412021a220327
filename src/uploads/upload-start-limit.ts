/**
 * The upload-start rate limit (spec, Limits): requests per minute per client IP, counted in this
 * process only, before authentication. A fixed one-minute window per IP.
 */
export class UploadStartLimit {
  private readonly windows = new Map<string, { start: number; count: number }>();
  readonly perMinute: number;

  constructor(perMinute: number) {
    this.perMinute = perMinute;
  }

  /** True when the request may go ahead. A limit of 0 switches the limit off. */
  allow(ip: string, now = Date.now()): boolean {
    if (this.perMinute === 0) return true;
    const window = this.windows.get(ip);
    if (!window || now - window.start >= 60_000) {
      if (this.windows.size > 100_000) this.prune(now);
      this.windows.set(ip, { start: now, count: 1 });
      return true;
    }
    window.count += 1;
    return window.count <= this.perMinute;
  }

  private prune(now: number): void {
    for (const [ip, window] of this.windows) if (now - window.start >= 60_000) this.windows.delete(ip);
  }
}

/** `Retry-After: 60` on the upload-start rate limit's 429 (spec, Errors: 429; Limits). */
export const UPLOAD_START_RETRY_AFTER_SECONDS = 60;
