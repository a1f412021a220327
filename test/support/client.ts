/**
 * A small HTTP client that behaves like a browser for cookies and Origin, or like a script when
 * given a bearer token.
 */
export interface Response<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  json?: unknown;
  body?: RequestInit['body'];
  headers?: Record<string, string>;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Override the Origin header a browser would send (null: send none). */
  origin?: string | null;
}

export class Client {
  readonly baseUrl: string;
  cookies = new Map<string, string>();

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl;
  }

  /** The `Cookie` header this client sends, for requests made with fetch() itself (bytes, streams). */
  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<Response<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.cookies.size > 0) headers.cookie = this.cookieHeader();
    const origin = options.origin === undefined ? this.baseUrl : options.origin;
    if (origin !== null && method !== 'GET' && method !== 'HEAD') headers.origin = origin;
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    let body = options.body;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    }
    const response = await fetch(this.baseUrl + path, { method, headers, body: body ?? null, redirect: 'manual' });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const index = pair!.indexOf('=');
      const name = pair!.slice(0, index);
      const value = pair!.slice(index + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(cookie)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await response.text();
    let parsed: unknown = undefined;
    if (text && (response.headers.get('content-type') ?? '').includes('json')) parsed = JSON.parse(text);
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }

  get<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, options);
  }
  post<T = any>(path: string, json?: unknown, options?: RequestOptions) {
    return this.request<T>('POST', path, { ...options, ...(json === undefined ? {} : { json }) });
  }
  patch<T = any>(path: string, json?: unknown, options?: RequestOptions) {
    return this.request<T>('PATCH', path, { ...options, ...(json === undefined ? {} : { json }) });
  }
  put<T = any>(path: string, json?: unknown, options?: RequestOptions) {
    return this.request<T>('PUT', path, { ...options, ...(json === undefined ? {} : { json }) });
  }
  delete<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('DELETE', path, options);
  }
}

let counter = 0;
export function uniqueEmail(prefix = 'user'): string {
  counter += 1;
  return `${prefix}${counter}-${Math.random().toString(36).slice(2, 8)}@example.test`;
}

/** Registers (or signs in) a browser client. */
export async function signUp(baseUrl: string, email = uniqueEmail(), password = 'correct horse battery'): Promise<Client & { email: string; password: string; userId: string }> {
  const client = new Client(baseUrl) as Client & { email: string; password: string; userId: string };
  const response = await client.post('/api/auth/register', { email, password });
  if (response.status !== 201) throw new Error(`sign-up failed: ${response.status} ${response.text}`);
  client.email = email;
  client.password = password;
  client.userId = response.body.data.user.id;
  return client;
}

/**
 * A client that speaks from the client address `ip` (X-Forwarded-For, for a server started with
 * TRUST_PROXY): the sign-in throttles count per address, so each browser of a test has its own.
 */
export function clientAt(baseUrl: string, ip: string): Client {
  const client = new Client(baseUrl);
  const request = client.request.bind(client);
  client.request = (method, path, options = {}) => request(method, path, { ...options, headers: { ...options.headers, 'x-forwarded-for': ip } });
  return client;
}
