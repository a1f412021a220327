import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client } from '../support/client.ts';
import { routePolicies, type RoutePolicy } from '../../src/auth/route-policy.ts';

// /api/openapi.json, generated from the routes' zod schemas and the route policy table
// (docs/architecture.md, "One definition of the API").

interface Operation {
  operationId?: string;
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ in: string; name: string; schema?: { pattern?: string; enum?: string[] } }>;
  requestBody?: { required?: boolean; content: Record<string, { schema?: { format?: string; properties?: Record<string, { format?: string }>; required?: string[] } }> };
  responses: Record<string, { description?: string; headers?: Record<string, unknown>; content?: Record<string, { schema?: unknown }> }>;
  'x-scope'?: string;
  'x-permission'?: string;
}
type Document = { openapi: string; webhooks?: Record<string, Record<string, Operation & { description?: string }>>; paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> } };

let server: TestServer;
let document: Document;
beforeAll(async () => {
  server = await startTestServer();
  const response = await new Client(server.baseUrl).get('/api/openapi.json');
  expect(response.status).toBe(200);
  document = response.body as Document;
});
afterAll(() => server.close());

/** `/api/files/:id` → `/api/files/{id}`, as the document writes paths. */
const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');
const operationOf = (policy: RoutePolicy) => document.paths[openApiPath(policy.path)]?.[policy.method.toLowerCase()];
const copy = <T>(value: T): T => structuredClone(value);

