import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';
import { routePolicies } from '../../src/auth/route-policy.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe('platform routes', () => {
  it('GET /api/health answers without authentication', async () => {
    const response = await new Client(server.baseUrl).get('/api/health');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok' });
  });

  it('serves an OpenAPI 3.1 description of every registered /api route', async () => {
    const response = await new Client(server.baseUrl).get('/api/openapi.json');
    expect(response.status).toBe(200);
    const doc = response.body;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    // The web app's pages and assets are not under /api and are left out of the description; the
    // document itself and the API reference page are in it.
    const webApp = ['/', '/app', '/app/*', '/assets/*', '/favicon.ico'];
    const registered = routePolicies.filter((p) => !webApp.includes(p.path) && server.app.hasRoute({ method: p.method, url: p.path }));
    expect(registered.length).toBeGreaterThan(15);
    for (const policy of registered) {
      const openApiPath = policy.path.replace(/:(\w+)/g, '{$1}');
      expect(doc.paths[openApiPath]?.[policy.method.toLowerCase()], `${policy.method} ${policy.path}`).toBeDefined();
    }
    // Request schemas come from the same zod schemas that validate.
    const register = doc.paths['/api/auth/register'].post.requestBody.content['application/json'].schema;
    expect(register.required).toEqual(expect.arrayContaining(['email', 'password']));
    expect(register.additionalProperties).toBe(false);
  });

  it('answers unknown /api routes with a JSON 404', async () => {
    const response = await new Client(server.baseUrl).get('/api/no/such/route');
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/application\/json/);
    expect(response.body.error).toMatch(/No route GET \/api\/no\/such\/route/);
    // Two segments are also the shape of a share page's path (/<urlId>/<name>); no account's URL ID
    // is "api", so these are unknown routes too, not a "File not found" page. So is a third one's raw
    // shape under /api/files.
    for (const path of ['/api/nonexistent', '/api/files.json']) {
      const twoSegments = await new Client(server.baseUrl).get(path);
      expect([twoSegments.status, twoSegments.headers.get('content-type'), twoSegments.body?.error], path).toEqual([404, expect.stringMatching(/^application\/json/), `No route GET ${path}`]);
    }
  });

  it('names the route meant when a script asks with a slash too many, in JSON', async () => {
    // A base URL ending in "/" joined with "/api/files" gives "//api/files"; one with a slash added, "/api/files/".
    for (const [path, meant] of [
      ['//api/files', '/api/files'],
      ['/api/files/', '/api/files'],
      ['/api//files', '/api/files'],
    ]) {
      const answer = await new Client(server.baseUrl).post(path!, {});
      expect([answer.status, answer.headers.get('content-type'), answer.body?.error], path).toEqual([
        404,
        expect.stringMatching(/^application\/json/),
        `No route POST ${path}: the route is POST ${meant} (check for a slash too many in the address, as a base URL ending in "/" gives)`,
      ]);
    }
    // A path that is no route even so is answered as before: the HTML 404 outside /api/.
    expect((await new Client(server.baseUrl).get('//nothing/here')).headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('refuses a JSON body with fields on a route that takes none, before acting', async () => {
    const owner = await signUp(server.baseUrl);
    const credential = (await owner.get('/api/profile/upload-token')).body.data.uploadToken as string;
    const regenerate = await owner.post('/api/profile/upload-token', { x: 1 });
    expect([regenerate.status, regenerate.body.error]).toEqual([400, 'body: unknown field "x"']);
    expect((await owner.get('/api/profile/upload-token')).body.data.uploadToken).toBe(credential);
    const logout = await owner.request('POST', '/api/auth/logout', { json: [1] });
    expect([logout.status, logout.body.error]).toEqual([400, 'body: this route takes no body']);
    expect((await owner.get('/api/auth/me')).status).toBe(200);
    // An empty object, or no body at all, is no body.
    expect((await owner.post('/api/profile/upload-token', {})).status).toBe(200);
    expect((await owner.post('/api/auth/logout')).status).toBe(204);
  });

  it('takes no body at all as the defaults on the routes whose body is optional, but a JSON null is no object', async () => {
    const own = await startTestServer();
    try {
      // The first account of an instance is its administrator: every route below is open to it.
      const admin = await signUp(own.baseUrl);
      const urlId = (await admin.get('/api/auth/me')).body.data.user.urlId as string;
      const json = 'body: must be a JSON object, sent with Content-Type: application/json';
      const jsonOrForm = 'body: must be a JSON object or a form, sent with Content-Type: application/json or application/x-www-form-urlencoded';
      const routes: Array<[string, string, string, number]> = [
        ['POST', '/api/archives/no-such-file/extract', json, 404],
        ['POST', '/api/invites', json, 201],
        ['DELETE', '/api/moderation/files/no-such-file', json, 404],
        ['DELETE', '/api/moderation/links/no-such-link', json, 404],
        ['POST', '/api/auth/passkey/options', json, 200],
        ['POST', `/api/share/${urlId}/nothing.zip/archive`, jsonOrForm, 404],
      ];
      for (const [method, path, message, withoutBody] of routes) {
        const nullBody = await admin.request(method, path, { body: 'null', headers: { 'content-type': 'application/json' } });
        expect([nullBody.status, nullBody.body?.error], `${method} ${path}`).toEqual([400, message]);
        const none = await admin.request(method, path);
        expect(none.status, `${method} ${path} without a body: ${none.text}`).toBe(withoutBody);
      }
    } finally {
      await own.close();
    }
  });

  it('says what to do about the commonest body and query mistakes: a field left out or of the wrong kind, a body that is no JSON object, a parameter given twice', async () => {
    const client = new Client(server.baseUrl);
    const missing = await client.post('/api/auth/login', { email: 'someone@example.com' });
    expect([missing.status, missing.body.error]).toEqual([400, 'body.password: is required']);
    const empty = await client.request('POST', '/api/auth/login', { body: 'null', headers: { 'content-type': 'application/json' } });
    expect([empty.status, empty.body.error]).toEqual([400, 'body: must be a JSON object, sent with Content-Type: application/json']);
    const asText = await client.request('POST', '/api/auth/login', { body: '{"email":"a@example.com","password":"x"}', headers: { 'content-type': 'text/plain' } });
    expect([asText.status, asText.body.error]).toEqual([400, 'body: must be a JSON object, sent with Content-Type: application/json']);
    const twice = await client.get('/api/files/some-file/thumbnail?v=1&v=2');
    expect([twice.status, twice.body.error]).toEqual([400, 'query.v: give this parameter once']);
    // A field of the wrong kind says what it takes.
    const nullPassword = await client.post('/api/auth/login', { email: 'someone@example.com', password: null });
    expect([nullPassword.status, nullPassword.body.error]).toEqual([400, 'body.password: must be a string, not null']);
    const numberEmail = await client.post('/api/auth/login', { email: 5, password: 'x' });
    expect([numberEmail.status, numberEmail.body.error]).toEqual([400, 'body.email: must be a string, not a number']);
  });

  it('never leaks a stack trace', async () => {
    const client = new Client(server.baseUrl);
    const responses = await Promise.all([
      client.request('POST', '/api/auth/login', { body: 'x'.repeat(2 * 1024 * 1024), headers: { 'content-type': 'application/json' } }),
      client.request('POST', '/api/auth/login', { body: '<xml/>', headers: { 'content-type': 'application/xml' } }),
      client.request('POST', '/api/auth/login', { body: '[1,2', headers: { 'content-type': 'application/json' } }),
      client.request('POST', '/api/auth/login', { json: { email: 5, password: null } }),
      client.request('PATCH', '/api/users/%E0%A4%A', {}),
    ]);
    for (const response of responses) {
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      expect(response.text).not.toMatch(/\bat \S+ \(|node_modules|\.ts:\d+/);
    }
    expect(responses.map((r) => r.status)).toEqual([413, 400, 400, 400, expect.any(Number)]);
  });
});
