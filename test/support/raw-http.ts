import http from 'node:http';
import net from 'node:net';
import type { Readable } from 'node:stream';

/** A response read off a raw connection. */
export interface RawResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
  /** `body` parsed, when the response says it is JSON. */
  json: any;
}

/**
 * One TCP connection to a test server, for what fetch cannot do: send a request a few bytes at a
 * time, stop half-way, send malformed bytes, or hold a connection open.
 */
export class RawConnection {
  readonly socket: net.Socket;
  /** Resolves when the connection is closed (by either side). */
  readonly closed: Promise<void>;
  private received = Buffer.alloc(0);
  private waiters: Array<() => void> = [];

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.on('data', (data) => {
      this.received = Buffer.concat([this.received, data]);
      this.notify();
    });
    // A reset after the server's answer is expected when it closes a connection the client still writes to.
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    void this.closed.then(() => this.notify());
  }

  static open(baseUrl: string): Promise<RawConnection> {
    const { hostname, port } = new URL(baseUrl);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(port), hostname, () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  get isClosed(): boolean {
    return this.socket.destroyed || this.socket.readableEnded;
  }

  /** Writes and waits until the bytes are handed to the operating system. */
  send(data: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(data, (error) => (error ? reject(error) : resolve())));
  }

  /** Everything received so far. */
  text(): string {
    return this.received.toString('utf8');
  }

  /** The first complete response received, if there is one. */
  response(): RawResponse | null {
    const end = this.received.indexOf('\r\n\r\n');
    if (end < 0) return null;
    const [statusLine, ...lines] = this.received.subarray(0, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    const rest = this.received.subarray(end + 4);
    if (rest.length < length) return null;
    const body = rest.subarray(0, length).toString('utf8');
    const json = (headers['content-type'] ?? '').includes('json') && body ? JSON.parse(body) : undefined;
    return { status: Number(statusLine!.split(' ')[1]), headers, body, json };
  }

  /** Waits for the first complete response; fails when the connection closes without one. */
  async nextResponse(): Promise<RawResponse> {
    for (;;) {
      const response = this.response();
      if (response) return response;
      if (this.isClosed) throw new Error(`connection closed without a complete response; received: ${JSON.stringify(this.text().slice(0, 300))}`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  destroy(): void {
    this.socket.destroy();
  }

  private notify(): void {
    const waiting = this.waiters;
    this.waiters = [];
    for (const wake of waiting) wake();
  }
}

/** The head of an HTTP/1.1 request with the given extra header lines. */
export function requestHead(method: string, target: string, host: string, headers: Record<string, string | number> = {}): string {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `${method} ${target} HTTP/1.1\r\nHost: ${host}\r\n${lines.join('')}\r\n`;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An answer read by sendRequest(). */
export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** `text` parsed, when the response says it is JSON. */
  body: any;
  text: string;
}

export interface SendOptions {
  /** Receives the body of a 200 instead of `text`, for large downloads. */
  sink?: (chunk: Buffer) => void;
  /**
   * The server may answer before the whole body is sent and close the connection (a refused
   * upload): a broken pipe or reset while sending is then no failure of the request.
   */
  earlyAnswer?: boolean;
}

/**
 * One request on its own connection (no agent, no pooling). A body may be a stream, sent without a
 * length unless the headers give one, even one that never ends. Rejects if the connection dies.
 */
export function sendRequest(url: string, method: string, headers: Record<string, string>, body?: Buffer | Readable, options: SendOptions = {}): Promise<HttpAnswer> {
  const { sink, earlyAnswer = false } = options;
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => (sink && response.statusCode === 200 ? sink(chunk) : chunks.push(chunk)));
      response.on('error', reject);
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const json = /json/.test(String(response.headers['content-type'] ?? '')) && text !== '';
        resolve({ status: response.statusCode!, headers: response.headers, body: json ? JSON.parse(text) : undefined, text });
        request.destroy();
      });
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (earlyAnswer && (error.code === 'EPIPE' || error.code === 'ECONNRESET')) return;
      reject(error);
    });
    if (body === undefined) request.end();
    else if (Buffer.isBuffer(body)) request.end(body);
    else body.pipe(request);
  });
}
