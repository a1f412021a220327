import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * A method a known path does not have is a 405 naming the methods it has (Allow); a path with no
 * route at all stays a 404.
 */
describe('methods a path does not have', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  const call = async (method: string, path: string) => {
    const response = await fetch(server.baseUrl + path, { method, redirect: 'manual' });
    const text = await response.text();
    return { status: response.status, allow: response.headers.get('allow'), type: response.headers.get('content-type'), text, body: text ? JSON.parse(text) : undefined };
  };

  it.each([
    ['PATCH', '/api/urls', 'GET, POST', { success: false }],
    // Its GET and POST routes differ; the first route's shape (GET, ApiError).
    ['DELETE', '/api/files', 'GET, POST', { success: false }],
    ['PUT', '/api/auth/login', 'POST', { success: false }],
    ['GET', '/api/auth/login', 'POST', { success: false }],
    ['POST', '/api/health', 'GET', {}],
    ['PUT', '/api/files/some-id', 'PATCH, DELETE', { success: false }],
    ['POST', '/api/tokens/some-id', 'DELETE', { success: false }],
    ['POST', '/u/abc123', 'GET', {}],
  ])('%s %s is 405 with Allow: %s, in the route’s error shape', async (method, path, allow, shape) => {
    const response = await call(method, path);
    expect(response.status).toBe(405);
    expect(response.allow).toBe(allow);
    expect(response.type).toMatch(/^application\/json/);
    expect(response.body).toEqual({ ...shape, error: expect.stringContaining(method) });
    expect(Object.keys(response.body).sort()).toEqual(Object.keys({ ...shape, error: '' }).sort());
  });

  it('answers HEAD like GET where the path has GET, and 405 without a body where it does not', async () => {
    expect((await call('HEAD', '/api/health')).status).toBe(200);
    const refused = await call('HEAD', '/api/auth/login');
    expect(refused.status).toBe(405);
    expect(refused.allow).toBe('POST');
    expect(refused.text).toBe('');
  });

  it('answers OPTIONS on a known path with 204 and its methods', async () => {
    const response = await call('OPTIONS', '/api/urls');
    expect(response.status).toBe(204);
    expect(response.allow).toBe('GET, POST');
  });

  it.each([
    ['PATCH', '/api/no/such/route'],
    ['GET', '/api/no/such/route'],
    ['OPTIONS', '/api/no/such/route'],
    ['POST', '/api/urls/some-id/extra'],
  ])('keeps %s %s (no route at all) a 404', async (method, path) => {
    const response = await call(method, path);
    expect(response.status).toBe(404);
    expect(response.allow).toBeNull();
    expect(response.body).toEqual({ success: false, error: expect.any(String) });
  });

  it.each([
    ['a JSON body with fields', '{"a":1}'],
    ['a JSON body that is not JSON', '{"a":'],
  ])('answers a path with no route, or a method it does not have, by its 404 or 405 whatever it is sent: %s', async (_, body) => {
    const send = async (method: string, path: string) => {
      const response = await fetch(server.baseUrl + path, { method, body, headers: { 'content-type': 'application/json' } });
      return { status: response.status, allow: response.headers.get('allow') };
    };
    expect(await send('POST', '/api/nothing')).toEqual({ status: 404, allow: null });
    expect(await send('POST', '/api/files/some-id/download')).toEqual({ status: 405, allow: 'GET' });
  });
});
