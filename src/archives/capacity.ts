/**
 * Archive-processing capacity (contract §9): each process works on at most `limit` archive requests
 * at a time, and a request that would exceed it gets 503. A slot is taken only after the request is
 * validated and authorized, and given back when its response ends or its client goes away.
 *
 * Readers of share pages (who need no account, and may simply stop reading an entry) take at most
 * half of the slots, so that anyone on the internet can never leave the owners' own libraries
 * without one. An owner's library may use every slot, as the contract has it (docs/decisions.md,
 * "Capacity").
 */
export class ArchiveCapacity {
  private busy = 0;
  private sharedBusy = 0;
  private readonly limit: number;
  private readonly sharedLimit: number;
  constructor(limit: number) {
    this.limit = limit;
    this.sharedLimit = Math.max(1, Math.floor(limit / 2));
  }

  /** A release function (idempotent), or null when no slot is free for this request (`shared`: a share page's reading). */
  reserve(use: { shared: boolean }): (() => void) | null {
    if (this.busy >= this.limit) return null;
    if (use.shared && this.sharedBusy >= this.sharedLimit) return null;
    this.busy += 1;
    if (use.shared) this.sharedBusy += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.busy -= 1;
      if (use.shared) this.sharedBusy -= 1;
    };
  }

  get inUse(): number {
    return this.busy;
  }
}

/** Seconds a client is asked to wait when capacity is full. */
export const ARCHIVE_RETRY_AFTER_SECONDS = 5;
