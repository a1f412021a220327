import type { Client, Response } from './client.ts';

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

/** Creates a named token through the API and returns its secret. */
export async function createToken(session: Client, scopes: string[], extra: Record<string, unknown> = {}): Promise<string> {
  const response = await session.post('/api/tokens', { name: `test ${scopes.join(' ')}`, scopes, ...extra });
  if (response.status !== 201) throw new Error(`token creation failed: ${response.status} ${response.text}`);
  return response.body.data.secret;
}
