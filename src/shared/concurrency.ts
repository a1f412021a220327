/**
 * `work` for every item, at most `limit` at once; the results in the items' order. Every call
 * settles before a failure is thrown, so nothing is left running behind the caller's back.
 */
export async function mapConcurrently<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!, index);
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  const failure = settled.find((result) => result.status === 'rejected');
  if (failure) throw failure.reason;
  return results;
}
