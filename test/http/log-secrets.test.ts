import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';
import { createToken, uploadFile } from '../support/uploads.ts';
import { RawConnection } from '../support/raw-http.ts';

/**
 * Credentials never reach a log line, at any level: `trace` is a documented LOG_LEVEL, and the
 * libraries under Hoard log at it what they were handed (the multipart parser, every header of the
 * request). A request's secrets are its Authorization header, its cookies, and a password in a body.
 */
describe('credentials in the log at LOG_LEVEL=trace', () => {
  let server: TestServer;
  const logged: Array<{ level: number; msg?: string; [field: string]: unknown }> = [];

  beforeAll(async () => {
    // A body that stops arriving is answered within a second, and logged (below).
    server = await startTestServer({ LOG_LEVEL: 'trace', UPLOAD_RATE_LIMIT: '0', REQUEST_IDLE_TIMEOUT_MS: '1000' }, undefined, logged);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('keeps out tokens, the legacy credential, session cookies and passwords', async () => {
    const password = 'a password nobody logs';
    const owner = await signUp(server.baseUrl, undefined, password);
    const token = await createToken(owner, ['files:upload', 'files:read']);
    const legacy = (await owner.get('/api/profile/upload-token')).body.data.uploadToken as string;
    const session = [...owner.cookies.values()];
    expect(session.length).toBeGreaterThan(0);

    // Uploads in a form, by a named token, the legacy credential and the browser session.
    for (const credential of [{ token }, { token: legacy }, {}]) {
      const answer = await uploadFile(owner, 'note.txt', 'hello', credential);
      expect(answer.status, answer.text).toBe(200);
    }
    // A chunked upload's part, and JSON routes.
    const started = await new Client(server.baseUrl).post('/api/files/chunks', { filename: 'part.bin', size: 3 }, { token });
    expect(started.status, started.text).toBe(200);
    const part = await fetch(`${server.baseUrl}/api/files/chunks/${started.body.data.uploadId}/part/1`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
      body: 'abc',
    });
    expect(part.status).toBe(200);
    expect((await new Client(server.baseUrl).get('/api/files', { token })).status).toBe(200);
    expect((await new Client(server.baseUrl).post('/api/auth/login', { email: owner.email, password })).status).toBe(200);

    // Secrets a script put in the URL, against the rules: named like one, or shaped like a named token.
    const inQuery = 'a password put in a query';
    for (const url of [`/api/files?access_token=${token}`, `/api/files?limit=2&api_key=${legacy}`, `/api/files?password=${encodeURIComponent(inQuery)}`, `/api/files?q=${token}`, `/api/files/${token}`]) {
      expect((await fetch(server.baseUrl + url)).status).toBeGreaterThanOrEqual(400);
    }
    // A request whose body stops arriving is logged by the connection's timer, not the access log.
    const stalled = await RawConnection.open(server.baseUrl);
    await stalled.send(`POST /api/auth/login?password=${encodeURIComponent(inQuery)}&token=${token} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"em`);
    expect((await stalled.nextResponse()).status).toBe(408);
    stalled.destroy();
    // Hoard's own invite links carry a single-use code.
    await fetch(`${server.baseUrl}/app/signin?invite=single-use-invite-code`);
    const urls = logged.map((line) => (line.req as { url?: string } | undefined)?.url ?? (typeof line.url === 'string' ? line.url : undefined)).filter((url) => url !== undefined);
    expect(urls).toContain(`/api/auth/login?password=[redacted]&token=[redacted]`);
    expect(urls).toContain('/app/signin?invite=[redacted]');
    expect(urls).toContain('/api/files?limit=2&api_key=[redacted]');
    expect(urls).toContain('/api/files?q=svc_[redacted]');

    expect(logged.some((line) => line.level === 10), 'trace lines were written').toBe(true);
    const text = logged.map((line) => JSON.stringify(line)).join('\n');
    for (const secret of [token, legacy, ...session, password, inQuery, encodeURIComponent(inQuery), 'single-use-invite-code']) {
      expect(text.includes(secret), `a log line holds ${secret.slice(0, 6)}…`).toBe(false);
    }
  });
});
