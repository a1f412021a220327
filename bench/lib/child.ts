import { freePort } from '../../test/support/postgres.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** A server running as its own process (so its memory can be read from /proc). */
export interface ChildServer {
  name: string;
  pid: number;
  url: string;
  logFile: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export { freePort };

/**
 * Starts `node <script>` with `env` (on top of PATH/HOME only, so the machine's own environment and
 * any .env file do not leak in: the working directory is `cwd`), waits until `readyPath` answers 200.
 */
export async function startChild(options: {
  name: string;
  script: string;
  args?: string[];
  /** Options for node itself (debugging only: the benchmark runs the server as `node src/main.ts`). */
  nodeArgs?: string[];
  env: Record<string, string>;
  cwd: string;
  port: number;
  readyPath: string;
  logFile: string;
}): Promise<ChildServer> {
  const log = fs.openSync(options.logFile, 'a');
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), options.script, ...(options.args ?? [])], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...options.env },
    stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  let exited: string | null = null;
  child.once('exit', (code, signal) => (exited = `exited with ${code ?? signal}`));
  const url = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`${options.name} ${exited} during start-up; log: ${options.logFile}\n${tail(options.logFile)}`);
    try {
      const response = await fetch(url + options.readyPath);
      await response.arrayBuffer();
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${options.name} did not become ready within 60 s; log: ${options.logFile}`);
    }
    await sleep(50);
  }
  return {
    name: options.name,
    pid: child.pid!,
    url,
    logFile: options.logFile,
    process: child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await done;
      clearTimeout(timer);
    },
  };
}

export function tail(file: string, lines = 20): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Resident set size figures of a process, in bytes, from /proc/<pid>/status. */
export function memoryOf(pid: number): { rss: number; hwm: number } | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
  } catch {
    return null;
  }
}

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat. */
export function cpuSecondsOf(pid: number): number {
  const fields = statFields(pid);
  return fields ? (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS : NaN;
}

/**
 * CPU seconds (user + system) of this process's children that have ended and been waited for: a
 * tool run to completion, read before and after it, when no other child ends meanwhile.
 */
export function endedChildrenCpuSeconds(): number {
  const fields = statFields('self')!;
  return (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS;
}

/** The fields of /proc/<pid>/stat after the command name, or null when the process is gone. */
function statFields(pid: number | 'self'): string[] | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}
const CLOCK_TICKS = 100;

/**
 * Watches a process's memory while something runs: resets the kernel's peak-RSS mark (VmHWM) first
 * (writing 5 to /proc/<pid>/clear_refs), polls VmRSS every few milliseconds, and reports the larger
 * of the polled maximum and VmHWM at the end (VmHWM catches peaks between polls).
 */
export class MemoryWatch {
  readonly pid: number;
  #timer: NodeJS.Timeout | null = null;
  #maxRss = 0;
  readonly hwmReset: boolean;
  readonly startRss: number;
  readonly startCpu: number;

  constructor(pid: number, intervalMs = 10) {
    this.pid = pid;
    this.startCpu = cpuSecondsOf(pid);
    let reset = false;
    try {
      fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
      reset = true;
    } catch {
      // Not permitted (another user) or an old kernel: VmHWM then covers the process's whole life.
    }
    this.hwmReset = reset;
    this.startRss = memoryOf(pid)?.rss ?? 0;
    this.#maxRss = this.startRss;
    this.#timer = setInterval(() => this.#poll(), intervalMs);
  }

  #poll(): void {
    const memory = memoryOf(this.pid);
    if (memory && memory.rss > this.#maxRss) this.#maxRss = memory.rss;
  }

  /** Peak RSS in bytes since the watch started. */
  stop(): { peakRss: number; polledMaxRss: number; hwm: number | null; startRss: number; cpuSeconds: number } {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.#poll();
    const hwm = this.hwmReset ? (memoryOf(this.pid)?.hwm ?? null) : null;
    return { peakRss: Math.max(this.#maxRss, hwm ?? 0), polledMaxRss: this.#maxRss, hwm, startRss: this.startRss, cpuSeconds: cpuSecondsOf(this.pid) - this.startCpu };
  }
}

export function benchDir(...parts: string[]): string {
  return path.join(import.meta.dirname, '..', ...parts);
}
