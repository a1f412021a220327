/**
 * How busy this process is with requests, for background work that should give way to them
 * (thumbnails and text recognition, docs/decisions.md "Thumbnails and text recognition"). Counts
 * request starts in two consecutive windows: cheap enough to note on every request.
 */
export class RequestLoad {
  readonly #windowMs: number;
  readonly #busyAt: number;
  #windowStart = 0;
  #current = 0;
  #previous = 0;

  /** Busy while at least `requestsPerSecond` requests a second are starting (over the last 0.5–1 s). */
  constructor(requestsPerSecond = 20, windowMs = 500) {
    this.#windowMs = windowMs;
    this.#busyAt = Math.max(1, Math.round((requestsPerSecond * windowMs) / 1000));
  }

  note(now = Date.now()): void {
    this.#roll(now);
    this.#current++;
  }

  busy(now = Date.now()): boolean {
    this.#roll(now);
    return Math.max(this.#current, this.#previous) >= this.#busyAt;
  }

  #roll(now: number): void {
    const elapsed = now - this.#windowStart;
    if (elapsed < this.#windowMs) return;
    this.#previous = elapsed < 2 * this.#windowMs ? this.#current : 0;
    this.#current = 0;
    this.#windowStart = now - (elapsed % this.#windowMs);
  }
}
