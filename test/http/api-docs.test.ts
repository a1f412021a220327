import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client } from '../support/client.ts';

let server: TestServer;
let client: Client;
beforeAll(async () => {
  server = await startTestServer();
  client = new Client(server.baseUrl);
});
afterAll(() => server.close());

/** Every `<script src>` and `<link href>` of a page, resolved against the page's URL. */
function assetUrls(html: string, pageUrl: string): URL[] {
  const references = [...html.matchAll(/<script\b[^>]*\ssrc="([^"]*)"/gi), ...html.matchAll(/<link\b[^>]*\shref="([^"]*)"/gi)];
  return references.map((match) => new URL(match[1]!, pageUrl));
}

/** The CSP's directives, by name. */
function directives(policy: string): Map<string, string[]> {
  return new Map(policy.split(';').map((part) => part.trim().split(/\s+/)).map(([name, ...sources]) => [name!, sources]));
}

describe('the API reference at /api/docs', () => {
  it('sends /api/docs to the page, which answers HTML without authentication', async () => {
    const redirect = await client.get('/api/docs');
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/api/docs/');

    const page = await client.get('/api/docs/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.text).toMatch(/<title>Hoard API reference<\/title>/);
    // Rendered from the document /api/openapi.json serves, not a copy of it.
    expect(page.text).toContain('"url": "/api/openapi.json"');
    const document = await client.get('/api/openapi.json');
    expect(document.status).toBe(200);
    expect(document.body.paths['/api/files']).toBeDefined();
  });

  it('serves every script and stylesheet of the page itself and references no other host', async () => {
    const pageUrl = `${server.baseUrl}/api/docs/`;
    const page = await client.get('/api/docs/');
    const assets = assetUrls(page.text, pageUrl);
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) {
      expect(asset.origin, asset.href).toBe(server.baseUrl);
      const response = await client.get(asset.pathname);
      expect(response.status, asset.href).toBe(200);
      expect(response.headers.get('x-content-type-options'), asset.href).toBe('nosniff');
      if (asset.pathname.endsWith('.js')) expect(response.headers.get('content-type')).toMatch(/^application\/javascript/);
    }
    expect(page.text).not.toMatch(/(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i);
  });

  it('allows only this server and the page’s own inline script under its Content-Security-Policy', async () => {
    const page = await client.get('/api/docs/');
    const policy = directives(page.headers.get('content-security-policy') ?? '');
    expect(policy.get('default-src')).toEqual(["'none'"]);
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
    // No source anywhere in the policy names another host or a scheme (https:, *).
    for (const [name, sources] of policy) {
      for (const source of sources) expect(source, name).toMatch(/^('self'|'none'|'unsafe-inline'|'sha256-[A-Za-z0-9+/=]+'|data:)$/);
    }
    expect(policy.get('script-src')).not.toContain("'unsafe-inline'");
    expect(policy.get('script-src')).not.toContain("'unsafe-eval'");
    // Exactly the page's inline scripts are allowed, by hash.
    const inline = [...page.text.matchAll(/<script\b(?![^>]*\ssrc=)[^>]*>([\s\S]*?)<\/script>/gi)].map((match) => `'sha256-${createHash('sha256').update(match[1]!).digest('base64')}'`);
    expect(inline.length).toBeGreaterThan(0);
    expect(policy.get('script-src')).toEqual(["'self'", ...inline]);
  });

  it('sends its 5 MB script compressed once and then answers a revalidation with 304', async () => {
    const url = `${server.baseUrl}/api/docs/js/scalar.js`;
    const plain = await fetch(url, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.status).toBe(200);
    const plainText = await plain.text();
    expect(plain.headers.get('content-encoding')).toBeNull();

    // fetch() would inflate a compressed body itself; node:http shows the bytes as sent.
    const { request } = await import('node:http');
    const compressed = await new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
      request(url, { headers: { 'accept-encoding': 'gzip, deflate, br' } }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
      }).on('error', reject).end();
    });
    expect(compressed.status).toBe(200);
    expect(compressed.headers['content-encoding']).toBe('gzip');
    expect(compressed.headers['vary']).toMatch(/accept-encoding/i);
    expect(compressed.body.length).toBeLessThan(Buffer.byteLength(plainText) / 3);
    const { gunzipSync } = await import('node:zlib');
    expect(gunzipSync(compressed.body).toString()).toBe(plainText);

    const etag = plain.headers.get('etag');
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(compressed.headers['etag']).toBe(etag);
    expect(plain.headers.get('cache-control')).toBe('no-cache');
    const again = await fetch(url, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    // No length but that of the bytes (RFC 9110 §8.6), for HEAD as for GET.
    expect(again.headers.get('content-length')).toBeNull();
    const head = await fetch(url, { method: 'HEAD', headers: { 'if-none-match': etag! } });
    expect([head.status, head.headers.get('content-length')]).toEqual([304, null]);
    // The header is a list, compared weakly (RFC 9110 §13.1.2): a proxy that compressed the bundle
    // and weakened the tag it kept still revalidates.
    const weakened = await fetch(url, { headers: { 'if-none-match': `"older", W/${etag}` } });
    expect(weakened.status).toBe(304);
    expect((await fetch(url, { headers: { 'if-none-match': '"older"' } })).status).toBe(200);
  });

  it('describes its own routes in the OpenAPI document, as every /api route', async () => {
    const document = await client.get('/api/openapi.json');
    expect(Object.keys(document.body.paths).filter((path) => path.startsWith('/api/docs')).sort()).toEqual(['/api/docs', '/api/docs/', '/api/docs/js/scalar.js']);
  });
});
