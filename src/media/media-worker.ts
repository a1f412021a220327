/**
 * Thumbnails and text recognition, done in a child process of their own (media-worker-process.ts).
 *
 * Why a child process: the decoders (libvips and its image libraries, tesseract's WebAssembly,
 * ffmpeg, poppler) read whatever people upload. A decoder that crashes or runs out of memory takes
 * the child with it, never the server; a request that hangs is ended by killing the child. The
 * child runs at the lowest CPU priority (nice 19, every thread of it and the tools it starts), so
 * making thumbnails never slows down requests and uploads. Tesseract keeps a few hundred megabytes
 * that its WebAssembly memory never gives back, so the child exits after a while without work and
 * is started again on the next request.
 *
 *   new MediaWorker(options: MediaWorkerOptions)
 *   worker.thumbnail({ path, kind, outPath }): Promise<ThumbnailOutcome>   // WebP, longest side ≤ 512
 *   worker.recognize({ path }): Promise<OcrOutcome>                       // English text
 *   worker.close(): Promise<void>
 *   MediaWorker.tools(): Promise<{ ffmpeg: boolean; pdftoppm: boolean }>
 *
 * An outcome answers for the file: `{ ok: false }` is final (the file is not an image we read, is too
 * large, or is damaged). A rejection with MediaWorkerError is trouble of the moment (the child
 * crashed, missed its deadline, could not start, or ffmpeg/pdftoppm missed theirs): try again later.
 *
 * The child is started on the first request and talks over Node's IPC channel; several requests may
 * be in flight (thumbnails run side by side, recognitions queue for the `ocrConcurrency` tesseract
 * workers). Nothing of an input file passes through this process: the child reads it from its path.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import type { Logger } from 'pino';

export type ThumbnailKind = 'image' | 'video' | 'pdf';

export interface MediaWorkerOptions {
  /** Images with more pixels than this are refused (sharp limitInputPixels), also for OCR. */
  maxPixels: number;
  /** Tesseract workers in the child (OCR_CONCURRENCY, default 1); recognitions beyond it queue. */
  ocrConcurrency: number;
  /**
   * Per-request deadlines: past it the child is killed and the request rejects with
   * MediaWorkerError. ffmpeg and pdftoppm get half of thumbnailTimeoutMs, so that the child ends
   * them itself and answers before its own deadline.
   */
  thumbnailTimeoutMs?: number; // default 60_000
  ocrTimeoutMs?: number; // default 180_000
  /** The child exits after this long without work (frees its memory); started again on demand. Default 5 min. */
  idleMs?: number;
  /** nice value of the child (default 19): media work must never slow request handling down. */
  niceness?: number;
  /**
   * The child's environment (default: this process's). Its PATH decides whether ffmpeg and
   * pdftoppm are used; tests and deployments that want thumbnails without them pass a PATH
   * that lacks them.
   */
  env?: NodeJS.ProcessEnv;
  log: Logger;
}

export type ThumbnailOutcome =
  | { ok: true; width: number; height: number; sourceWidth: number; sourceHeight: number }
  | { ok: false; reason: 'unsupported' | 'failed'; message: string };

export type OcrOutcome = { ok: true; text: string } | { ok: false; reason: 'failed'; message: string };

/** Thrown for transient trouble (the child crashed, was killed by the deadline, could not start): the caller retries later. */
export class MediaWorkerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MediaWorkerError';
  }
}

/**
 * The English model tesseract.js reads, from node_modules: recognition never downloads anything.
 * `4.0.0` is the full model of tessdata; only its LSTM part is used (OEM.LSTM_ONLY).
 */
export const ocrLanguageDir = join(dirname(createRequire(import.meta.url).resolve('@tesseract.js-data/eng/package.json')), '4.0.0');

// What passes between this process and the child (media-worker-process.ts).

/** The child's settings: its one command-line argument, as JSON. */
export interface MediaWorkerSettings {
  niceness: number;
  maxPixels: number;
  ocrConcurrency: number;
  /** The deadline of one run of ffmpeg or pdftoppm, after which the child kills it. */
  toolTimeoutMs: number;
  languageDir: string;
}

type RequestBody = { op: 'thumbnail'; path: string; kind: ThumbnailKind; outPath: string } | { op: 'recognize'; path: string };
export type MediaRequest = RequestBody & { id: number };

/** The child's answer: an outcome for the file, or `trouble` (transient: rejected with MediaWorkerError). */
export type MediaAnswer = { id: number; outcome: ThumbnailOutcome | OcrOutcome } | { id: number; trouble: string };

