/**
 * The one way the app talks to the server: same-origin fetch with the session cookie. The browser
 * adds the Origin header to state-changing requests itself, which the server requires (contract §2).
 */

import { describeFailure } from './format.ts';

export class ApiError extends Error {
  readonly status: number;
  /** Seconds, from a Retry-After header (429, 503, and 409s that pass). */
  readonly retryAfter: number | null;
  constructor(status: number, message: string, retryAfter: number | null = null) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

/** Fired when a request that needs the session answers 401: the session ended. */
export const UNAUTHORIZED_EVENT = 'hoard:unauthorized';

export interface RawResponse {
  status: number;
  headers: Headers;
  body: any;
}

export function retryAfterOf(headers: { get(name: string): string | null }): number | null {
  const value = headers.get('retry-after');
  if (!value) return null;
  const seconds = Number(value);
  return Number.isFinite(seconds) ? seconds : null;
}

export async function request(method: string, path: string, options: { json?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<RawResponse> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  let body: string | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  const init: RequestInit = { method, headers, credentials: 'same-origin', cache: 'no-store' };
  if (body !== undefined) init.body = body;
  if (options.signal) init.signal = options.signal;
  const response = await fetch(path, init);
  const text = await response.text();
  let parsed: unknown = undefined;
  if (text && (response.headers.get('content-type') ?? '').includes('json')) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  if (!response.ok) {
    const retryAfter = retryAfterOf(response.headers);
    if (response.status === 401 && !path.startsWith('/api/auth/')) window.dispatchEvent(new Event(UNAUTHORIZED_EVENT));
    throw new ApiError(response.status, describeFailure(response.status, parsed, retryAfter), retryAfter);
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

/** The `data` of a success body (or the body itself for routes without the wrapper). */
export async function api<T>(method: string, path: string, json?: unknown, headers?: Record<string, string>): Promise<T> {
  const response = await request(method, path, { ...(json === undefined ? {} : { json }), ...(headers ? { headers } : {}) });
  const body = response.body as { data?: T } | undefined;
  if (body && typeof body === 'object' && 'data' in body) return body.data as T;
  return body as T;
}

export const get = <T>(path: string) => api<T>('GET', path);
export const post = <T>(path: string, json?: unknown) => api<T>('POST', path, json);
export const patch = <T>(path: string, json?: unknown) => api<T>('PATCH', path, json);
export const put = <T>(path: string, json?: unknown) => api<T>('PUT', path, json);
export const del = (path: string, json?: unknown) => api<void>('DELETE', path, json);

/** A query string from the defined, non-empty values. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === '') continue;
    search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}
