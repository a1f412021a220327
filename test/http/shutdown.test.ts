import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { serverProcess } from '../support/server-process.ts';
import { signUp } from '../support/client.ts';
import { createToken } from '../support/uploads.ts';

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

  it('stops at once on a second signal while it waits for a request in progress, and says so', async () => {
    const output: string[] = [];
    const server = await serverProcess({ LOG_LEVEL: 'warn' }, 'hoard-shutdown-', { output });
    try {
      await server.start();
      const owner = await signUp(server.baseUrl);
      const token = await createToken(owner, ['files:upload']);
      // An upload whose client sends its first bytes and then waits: the first signal waits for it.
      const boundary = 'slow-upload-boundary';
      const upload = http.request(`${server.baseUrl}/api/files`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(10 * 1024 * 1024) } });
      upload.on('error', () => undefined);
      upload.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
      upload.write(Buffer.alloc(64 * 1024));
      await new Promise((resolve) => setTimeout(resolve, 500));
      process.kill(server.pid()!, 'SIGINT');
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(server.pid()).toBeDefined();
      const began = Date.now();
      expect(await server.signal('SIGINT')).toBe(1);
      expect(Date.now() - began).toBeLessThan(5000);
      upload.destroy();
      const warnings = output.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { level: number; msg?: string }).filter((line) => line.level === 40);
      expect(warnings.map((line) => line.msg)).toEqual(['SIGINT again: stopping at once, without waiting for the requests and background work in progress']);
    } finally {
      server.stop();
    }
  });
});
