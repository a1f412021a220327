import { expect } from 'vitest';

/**
 * Runs `action` while another client asks the server for /api/health, one request after another,
 * for as long as it takes: how long the action took, and how long each of those requests waited.
 * A server that holds its thread for the whole action answers none of them meanwhile.
 */
export async function waitsDuring<T>(baseUrl: string, action: () => Promise<T>): Promise<{ result: T; took: number; waits: number[] }> {
  let running = true;
  const waits: number[] = [];
  const asking = (async () => {
    while (running) {
      const started = performance.now();
      expect((await fetch(`${baseUrl}/api/health`)).status).toBe(200);
      waits.push(performance.now() - started);
    }
  })();
  const started = performance.now();
  try {
    const result = await action();
    return { result, took: performance.now() - started, waits };
  } finally {
    running = false;
    await asking;
  }
}

/** Other requests were answered all along: several of them, none waiting near the action's whole time. */
export function expectAnsweredMeanwhile({ took, waits }: { took: number; waits: number[] }): void {
  expect(waits.length).toBeGreaterThan(2);
  expect(Math.max(...waits)).toBeLessThan(took / 4);
}
