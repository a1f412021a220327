/** What a progress line shows, read from the running work each time it is drawn. */
export interface Counters {
  totalFiles: number;
  totalBytes: number;
  doneFiles: number;
  doneBytes: number;
}

/** Rates are measured over this much recent time, so they follow the work as it speeds up or slows down. */
const WINDOW_MS = 5_000;

const number = new Intl.NumberFormat('en-US');
const oneDecimal = new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });

export const megabytes = (bytes: number) => `${oneDecimal.format(bytes / 1e6)} MB`;
export const count = (value: number) => number.format(value);

function duration(seconds: number): string {
  const total = Math.round(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const two = (value: number) => String(value).padStart(2, '0');
  return h > 0 ? `${h}:${two(m)}:${two(s)}` : `${m}:${two(s)}`;
}

/**
 * A progress line on a terminal stream: files done/total, bytes, the rate in files/s and MB/s, and
 * the time left. On a terminal it is redrawn in place at most every `redrawMs`; elsewhere (a log
 * file, a pipe) a plain line is written every `lineMs`, and once at the start and the end, so a log
 * holds a readable history instead of carriage returns.
 */
export class ProgressLine {
  readonly #stream: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  readonly #read: () => Counters;
  readonly #tty: boolean;
  readonly #intervalMs: number;
  readonly #label: string;
  #timer: NodeJS.Timeout | null = null;
  #samples: Array<{ at: number; files: number; bytes: number }> = [];

  constructor(stream: NodeJS.WritableStream & { isTTY?: boolean; columns?: number }, read: () => Counters, options: { label: string; redrawMs?: number; lineMs?: number }) {
    this.#stream = stream;
    this.#read = read;
    this.#tty = stream.isTTY === true;
    this.#intervalMs = this.#tty ? (options.redrawMs ?? 250) : (options.lineMs ?? 1_000);
    this.#label = options.label;
  }

  start(): void {
    this.#draw();
    this.#timer = setInterval(() => this.#draw(), this.#intervalMs);
    this.#timer.unref();
  }

  /** Draws the last state and leaves the line in place. */
  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.#draw();
    if (this.#tty) this.#stream.write('\n');
  }

  /** The line as it would be drawn now (exposed for its wording). */
  line(now = performance.now()): string {
    const counters = this.#read();
    this.#samples.push({ at: now, files: counters.doneFiles, bytes: counters.doneBytes });
    while (this.#samples.length > 2 && now - this.#samples[1]!.at >= WINDOW_MS) this.#samples.shift();
    const first = this.#samples[0]!;
    const seconds = (now - first.at) / 1000;
    const filesRate = seconds > 0 ? (counters.doneFiles - first.files) / seconds : 0;
    const bytesRate = seconds > 0 ? (counters.doneBytes - first.bytes) / seconds : 0;
    // Many small files are bound by the count, a few large ones by the bytes: the slower of the two.
    const left = Math.max(
      filesRate > 0 ? (counters.totalFiles - counters.doneFiles) / filesRate : counters.doneFiles < counters.totalFiles ? Infinity : 0,
      bytesRate > 0 ? (counters.totalBytes - counters.doneBytes) / bytesRate : counters.doneBytes < counters.totalBytes ? Infinity : 0,
    );
    const eta = Number.isFinite(left) ? duration(left) : '--:--';
    return `${this.#label}: ${count(counters.doneFiles)}/${count(counters.totalFiles)} files, ${megabytes(counters.doneBytes)}/${megabytes(counters.totalBytes)}, ${count(Math.round(filesRate))} files/s, ${oneDecimal.format(bytesRate / 1e6)} MB/s, ETA ${eta}`;
  }

  #draw(): void {
    const text = this.line();
    if (!this.#tty) {
      this.#stream.write(`${text}\n`);
      return;
    }
    // Cut to the terminal's width: a wrapped line could not be redrawn in place.
    const width = this.#stream.columns ?? 120;
    this.#stream.write(`\r\x1b[K${text.slice(0, Math.max(20, width - 1))}`);
  }
}
