import { expect } from 'vitest';
import { Client, uniqueEmail, type Response } from './client.ts';

export interface UploadOptions {
  /** Defaults to text/plain. */
  type?: string;
  fields?: Record<string, string>;
  /** Fields sent after the file part instead of before it. */
  fieldsAfter?: Record<string, string>;
  headers?: Record<string, string>;
  query?: string;
  /** Bearer credential; without it the client's session cookie is used. */
  token?: string;
}

/** POST /api/files as multipart/form-data with one part named `file`. */
export function uploadFile(client: Client, name: string, content: string | Uint8Array, options: UploadOptions = {}): Promise<Response> {
  const form = new FormData();
  for (const [key, value] of Object.entries(options.fields ?? {})) form.append(key, value);
  const bytes = typeof content === 'string' ? new TextEncoder().encode(content) : content;
  form.append('file', new Blob([bytes as Uint8Array<ArrayBuffer>], { type: options.type ?? 'text/plain' }), name);
  for (const [key, value] of Object.entries(options.fieldsAfter ?? {})) form.append(key, value);
  return client.request('POST', `/api/files${options.query ? `?${options.query}` : ''}`, {
    body: form,
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.token ? { token: options.token } : {}),
  });
}

/** A minimal valid PNG (1×1 pixel). */
export const PNG_1X1 = Uint8Array.from(
  Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64'),
);

/**
 * An account an administrator creates (with a quota in bytes, or none), signed in (`session`),
 * with a files:upload token and a client without cookies to send it from (`scripted`).
 */
export async function uploadingMember(admin: Client, quotaBytes: number | null, prefix = 'member') {
  const email = uniqueEmail(prefix);
  const password = 'correct horse battery';
  const created = await admin.post('/api/users', { email, password, emailVerified: true });
  expect(created.status, created.text).toBe(201);
  const userId = created.body.data.user.id as string;
  if (quotaBytes !== null) expect((await admin.patch(`/api/users/${userId}`, { quotaBytes })).status).toBe(200);
  const session = new Client(admin.baseUrl);
  expect((await session.post('/api/auth/login', { email, password })).status).toBe(200);
  return { userId, session, token: await createToken(session, ['files:upload']), scripted: new Client(admin.baseUrl) };
}

/** Creates a named token through the API and returns its secret. */
export async function createToken(session: Client, scopes: string[], extra: Record<string, unknown> = {}): Promise<string> {
  const response = await session.post('/api/tokens', { name: `test ${scopes.join(' ')}`, scopes, ...extra });
  if (response.status !== 201) throw new Error(`token creation failed: ${response.status} ${response.text}`);
  return response.body.data.secret;
}

/**
 * POST /api/files with a bearer credential and a body held open after its first bytes until
 * `release` is called: an upload whose credential or account can be changed while it arrives.
 * `begun` resolves once the first bytes are sent (the server may not have read them yet).
 */
export function heldUpload(baseUrl: string, credential: string): { answer: Promise<globalThis.Response>; begun: Promise<void>; release: () => void } {
  const boundary = 'heldboundary';
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const begun = new Promise<void>((resolve) => (started = resolve));
  let step = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      step++;
      if (step === 1) {
        controller.enqueue(new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="held.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`));
        controller.enqueue(new Uint8Array(64 * 1024).fill(7));
        started();
        return;
      }
      await released;
      controller.enqueue(new Uint8Array(64 * 1024).fill(8));
      controller.enqueue(new TextEncoder().encode(`\r\n--${boundary}--\r\n`));
      controller.close();
    },
  });
  const answer = fetch(`${baseUrl}/api/files`, { method: 'POST', body, duplex: 'half', headers: { authorization: `Bearer ${credential}`, 'content-type': `multipart/form-data; boundary=${boundary}` } } as RequestInit);
  return { answer, begun, release };
}

/**
 * With a bearer token: starts a chunked upload of `size` bytes named `filename` and sends `part` as
 * its part 1. Answers the session's ID and the part list a completion sends.
 */
export async function chunkedWithFirstPart(baseUrl: string, token: string, filename: string, size: number, part: Buffer): Promise<{ uploadId: string; parts: Array<{ PartNumber: number; ETag: string }> }> {
  const script = new Client(baseUrl);
  const started = await script.post('/api/files/chunks', { filename, size }, { token });
  expect(started.status, started.text).toBe(200);
  const uploadId = (started.body as { data: { uploadId: string } }).data.uploadId;
  const sent = await script.request('PUT', `/api/files/chunks/${uploadId}/part/1`, { token, body: part, headers: { 'content-type': 'application/octet-stream' } });
  expect(sent.status, sent.text).toBe(200);
  return { uploadId, parts: [{ PartNumber: 1, ETag: (sent.body as { data: { etag: string } }).data.etag }] };
}
