import type { IncomingMessage } from 'node:http';

/**
 * An upload refused part-way (size, quota, a bad field) leaves the request paused mid-body: its
 * connection would then never notice the client hanging up and would stay open for ever, holding
 * shutdown too. The rest is read and thrown away instead, so the client gets the answer, the
 * connection closes when the client does, and a client that finishes sending can reuse it.
 */
export function discardRestOfBody(raw: IncomingMessage): void {
  if (raw.complete || raw.destroyed) return;
  raw.unpipe();
  raw.resume();
}
