import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';
import { createToken, uploadFile } from '../support/uploads.ts';

/**
 * An ID (or a name) in a path that no record has is the route's 404, however long it is (contract:
 * "unknown ID is 404"; the specification's statuses for DELETE /api/urls/{id} have no 400). Only the
 * router's own bound on a path segment (1,024 characters) is a 414.
 */
describe('IDs in paths longer than any record has', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof signUp>>;
  let urlId: string;
  const long = 'a'.repeat(300);

  beforeAll(async () => {
    server = await startTestServer();
    owner = await signUp(server.baseUrl);
    urlId = (await owner.get('/api/auth/me')).body.data.user.urlId;
    expect((await uploadFile(owner, 'kept.zip', 'not really a zip')).status).toBe(200);
  });
  afterAll(async () => {
    await server.close();
  });

  it('are 404 on the named-token API, as the specification lists', async () => {
    const token = await createToken(owner, ['urls:write']);
    const answer = await new Client(server.baseUrl).request('DELETE', `/api/urls/${long}`, { token });
    expect(answer.status, answer.text).toBe(404);
    expect(answer.body).toEqual({ success: false, error: 'URL not found' });
  });

  it.each([
    ['DELETE', () => `/api/auth/sessions/${long}`],
    ['DELETE', () => `/api/auth/passkeys/${long}`],
    ['DELETE', () => `/api/tokens/${long}`],
    ['DELETE', () => `/api/files/${long}`],
    ['GET', () => `/api/files/${long}/download`],
    ['GET', () => `/api/archives/${long}`],
    ['DELETE', () => `/api/folders/${long}`],
    ['DELETE', () => `/api/webhooks/${long}`],
  ])('are 404 on the routes of a browser session: %s %s', async (method, path) => {
    const answer = await owner.request(method, path());
    expect(answer.status, answer.text).toBe(404);
  });

  it('are 404 on public pages and share routes, for an unknown account or name of any length', async () => {
    const anyone = new Client(server.baseUrl);
    for (const path of [`/${long}/kept.zip`, `/${urlId}/${'n'.repeat(600)}.zip`, `/raw/${long}`]) {
      expect((await anyone.get(path)).status, path).toBe(404);
    }
    for (const path of [`/api/share/${long}/kept.zip/archive`, `/api/share/${urlId}/${'n'.repeat(600)}.zip/archive`]) {
      const answer = await anyone.post(path, {});
      expect(answer.status, `${path}: ${answer.text}`).toBe(404);
    }
    // Past the router's bound on one segment.
    expect((await anyone.get(`/${'a'.repeat(1025)}/kept.zip`)).status).toBe(414);
  });
});