interface Pending {
  resolve(outcome: ThumbnailOutcome | OcrOutcome): void;
  reject(error: MediaWorkerError): void;
  timer: NodeJS.Timeout;
}

/** How long a child told to go (idle, or close()) may take before it is killed. */
const EXIT_GRACE_MS = 2_000;

/** Whether an executable named `name` is in one of the directories of `pathList` (a PATH value). */
export async function onPath(name: string, pathList: string | undefined): Promise<string | null> {
  for (const dir of (pathList ?? '').split(delimiter)) {
    if (!isAbsolute(dir)) continue; // a relative entry would depend on the working directory
    const candidate = join(dir, name);
    if (await access(candidate, constants.X_OK).then(() => true, () => false)) return candidate;
  }
  return null;
}

export class MediaWorker {
  static #tools: Promise<{ ffmpeg: boolean; pdftoppm: boolean }> | undefined;

  /** Which external tools this machine has (looked up on PATH once, cached). */
  static tools(): Promise<{ ffmpeg: boolean; pdftoppm: boolean }> {
    MediaWorker.#tools ??= Promise.all([onPath('ffmpeg', process.env.PATH), onPath('pdftoppm', process.env.PATH)]).then(([ffmpeg, pdftoppm]) => ({
      ffmpeg: ffmpeg !== null,
      pdftoppm: pdftoppm !== null,
    }));
    return MediaWorker.#tools;
  }

  readonly #settings: MediaWorkerSettings;
  readonly #thumbnailTimeoutMs: number;
  readonly #ocrTimeoutMs: number;
  readonly #idleMs: number;
  readonly #env: NodeJS.ProcessEnv | undefined;
  readonly #log: Logger;
  /** The running child. Every pending request was sent to it; a child that is going is no longer here. */
  #child: ChildProcess | null = null;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #idleTimer: NodeJS.Timeout | undefined;
  #closed = false;
  /** The children still running, the current one and those told to go, with their exits (close() waits for them). */
  readonly #exits = new Map<ChildProcess, Promise<void>>();

  constructor(options: MediaWorkerOptions) {
    const thumbnailTimeoutMs = options.thumbnailTimeoutMs ?? 60_000;
    this.#settings = {
      niceness: options.niceness ?? 19,
      maxPixels: options.maxPixels,
      ocrConcurrency: Math.max(1, Math.floor(options.ocrConcurrency)),
      toolTimeoutMs: Math.max(1, Math.floor(thumbnailTimeoutMs / 2)),
      languageDir: ocrLanguageDir,
    };
    this.#thumbnailTimeoutMs = thumbnailTimeoutMs;
    this.#ocrTimeoutMs = options.ocrTimeoutMs ?? 180_000;
    this.#idleMs = options.idleMs ?? 5 * 60_000;
    this.#env = options.env;
    this.#log = options.log;
  }

  /** Reads the file at `path` (never modified), writes a WebP thumbnail to `outPath`. */
  thumbnail(input: { path: string; kind: ThumbnailKind; outPath: string }): Promise<ThumbnailOutcome> {
    return this.#request({ op: 'thumbnail', path: input.path, kind: input.kind, outPath: input.outPath }, this.#thumbnailTimeoutMs) as Promise<ThumbnailOutcome>;
  }

  /** Recognises English text in the image at `path`. */
  recognize(input: { path: string }): Promise<OcrOutcome> {
    return this.#request({ op: 'recognize', path: input.path }, this.#ocrTimeoutMs) as Promise<OcrOutcome>;
  }

  /** Ends the child (and its tesseract workers); pending requests reject with MediaWorkerError. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#child) this.#dismiss(this.#child, 'the media worker was closed');
    // Unreferenced, a child going away would not keep this process running until it is gone.
    for (const child of this.#exits.keys()) child.ref();
    await Promise.all(this.#exits.values());
  }

  #request(body: RequestBody, timeoutMs: number): Promise<ThumbnailOutcome | OcrOutcome> {
    if (this.#closed) return Promise.reject(new MediaWorkerError('the media worker is closed'));
    let child: ChildProcess;
    try {
      child = this.#child ?? this.#start();
    } catch (error) {
      this.#log.error({ err: error }, 'media worker: could not start its process');
      return Promise.reject(new MediaWorkerError(`the media worker could not start: ${(error as Error).message}`));
    }
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#log.warn({ op: body.op, timeoutMs }, 'media worker: a request missed its deadline; its process is killed');
        this.#kill(child, `${body.op} took longer than ${timeoutMs} ms`);
      }, timeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
      this.#busy(child);
      child.send({ id, ...body } satisfies MediaRequest, (error) => {
        // The channel is gone: the child is exiting, and its exit rejects this request.
        if (error) this.#log.debug({ err: error }, 'media worker: a request could not be sent');
      });
    });
  }

  #start(): ChildProcess {
    const started = performance.now();
    const child = fork(new URL('./media-worker-process.ts', import.meta.url), [JSON.stringify(this.#settings)], {
      // None of this process's own flags: Node 24 strips types without any, and flags meant for this
      // process (a test runner's loader hooks, an inspector port) would only get in the child's way.
      execArgv: [],
      env: this.#env ?? process.env,
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      // A process group of its own, so that a deadline's SIGKILL also reaches the ffmpeg or
      // pdftoppm it runs, which would otherwise go on alone. Without a terminal of its own it still
      // ends with this process: it exits when the IPC channel closes.
      detached: true,
    });
    this.#child = child;
    const exited = new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      // A child that could not be spawned emits 'error', never 'exit'.
      child.once('error', () => child.pid === undefined && resolve());
    });
    child.once('message', () => this.#log.debug({ childPid: child.pid, ms: Math.round(performance.now() - started) }, 'media worker: process answered its first request'));
    child.on('message', (message) => this.#answer(message as MediaAnswer));
    child.on('error', (error) => {
      // Spawning failed, or a signal or message could not be delivered: this child is of no more use.
      this.#log.error({ err: error, childPid: child.pid }, 'media worker: process error');
      if (this.#child === child) this.#kill(child, `the media worker failed: ${error.message}`);
    });
    child.once('exit', (code, signal) => {
      if (this.#child !== child) {
        this.#log.debug({ childPid: child.pid, code, signal }, 'media worker: process ended');
        return;
      }
      this.#log.warn({ childPid: child.pid, code, signal, pending: this.#pending.size }, 'media worker: process exited unexpectedly');
      this.#retire(child, `the media worker exited (${signal ?? `code ${code}`})`);
    });
    this.#exits.set(child, exited);
    void exited.then(() => this.#exits.delete(child));
    this.#log.debug({ childPid: child.pid }, 'media worker: process started');
    return child;
  }

  #answer(answer: MediaAnswer): void {
    const pending = this.#pending.get(answer.id);
    if (!pending) return; // already rejected by its deadline
    this.#pending.delete(answer.id);
    clearTimeout(pending.timer);
    if ('trouble' in answer) pending.reject(new MediaWorkerError(answer.trouble));
    else pending.resolve(answer.outcome);
    if (this.#pending.size === 0 && this.#child) this.#idle(this.#child);
  }

  /** Work is pending: the child keeps this process alive and is not ended for idleness. */
  #busy(child: ChildProcess): void {
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    child.ref();
    child.channel?.ref();
  }

  /** Nothing pending: an idle child must not keep this process alive, and goes after idleMs. */
  #idle(child: ChildProcess): void {
    child.unref();
    child.channel?.unref();
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => {
      if (this.#child === child && this.#pending.size === 0) this.#dismiss(child, 'idle');
    }, this.#idleMs);
    this.#idleTimer.unref();
  }

  /** Asks the child to go (it exits when its channel closes, after ending its tools); kills it if it lingers. */
  #dismiss(child: ChildProcess, reason: string): void {
    this.#retire(child, reason);
    if (child.exitCode !== null || child.signalCode !== null) return;
    if (child.connected) child.disconnect();
    const timer = setTimeout(() => killGroup(child), EXIT_GRACE_MS);
    timer.unref();
    child.once('exit', () => clearTimeout(timer));
  }

  /** Kills the child and whatever it runs at once; its requests reject with `reason`. */
  #kill(child: ChildProcess, reason: string): void {
    this.#retire(child, reason);
    killGroup(child);
  }

  /** Forgets the child: its pending requests reject, and the next request starts a new one. */
  #retire(child: ChildProcess, reason: string): void {
    if (this.#child !== child) return;
    this.#child = null;
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const request of pending) {
      clearTimeout(request.timer);
      request.reject(new MediaWorkerError(reason));
    }
    // Still running until its exit: it must not keep this process alive meanwhile.
    child.unref();
    child.channel?.unref();
  }
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}
