import http from 'node:http';
import autocannon from 'autocannon';
import { cpuSecondsOf } from './child.ts';
import { median, round } from './stats.ts';

export interface RateResult {
  requestsPerSecond: number;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  non2xx: number;
  errors: number;
  seconds: number;
  /** CPU time the server process used per successful request (user + system), when its pid was given. */
  serverCpuMicrosPerRequest: number | null;
}

/**
 * Requests per second at `connections` concurrent keep-alive connections for `seconds` (after a short
 * warm-up run that is not counted): successful responses divided by the run's duration.
 */
export async function requestRate(url: string, options: { connections: number; seconds: number; warmupSeconds: number; headers?: Record<string, string>; serverPid?: number }): Promise<RateResult> {
  const common = { url, connections: options.connections, headers: options.headers ?? {}, timeout: 30 };
  if (options.warmupSeconds > 0) await autocannon({ ...common, duration: options.warmupSeconds });
  const cpuBefore = options.serverPid ? cpuSecondsOf(options.serverPid) : NaN;
  const result = await autocannon({ ...common, duration: options.seconds });
  const cpu = options.serverPid ? cpuSecondsOf(options.serverPid) - cpuBefore : NaN;
  const ok = result['2xx'];
  if (ok === 0) throw new Error(`${url}: no successful response (${result.non2xx} non-2xx, ${result.errors} errors)`);
  return {
    requestsPerSecond: ok / result.duration,
    requests: ok,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    non2xx: result.non2xx,
    errors: result.errors,
    seconds: result.duration,
    serverCpuMicrosPerRequest: Number.isFinite(cpu) ? Math.round((cpu / ok) * 1e6) : null,
  };
}

/** Sequential requests over one keep-alive connection: median and p99 of the response time in ms. */
export async function latency(url: string, options: { runs: number; warmup: number; headers?: Record<string, string> }): Promise<{ medianMs: number; p99Ms: number; samples: number[] }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const once = () =>
    new Promise<number>((resolve, reject) => {
      const started = performance.now();
      http
        .get(url, { agent, headers: options.headers }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (c: Buffer) => chunks.push(c));
          response.on('end', () => {
            if (response.statusCode !== 200) reject(new Error(`${url}: HTTP ${response.statusCode} ${Buffer.concat(chunks).toString().slice(0, 300)}`));
            else resolve(performance.now() - started);
          });
        })
        .on('error', reject);
    });
  try {
    for (let i = 0; i < options.warmup; i++) await once();
    const samples: number[] = [];
    for (let i = 0; i < options.runs; i++) samples.push(await once());
    const sorted = [...samples].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
    return { medianMs: median(samples), p99Ms: at(0.99), samples: samples.map((s) => round(s)) };
  } finally {
    agent.destroy();
  }
}

/** One GET, parsed as JSON (for checking what a benchmarked URL answers). */
export async function getJson(url: string, headers: Record<string, string>): Promise<any> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}