// Not under /api: the web app. The document describes every /api route (contract: "of every `/api`
// route"), itself and the reference page rendered from it included.
const undocumented = new Set(['/', '/app', '/app/*', '/assets/*', '/favicon.ico']);

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(document.openapi).toBe('3.1.0');
    await expect(SwaggerParser.validate(copy(document) as never)).resolves.toBeDefined();
  });

  it('is checked by a validator that does refuse a broken document', async () => {
    const broken = copy(document);
    broken.paths['/api/files']!.get!.responses = { '200': { content: 'not a media type map' } } as never;
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow();
  });

  it('documents every route of the API, with an answer of its own besides the errors', () => {
    const documented = routePolicies.filter((policy) => !undocumented.has(policy.path));
    expect(documented.length).toBeGreaterThan(50);
    for (const policy of documented) {
      const operation = operationOf(policy);
      expect(operation, `${policy.method} ${policy.path}`).toBeDefined();
      const own = Object.keys(operation!.responses).filter((status) => /^[123]/.test(status));
      expect(own, `${policy.method} ${policy.path}`).not.toEqual([]);
    }
  });

  it('gives every error answer the error body of the route policy table', () => {
    expect(document.components.schemas['Error']).toMatchObject({ type: 'object', required: ['error'] });
    expect(document.components.schemas['ApiError']).toMatchObject({ type: 'object', required: ['success', 'error'] });
    for (const policy of routePolicies.filter((p) => !undocumented.has(p.path))) {
      const operation = operationOf(policy)!;
      for (const status of ['4XX', '5XX']) {
        expect(operation.responses[status]?.content?.['application/json']?.schema, `${policy.method} ${policy.path} ${status}`).toEqual({ $ref: `#/components/schemas/${policy.errors}` });
      }
      // A route's own error statuses (a 404 with a page for a browser's form, a 416) too: the body
      // the route sends is the one its row names, and the serializer would drop any other field.
      for (const status of Object.keys(operation.responses).filter((status) => /^[45]\d\d$/.test(status))) {
        const json = operation.responses[status]?.content?.['application/json'];
        if (json) expect(json.schema, `${policy.method} ${policy.path} ${status}`).toEqual({ $ref: `#/components/schemas/${policy.errors}` });
      }
    }
  });

  it('gives each operation the credentials of its policy row, and the named-token routes their scope', () => {
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(['bearer', 'legacy', 'session']);
    for (const policy of routePolicies.filter((p) => !undocumented.has(p.path))) {
      const operation = operationOf(policy)!;
      const where = `${policy.method} ${policy.path}`;
      const { access } = policy;
      if (access.kind === 'api') {
        expect(operation.security, where).toEqual([{ bearer: [access.scope] }, { legacy: [] }, { session: [] }]);
        expect(operation['x-scope'], where).toBe(access.scope);
        expect(operation['x-permission'], where).toBe(access.permission);
      } else if (access.kind === 'session') {
        expect(operation.security, where).toEqual([{ session: [] }]);
        expect(operation['x-permission'], where).toEqual(access.permission);
      } else if (access.kind === 'sessionOrLegacy') {
        expect(operation.security, where).toEqual([{ session: [] }, { legacy: [] }]);
      } else if (access.kind === 'publicWithSession') {
        expect(operation.security, where).toEqual([{}, { session: [] }]);
      } else {
        expect(operation.security, where).toEqual([]);
      }
    }
  });

  it('describes the bodies of the upload routes, which are not JSON, and their header selectors', () => {
    // A client made from the document must be able to upload: the multipart form with its `file`
    // part and option fields, a chunk's raw bytes, and the profile and folder headers.
    const upload = document.paths['/api/files']!.post!;
    const form = upload.requestBody?.content['multipart/form-data']?.schema;
    expect(form?.required).toContain('file');
    expect(form?.properties?.['file']?.format).toBe('binary');
    for (const field of ['visibility', 'password', 'expiration', 'expiresAt', 'expiryAction', 'randomizeFileUrls', 'shareStyle', 'tagIds']) expect(Object.keys(form?.properties ?? {})).toContain(field);
    const part = document.paths['/api/files/chunks/{uploadId}/part/{partNumber}']!.put!;
    expect(part.requestBody?.content['application/octet-stream']?.schema?.format).toBe('binary');
    for (const operation of [upload, document.paths['/api/files/chunks']!.post!]) {
      const headers = (operation.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name.toLowerCase());
      expect(headers).toEqual(expect.arrayContaining(['x-upload-profile', 'x-upload-folder']));
    }
  });

  it('gives every operation a name of its own, for clients generated from it', () => {
    const names = Object.values(document.paths).flatMap((operations) => Object.values(operations).map((operation) => operation.operationId));
    expect(names.length).toBeGreaterThan(90);
    for (const name of names) expect(name).toMatch(/^[a-z][A-Za-z]+$/);
    expect(new Set(names).size).toBe(names.length);
    expect(document.paths['/api/files']!.get!.operationId).toBe('listFiles');
    expect(document.paths['/api/files/chunks/{uploadId}/part/{partNumber}']!.put!.operationId).toBe('uploadPart');
  });

  it('says what the shared error ranges mean, with Retry-After, a redirect\'s Location, and the form of whole-number and one-of parameters', () => {
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const where = `${method.toUpperCase()} ${path}`;
        expect(operation.responses['4XX']?.description, where).toMatch(/429 too many requests/);
        expect(Object.keys(operation.responses['4XX']?.headers ?? {}), where).toEqual(['Retry-After']);
        expect(Object.keys(operation.responses['5XX']?.headers ?? {}), where).toEqual(['Retry-After']);
        for (const [status, response] of Object.entries(operation.responses)) {
          if (/^3\d\d$/.test(status) && status !== '304') expect(Object.keys(response.headers ?? {}), `${where} ${status}`).toContain('Location');
          expect(response.description, `${where} ${status}`).not.toBe('Default Response');
        }
      }
    }
    const parameter = (path: string, method: string, name: string) => document.paths[path]![method]!.parameters!.find((p) => p.name === name)!.schema;
    expect(parameter('/api/files', 'get', 'page')).toMatchObject({ type: 'string', pattern: '^[1-9][0-9]*$' });
    expect(parameter('/api/files', 'get', 'limit')).toMatchObject({ pattern: '^[1-9][0-9]*$' });
    expect(parameter('/api/files', 'get', 'galleryDirection')).toMatchObject({ enum: ['next', 'previous'] });
    expect(parameter('/api/files/timeline', 'get', 'groupBy')).toMatchObject({ enum: ['none', 'month', 'week', 'year'] });
    expect(parameter('/api/files/chunks/{uploadId}/part/{partNumber}', 'put', 'uploadId')).toMatchObject({ pattern: '^[a-z0-9]{1,100}$' });
    expect(parameter('/api/files/chunks/{uploadId}/part/{partNumber}', 'get', 'partNumber')).toMatchObject({ pattern: '^[1-9][0-9]*$' });
    expect(parameter('/api/files/chunks', 'get', 'uploadId')).toMatchObject({ pattern: '^[a-z0-9]{1,100}$' });
    expect(parameter('/api/files/chunks', 'get', 'partNumber')).toMatchObject({ pattern: '^[1-9][0-9]*$' });
    const visibility = new RegExp(parameter('/api/files', 'get', 'visibility')!.pattern!);
    for (const value of ['public', 'private,hasPassword', 'hasPassword,public,private', 'public, private']) expect(value).toMatch(visibility);
    for (const value of ['', 'secret', 'public,', 'PUBLIC']) expect(value).not.toMatch(visibility);
    // Bodies whose every field has its default may be left out; the others are required.
    const bodyRequired = (path: string, method: string) => document.paths[path]![method]!.requestBody!.required;
    for (const [path, method] of [['/api/invites', 'post'], ['/api/auth/passkey/options', 'post'], ['/api/archives/{fileId}/extract', 'post'], ['/api/share/{urlId}/{name}/archive', 'post']] as const) expect(bodyRequired(path, method), path).toBe(false);
    for (const [path, method] of [['/api/urls', 'post'], ['/api/files/{id}', 'patch'], ['/api/archives', 'post']] as const) expect(bodyRequired(path, method), path).toBe(true);
    expect(JSON.stringify(document)).not.toContain('x-optional-body');
    // The share page's password form posts urlencoded.
    expect(Object.keys(document.paths['/api/files/{id}/unlock']!.post!.requestBody!.content).sort()).toEqual(['application/json', 'application/x-www-form-urlencoded']);
    // The archive routes refuse API credentials, the share page's public ones too (contract §9).
    for (const policy of routePolicies.filter((p) => p.archive)) expect((operationOf(policy) as { description?: string }).description, policy.path).toMatch(/Authorization header gets the generic 401/);
    // What adds a way into the account says it needs a recent sign-in, and its 403.
    const recent = routePolicies.filter((p) => p.recentSignIn);
    expect(recent.map((p) => `${p.method} ${p.path}`).sort()).toEqual(['POST /api/auth/passkeys', 'POST /api/auth/passkeys/options', 'POST /api/auth/totp/enable', 'POST /api/auth/totp/setup']);
    for (const policy of recent) expect((operationOf(policy) as { description?: string }).description, policy.path).toMatch(/POST \/api\/auth\/confirm, within the last hour: else 403/);
    const shorten = document.paths['/api/urls']!.post!.requestBody!.content['application/json']!.schema!.properties!['url'] as { maxLength?: number };
    expect(shorten.maxLength).toBe(2048);
  });

  it("describes the file.ready event a webhook receives: its body, its signing headers and what an answer means", () => {
    const event = document.webhooks?.['file.ready']?.post;
    expect(event?.requestBody?.content['application/json']?.schema).toEqual({ $ref: '#/components/schemas/FileReadyEvent' });
    expect((event?.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name)).toEqual(expect.arrayContaining(['webhook-id', 'webhook-timestamp', 'webhook-signature']));
    expect(event?.description).toMatch(/HMAC-SHA256/);
    expect(Object.keys(event?.responses ?? {})).toEqual(['2XX', 'default']);
    const schema = document.components.schemas['FileReadyEvent'] as { required: string[]; properties: { data: { required: string[]; properties: Record<string, { type?: unknown }> } } };
    expect(schema.required).toEqual(expect.arrayContaining(['version', 'id', 'type', 'occurredAt', 'data']));
    expect(schema.properties.data.required.sort()).toEqual(['folderId', 'hasPassword', 'id', 'mimeType', 'name', 'rawUrl', 'size', 'url', 'visibility']);
    expect(schema.properties.data.properties['size']!.type).toBe('integer');
  });

  it('names its records once, as components, and lists no component nothing refers to', () => {
    const text = JSON.stringify([document.paths, document.webhooks]);
    for (const name of Object.keys(document.components.schemas)) {
      const referenced = text.includes(`"#/components/schemas/${name}"`) || JSON.stringify(document.components.schemas).includes(`"#/components/schemas/${name}"`);
      expect(referenced, name).toBe(true);
    }
  });
});
