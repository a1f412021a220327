import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe('GET /api/setup (first-run state for the web app)', () => {
  it('tells whether the Administrator still has to be created, and how registration works', async () => {
    const anonymous = new Client(server.baseUrl);
    const before = await anonymous.get('/api/setup');
    expect(before.status).toBe(200);
    expect(before.headers.get('cache-control')).toBe('no-store');
    expect(before.body).toEqual({ success: true, data: { needsAdministrator: true, registration: 'closed' } });

    const admin = await signUp(server.baseUrl);
    expect((await anonymous.get('/api/setup')).body.data).toEqual({ needsAdministrator: false, registration: 'closed' });

    expect((await admin.patch('/api/settings', { registration: 'invite' })).status).toBe(200);
    expect((await anonymous.get('/api/setup')).body.data.registration).toBe('invite');
  });

  it('needs no credential and ignores one', async () => {
    const response = await new Client(server.baseUrl).get('/api/setup', { token: 'svc_not_a_token' });
    expect(response.status).toBe(200);
  });
});
