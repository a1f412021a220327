import { describe, expect, it } from 'vitest';
import { serverProcess } from '../support/server-process.ts';

/**
 * What an operator reads when Hoard is stopped: "shutting down" when the signal arrives, "stopped"
 * once every request is answered and everything is closed, and exit code 0.
 */
describe('stopping the server with SIGTERM', () => {
  it('logs "shutting down", then "stopped", and exits 0', async () => {
    const output: string[] = [];
    const server = await serverProcess({ LOG_LEVEL: 'info' }, 'hoard-shutdown-', { output });
    try {
      await server.start();
      expect(await server.signal('SIGTERM')).toBe(0);
      const messages = output.filter((line) => line.startsWith('{')).map((line) => (JSON.parse(line) as { msg?: string }).msg);
      expect(messages.slice(-2)).toEqual(['shutting down', 'stopped']);
    } finally {
      server.stop();
    }
  });
});
