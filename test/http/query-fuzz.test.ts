import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';
import { uploadFile } from '../support/uploads.ts';

/**
 * Every query parameter of every GET route, as the OpenAPI document lists them, given values no
 * client should send (empty, repeated, huge, negative, fractional, control and astral characters,
 * stray percent signs), in an administrator's browser session with a few files: never a 5xx.
 */
let server: TestServer;
let admin: Awaited<ReturnType<typeof signUp>>;
beforeAll(async () => {
  server = await startTestServer({ UPLOAD_RATE_LIMIT: '0' });
  admin = await signUp(server.baseUrl);
  for (const name of ['one.txt', 'two.png', 'three.zip']) expect((await uploadFile(admin, name, `${name}\n`)).status).toBe(200);
});
afterAll(() => server.close());

const junk = ['', ' ', '-1', '0', '1.5', '1e309', '99999999999999999999', 'NaN', 'null', 'true', '[]', '{}', '%00', '%', '%zz', '%F0%9F%92%A9', '%ED%A0%80', 'a'.repeat(5000), ',,,', '2026-13-45T99:99:99Z', 'Europe/Nowhere', '+05:30'];

it('answers junk query values on every GET route without a 5xx', async () => {
  const document = (await new Client(server.baseUrl).get('/api/openapi.json')).body as { paths: Record<string, Record<string, { parameters?: Array<{ in: string; name: string }> }>> };
  const failures: string[] = [];
  let asked = 0;
  for (const [path, methods] of Object.entries(document.paths)) {
    const names = (methods.get?.parameters ?? []).filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name);
    const concrete = path.replace(/\{[^}]+\}/g, 'nothing-here');
    for (const name of names) {
      for (const value of junk) {
        // Raw, not encoded again: `%zz` and a lone surrogate's bytes reach the server as they are.
        for (const query of [`${name}=${value}`, `${name}=${value}&${name}=${value}`, `${name}[]=${value}`, `${name}`]) {
          asked += 1;
          const answer = await admin.get(`${concrete}?${query}`);
          if (answer.status >= 500) failures.push(`GET ${concrete}?${query.slice(0, 80)} → ${answer.status} ${answer.text.slice(0, 160)}`);
        }
      }
    }
  }
  expect(asked).toBeGreaterThan(1000);
  expect(failures).toEqual([]);
}, 300_000);
