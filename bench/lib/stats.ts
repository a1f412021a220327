/** The small arithmetic every bench section uses, once. */

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Megabytes (10^6 bytes) per second. */
export const mb = (bytes: number, seconds: number) => bytes / 1e6 / seconds;

export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
