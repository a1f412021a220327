/**
 * Archive-processing capacity (contract §9): each process works on at most `limit` archive requests
 * at a time, and a request that would exceed it gets 503. A slot is taken only after the request is
 * validated and authorized, and given back when its response ends or its client goes away. Owners'
 * libraries and readers of share pages take slots alike: a request refused while a slot is free is
 * not what the contract has (docs/decisions.md, "Capacity").
 */
export class ArchiveCapacity {
  private busy = 0;
  private readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
  }

  /** A release function (idempotent), or null when no slot is free. */
  reserve(): (() => void) | null {
    if (this.busy >= this.limit) return null;
    this.busy += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.busy -= 1;
    };
  }

  get inUse(): number {
    return this.busy;
  }
}

/** Seconds a client is asked to wait when capacity is full. */
export const ARCHIVE_RETRY_AFTER_SECONDS = 5;
