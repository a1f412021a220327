/**
 * Archive-processing capacity (contract §9): each process works on at most `limit` archive requests
 * at a time. A slot is taken only after the request is validated and authorized, and given back
 * when its response ends or its client goes away.
 *
 * Readers of share pages (who need no account, and may simply stop reading an entry) take at most
 * half of the slots, so that they can never leave the owners' own libraries without one; and one
 * account's library takes at most half of them too, so that an owner reading entries slowly (a
 * slow reader is never cut while it reads) cannot leave every other owner with 503 for hours.
 */
export class ArchiveCapacity {
  private busy = 0;
  private sharedBusy = 0;
  private readonly perAccount = new Map<string, number>();
  private readonly limit: number;
  private readonly sharedLimit: number;
  readonly accountLimit: number;
  constructor(limit: number) {
    this.limit = limit;
    this.sharedLimit = Math.max(1, Math.floor(limit / 2));
    this.accountLimit = Math.max(1, Math.floor(limit / 2));
  }

  /**
   * A release function (idempotent), or why no slot is free for this request: `shared` for a share
   * page's reading (its page, manifest or entry), else the library of the account `accountId`.
   */
  reserve(use: { shared: true } | { accountId: string }): (() => void) | 'busy' | 'account' {
    if (this.busy >= this.limit) return 'busy';
    const shared = 'shared' in use;
    if (shared && this.sharedBusy >= this.sharedLimit) return 'busy';
    const account = shared ? null : use.accountId;
    if (account !== null && (this.perAccount.get(account) ?? 0) >= this.accountLimit) return 'account';
    this.busy += 1;
    if (shared) this.sharedBusy += 1;
    if (account !== null) this.perAccount.set(account, (this.perAccount.get(account) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.busy -= 1;
      if (shared) this.sharedBusy -= 1;
      if (account !== null) {
        const left = (this.perAccount.get(account) ?? 1) - 1;
        if (left > 0) this.perAccount.set(account, left);
        else this.perAccount.delete(account);
      }
    };
  }

  get inUse(): number {
    return this.busy;
  }
}

/** Seconds a client is asked to wait when capacity is full. */
export const ARCHIVE_RETRY_AFTER_SECONDS = 5;
