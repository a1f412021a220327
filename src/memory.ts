import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Two nudges to V8's garbage collector for a process that mostly moves bytes (measurements:
 * docs/benchmarks.md). `gc` comes from a separate context, so it is not a global here.
 */
type Gc = (options: { type: 'minor' | 'major'; flavor?: 'regular' | 'last-resort' }) => void;
let gc: Gc | null | undefined;

function collector(): Gc | null {
  if (gc === undefined) {
    try {
      v8.setFlagsFromString('--expose-gc');
      gc = vm.runInNewContext('gc') as Gc;
    } catch {
      gc = null;
    }
  }
  return gc;
}

/**
 * Node allocates a new 64 KiB buffer for every read from a socket. An upload streamed to storage
 * allocates little else, so the young generation fills slowly and V8 frees those buffers late: a
 * large upload would hold tens of MiB of dead buffers. Collecting the young generation (a
 * scavenge, well under a millisecond when, as here, almost nothing in it is alive) after every few
 * MiB streamed keeps the process's memory flat during uploads.
 */
const STREAMED_BYTES_PER_COLLECTION = 4 * 1024 * 1024;
let streamedSinceCollection = 0;

/** Counts bytes streamed through the process, collecting the young generation every few MiB. */
export function noteStreamedBytes(bytes: number): void {
  streamedSinceCollection += bytes;
  if (streamedSinceCollection < STREAMED_BYTES_PER_COLLECTION) return;
  streamedSinceCollection = 0;
  collector()?.({ type: 'minor' });
}

/**
 * Loading the application's modules leaves V8's young generation grown to its largest size (tens
 * of MiB, kept resident) and the heap full of start-up garbage. One thorough collection once the
 * server listens returns that memory; the young generation grows again only if a workload needs it.
 */
export function releaseStartupMemory(): void {
  collector()?.({ type: 'major', flavor: 'last-resort' });
}
