import http from 'node:http';
import { spawn, spawnSync } from 'node:child_process';
import { aptInstall } from '../../test/support/apt.ts';
import { cpuSecondsOf, endedChildrenCpuSeconds } from './child.ts';
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
  /** CPU time the load generator used per successful request, so a run shows what the load itself took from the two cores. */
  loadCpuMicrosPerRequest: number;
}

let wrkVersion: string | null = null;

/** The installed wrk's version; installs Debian's `wrk` when it is missing and this runs as root. */
export function ensureWrk(): string {
  if (wrkVersion) return wrkVersion;
  const found = () => spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' }).stdout.trim();
  if (!found()) {
    aptInstall('wrk', 'wrk');
    if (!found()) throw new Error('wrk was installed but is not on the PATH');
  }
  // `wrk -v` prints its version and usage, and exits with status 1.
  const out = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  const first = (out.stdout + out.stderr).split('\n')[0]!;
  wrkVersion = /^wrk (\S+)/.exec(first)?.[1] ?? first.trim();
  return wrkVersion;
}

/**
 * Requests per second at `connections` concurrent keep-alive connections for `seconds` (after a short
 * warm-up run that is not counted): successful responses divided by the run's duration.
 *
 * The load comes from wrk, one thread, in a process of its own: on two cores the load generator
 * competes with the server for CPU, and wrk spends a fraction of what a JavaScript client does per
 * request (docs/benchmarks.md, "Method").
 */
export async function requestRate(url: string, options: { connections: number; seconds: number; warmupSeconds: number; headers?: Record<string, string>; serverPid?: number }): Promise<RateResult> {
  ensureWrk();
  const headers = Object.entries(options.headers ?? {}).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
  const run = (seconds: number) => runWrk(['-t1', `-c${options.connections}`, `-d${seconds}s`, '--timeout', '30s', '--latency', ...headers, url]);
  if (options.warmupSeconds > 0) await run(options.warmupSeconds);
  const cpuBefore = options.serverPid ? cpuSecondsOf(options.serverPid) : NaN;
  const { output, cpuSeconds: loadCpu } = await run(options.seconds);
  const cpu = options.serverPid ? cpuSecondsOf(options.serverPid) - cpuBefore : NaN;
  const result = parseWrk(output);
  const ok = result.requests - result.non2xx;
  if (ok <= 0) throw new Error(`${url}: no successful response (${result.non2xx} non-2xx, ${result.errors} errors)\n${output}`);
  return {
    requestsPerSecond: ok / result.seconds,
    requests: ok,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    maxMs: result.maxMs,
    non2xx: result.non2xx,
    errors: result.errors,
    seconds: result.seconds,
    serverCpuMicrosPerRequest: Number.isFinite(cpu) ? Math.round((cpu / ok) * 1e6) : null,
    loadCpuMicrosPerRequest: Math.round((loadCpu / ok) * 1e6),
  };
}

/** One wrk run: its text report, and the CPU it used (read once it has ended and been waited for). */
function runWrk(args: string[]): Promise<{ output: string; cpuSeconds: number }> {
  const cpuBefore = endedChildrenCpuSeconds();
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`wrk ${args.join(' ')} exited with ${code}:\n${output}`));
      else resolve({ output, cpuSeconds: endedChildrenCpuSeconds() - cpuBefore });
    });
  });
}

const TIME_UNITS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

function milliseconds(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m|h)$/.exec(text);
  if (!match) throw new Error(`wrk: unreadable time ${text}`);
  return Number(match[1]) * TIME_UNITS[match[2]!]!;
}

/** The figures of one wrk run with `--latency`, read from its text report. */
export function parseWrk(output: string): { requests: number; seconds: number; non2xx: number; errors: number; p50Ms: number; p99Ms: number; maxMs: number } {
  const total = /(\d+) requests in ([\d.]+(?:us|ms|s|m|h)),/.exec(output);
  const latencyLine = /^\s*Latency\s+(\S+)\s+(\S+)\s+(\S+)/m.exec(output);
  const percentile = (p: string) => {
    const match = new RegExp(`^\\s*${p}%\\s+(\\S+)`, 'm').exec(output);
    if (!match) throw new Error(`wrk: no ${p}th percentile in\n${output}`);
    return milliseconds(match[1]!);
  };
  if (!total || !latencyLine) throw new Error(`wrk: unreadable report\n${output}`);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(output);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  return {
    requests: Number(total[1]),
    seconds: milliseconds(total[2]!) / 1000,
    non2xx: non2xx ? Number(non2xx[1]) : 0,
    errors: socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
    p50Ms: percentile('50'),
    p99Ms: percentile('99'),
    maxMs: milliseconds(latencyLine[3]!),
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
