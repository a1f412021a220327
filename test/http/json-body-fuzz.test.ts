import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';

/**
 * Every route that takes a JSON body, as the OpenAPI document lists them, given bodies no client
 * should send (not an object, wrong types in every common field, JSON nested deep, prototype
 * keys), in an administrator's browser session: never a 5xx. Most are a 400; the few that happen
 * to be valid (an empty object where every field is optional) are answered as such. Path
 * parameters name nothing.
 */
let server: TestServer;
let admin: Awaited<ReturnType<typeof signUp>>;
beforeAll(async () => {
  server = await startTestServer({ UPLOAD_RATE_LIMIT: '0' });
  admin = await signUp(server.baseUrl);
});
afterAll(() => server.close());

const junk: unknown[] = [
  null,
  [],
  'text',
  5,
  true,
  {},
  { unknown: 1 },
  [{}],
  { name: null, email: 5, password: {}, id: [], url: {}, parts: 'x', paths: [null], fileIds: [5], ids: {}, expiresAt: 1e308, visibility: 'NOBODY', tagIds: 'a', folderId: 7, subfolders: 'yes', scopes: {}, permissions: [1], code: [] },
  JSON.parse('{"__proto__": {"admin": true}, "constructor": {"prototype": {}}}'),
  JSON.parse(`{"a": ${'['.repeat(40)}${']'.repeat(40)}}`),
];

it('answers junk JSON bodies on every route that takes one without a 5xx', async () => {
  const document = (await new Client(server.baseUrl).get('/api/openapi.json')).body as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> } }>> };
  const routes = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, operation]) => operation.requestBody !== undefined && 'application/json' in operation.requestBody.content)
      .map(([method]) => ({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, 'nothing-here') })),
  );
  expect(routes.length).toBeGreaterThan(30);
  let client: Client = admin;
  const failures: string[] = [];
  for (const { method, path } of routes) {
    for (const body of junk) {
      const answer = await client.request(method, path, { json: body });
      if (answer.status >= 500 || answer.status < 200) failures.push(`${method} ${path} ${JSON.stringify(body)?.slice(0, 60)} → ${answer.status} ${answer.text.slice(0, 160)}`);
      // A body that a sign-out route takes ends the session: the next route gets a new one.
      if (answer.status === 401 && (await client.get('/api/auth/me')).status === 401) {
        client = new Client(server.baseUrl);
        expect((await client.post('/api/auth/login', { email: admin.email, password: admin.password })).status).toBe(200);
      }
    }
  }
  expect(failures).toEqual([]);
});
