import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export const MiB = 1024 * 1024;
export const GiB = 1024 * MiB;

/** 1 MiB of random bytes, reused for every body: the bytes are generated as they are sent, never held whole. */
const pattern = randomBytes(MiB);

/** A stream of `size` bytes (the pattern repeated), produced on demand. */
export function generatedBytes(size: number): Readable {
  let sent = 0;
  return new Readable({
    highWaterMark: MiB,
    read() {
      if (sent >= size) return void this.push(null);
      const n = Math.min(pattern.length, size - sent);
      sent += n;
      this.push(n === pattern.length ? pattern : pattern.subarray(0, n));
    },
  });
}

/** A multipart/form-data body with one part named `file`, streamed; its exact length is known up front. */
export function multipartBody(size: number, fileName: string, contentType = 'application/octet-stream') {
  const boundary = `----hoardbench${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: ${contentType}\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  async function* parts(): AsyncGenerator<Buffer> {
    yield head;
    yield* generatedBytes(size) as AsyncIterable<Buffer>;
    yield tail;
  }
  return { contentType: `multipart/form-data; boundary=${boundary}`, length: head.length + size + tail.length, stream: () => Readable.from(parts(), { objectMode: false }) };
}

export interface HttpResult {
  status: number;
  body: string;
}

/** One request with a streamed body (or none), reading the whole answer. */
export function send(url: string, options: { method: string; headers?: Record<string, string | number>; body?: Readable | Buffer | string; agent?: http.Agent; onBodySent?: () => void }): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: options.method, headers: options.headers, agent: options.agent ?? false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    request.on('error', reject);
    const body = options.body;
    if (body === undefined) request.end();
    else if (typeof body === 'string' || Buffer.isBuffer(body)) request.end(body);
    else pipeline(body, request).then(() => options.onBodySent?.(), reject);
  });
}

function expect(result: HttpResult, status: number[], what: string): any {
  if (!status.includes(result.status)) throw new Error(`${what}: HTTP ${result.status} ${result.body.slice(0, 500)}`);
  return result.body ? JSON.parse(result.body) : null;
}

/** POST of `size` bytes as multipart to `url`; seconds from the first byte sent to the last byte of the answer. */
export async function timedMultipartUpload(url: string, size: number, headers: Record<string, string> = {}, fileName = 'big-upload.bin', contentType = 'application/octet-stream'): Promise<{ seconds: number; bodySentSeconds: number; response: any }> {
  const body = multipartBody(size, fileName, contentType);
  const started = performance.now();
  let sent = NaN;
  const result = await send(url, { method: 'POST', headers: { ...headers, 'content-type': body.contentType, 'content-length': body.length }, body: body.stream(), onBodySent: () => (sent = performance.now()) });
  const ended = performance.now();
  // The time from the last byte sent to the answer is what the server does after receiving (fsync, commit).
  return { seconds: (ended - started) / 1000, bodySentSeconds: (sent - started) / 1000, response: expect(result, [200, 201], `POST ${url}`) };
}

/**
 * A chunked upload end to end, as a client does it: init, the parts one after another, completion.
 * Returns the total seconds and how long the completion alone took.
 */
export async function timedChunkedUpload(base: string, token: string, size: number, partSize: number): Promise<{ seconds: number; completeSeconds: number; partsSeconds: number; response: any }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const auth = { authorization: `Bearer ${token}` };
  try {
    const started = performance.now();
    const init = expect(
      await send(`${base}/api/files/chunks`, { method: 'POST', agent, headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ filename: 'chunked-upload.bin', mimeType: 'application/octet-stream', size }) }),
      [200, 201],
      'chunked init',
    );
    const uploadId = init.data.uploadId as string;
    const parts: Array<{ PartNumber: number; ETag: string }> = [];
    const partsStarted = performance.now();
    for (let offset = 0, number = 1; offset < size; offset += partSize, number++) {
      const length = Math.min(partSize, size - offset);
      const answer = expect(
        await send(`${base}/api/files/chunks/${uploadId}/part/${number}`, { method: 'PUT', agent, headers: { ...auth, 'content-type': 'application/octet-stream', 'content-length': length }, body: generatedBytes(length) }),
        [200, 201],
        `part ${number}`,
      );
      parts.push({ PartNumber: number, ETag: answer.data.etag });
    }
    const completeStarted = performance.now();
    const response = expect(
      await send(`${base}/api/files/chunks/${uploadId}/complete`, { method: 'POST', agent, headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ parts }) }),
      [200, 201],
      'chunked completion',
    );
    const ended = performance.now();
    return { seconds: (ended - started) / 1000, completeSeconds: (ended - completeStarted) / 1000, partsSeconds: (completeStarted - partsStarted) / 1000, response };
  } finally {
    agent.destroy();
  }
}

/**
 * `concurrency` clients each uploading small files back to back over keep-alive connections for
 * `seconds`; every file has its own name, as screenshots do. Returns files per second and latencies.
 */
export async function smallFileUploads(
  base: string,
  token: string,
  /** `content`: the bytes of every upload (default `size` random bytes), sent as `name` (numbered) and `type`. */
  options: { size: number; concurrency: number; seconds: number; warmupSeconds: number; content?: Buffer; name?: string; type?: string },
) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  const content = options.content ?? randomBytes(options.size);
  const [stem, extension] = options.name ? [options.name.replace(/\.[^.]*$/, ''), options.name.slice(options.name.lastIndexOf('.'))] : ['screenshot', '.bin'];
  const type = options.type ?? 'application/octet-stream';
  let sequence = 0;
  const latencies: number[] = [];
  let failures = 0;
  let measuring = false;
  let counted = 0;
  const boundary = `----hoardbench${randomBytes(12).toString('hex')}`;
  const one = async () => {
    const name = `${stem}-${++sequence}${extension}`;
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${type}\r\n\r\n`),
      content,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const started = performance.now();
    const result = await send(`${base}/api/files`, {
      method: 'POST',
      agent,
      headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': body.length },
      body,
    });
    const elapsed = performance.now() - started;
    if (result.status !== 200 && result.status !== 201) {
      failures++;
      if (failures === 1) console.error(`small upload failed: HTTP ${result.status} ${result.body.slice(0, 300)}`);
      return;
    }
    if (measuring) {
      counted++;
      latencies.push(elapsed);
    }
  };
  let stop = false;
  const workers = Array.from({ length: options.concurrency }, async () => {
    while (!stop) await one();
  });
  await new Promise((resolve) => setTimeout(resolve, options.warmupSeconds * 1000));
  measuring = true;
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, options.seconds * 1000));
  measuring = false;
  const seconds = (performance.now() - started) / 1000;
  stop = true;
  await Promise.all(workers);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { filesPerSecond: counted / seconds, files: counted, failures, p50Ms: at(0.5), p99Ms: at(0.99) };
}
