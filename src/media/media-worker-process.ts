/**
 * The media worker's process, started by MediaWorker (media-worker.ts) with its settings as its one
 * argument. It answers each request of the IPC channel by id, as soon as that request is done:
 * thumbnails run side by side, recognitions wait in tesseract's scheduler for a free worker.
 *
 * Everything here runs at the lowest CPU priority, and nothing here is trusted: the files are
 * whatever people uploaded. A crash ends only this process, which the parent starts again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import os from 'node:os';
import { resolve } from 'node:path';
import sharp from 'sharp';
import Tesseract from 'tesseract.js';
import { onPath, type MediaAnswer, type MediaRequest, type MediaWorkerSettings, type OcrOutcome, type ThumbnailKind, type ThumbnailOutcome } from './media-worker.ts';

const settings = JSON.parse(process.argv[2] ?? '') as MediaWorkerSettings;

lowerPriority(settings.niceness);

// One libvips thread per image and no cache of decoded images: a small machine, where thumbnails
// must leave the cores and the memory to uploads and requests.
sharp.concurrency(1);
sharp.cache(false);

/** The longest side of a thumbnail. */
const THUMBNAIL_SIDE = 512;
/**
 * What pdftoppm renders the first page to: its longest side, in pixels. A PDF's sourceWidth and
 * sourceHeight are the size of this rendering (so the longest of them is 1024), not of the page
 * in points.
 */
const PDF_RENDER_SIDE = 1024;
/** Larger images are scaled down before recognition: text stays legible, and tesseract's memory bounded. */
const OCR_MAX_SIDE = 4096;
const OCR_MAX_CHARS = 100_000;
/**
 * The decoders of sharp's that read the images we make thumbnails of and recognise text in. sharp
 * reads others too (SVG, libvips' own format), which are not photos or screenshots and would only
 * widen what untrusted bytes reach.
 */
const IMAGE_FORMATS = new Set(['jpeg', 'png', 'gif', 'webp', 'heif', 'tiff']);
/**
 * The containers ffmpeg may open. A playlist (HLS), a concat list or an image sequence names other
 * files or URLs, which ffmpeg would read: an upload must never make this process fetch a URL or put
 * another local file into a thumbnail.
 */
const VIDEO_DEMUXERS = 'mov,mp4,matroska,webm,avi,flv,mpegts,mpeg,mpegvideo,m4v,h264,hevc,ogg,asf,nut,ivf,dv';
/** What is kept of a tool's error output, for the message of a failure. */
const STDERR_CAP = 4096;

/** A transient trouble: answered as `trouble`, so that the caller tries again later. */
class Trouble extends Error {}

const tools = { ffmpeg: onPath('ffmpeg', process.env.PATH), pdftoppm: onPath('pdftoppm', process.env.PATH) };
/** ffmpeg and pdftoppm runs, to be killed when this process is told to go. */
const running = new Set<ChildProcess>();
/** Temporary files beside thumbnails, to be removed whatever happens. */
const temporary = new Set<string>();

process.on('message', (message) => {
  void answer(message as MediaRequest).then((reply) => {
    if (process.connected) process.send?.(reply);
  });
});

// The parent is gone, or told this process to go (idle, or closed): end the tools and leave. The
// tesseract workers are threads of this process and end with it.
process.on('disconnect', () => {
  for (const tool of running) tool.kill('SIGKILL');
  process.exit(0);
});
process.on('exit', () => {
  for (const path of temporary) rmSync(path, { force: true });
});

async function answer(request: MediaRequest): Promise<MediaAnswer> {
  try {
    return { id: request.id, outcome: request.op === 'thumbnail' ? await thumbnail(request.path, request.kind, request.outPath) : await recognize(request.path) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // Anything else thrown is the file's: sharp's and tesseract's errors for what they cannot read.
    if (error instanceof Trouble || isTransient(error)) return { id: request.id, trouble: message };
    return { id: request.id, outcome: failed(message) };
  }
}

async function thumbnail(path: string, kind: ThumbnailKind, outPath: string): Promise<ThumbnailOutcome> {
  if (kind === 'image') return scaled(path, outPath);
  if (kind !== 'video' && kind !== 'pdf') return { ok: false, reason: 'unsupported', message: `no thumbnails of ${String(kind)}` };
  const tool = kind === 'video' ? await tools.ffmpeg : await tools.pdftoppm;
  if (tool === null) return { ok: false, reason: 'unsupported', message: `${kind === 'video' ? 'ffmpeg' : 'pdftoppm'} is not installed` };
  // Beside the thumbnail, so on the same disk, in a directory the caller cleans.
  const frame = `${outPath}.${randomBytes(6).toString('hex')}.png`;
  temporary.add(frame);
  try {
    const made = kind === 'video' ? await videoFrame(tool, path, frame) : await pdfPage(tool, path, frame);
    if (!made.ok) return made;
    return await scaled(frame, outPath);
  } finally {
    await rm(frame, { force: true });
    temporary.delete(frame);
  }
}

/** Writes a WebP of the image at `source` to `outPath`: longest side at most 512, never enlarged, turned as its EXIF says. */
async function scaled(source: string, outPath: string): Promise<ThumbnailOutcome> {
  const size = await imageSize(source);
  if (!size.ok) return size;
  try {
    // No metadata is carried over (sharp keeps none unless asked): no EXIF, no GPS position, and
    // colours converted to sRGB. The first frame of a GIF or WebP, the first page of a TIFF.
    const info = await sharp(source, { limitInputPixels: settings.maxPixels, autoOrient: true })
      .resize(THUMBNAIL_SIDE, THUMBNAIL_SIDE, { fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 80 })
      .toFile(outPath);
    return { ok: true, width: info.width, height: info.height, sourceWidth: size.width, sourceHeight: size.height };
  } catch (error) {
    await rm(outPath, { force: true });
    throw error;
  }
}

/** Bytes of each sample of a decoded image, by libvips' name of its depth. */
const SAMPLE_BYTES: Record<string, number> = { uchar: 1, char: 1, ushort: 2, short: 2, uint: 4, int: 4, float: 4, complex: 8, double: 8, dpcomplex: 16 };

/**
 * The displayed size of an image (after its EXIF orientation), from its headers alone: a file that
 * claims more than maxPixels is refused before anything is decoded, and so is one whose decoding
 * would hold more memory than maxPixels of 8-bit RGBA (4 bytes a pixel): pixels count by their
 * channels and sample size, and twice over for a progressive JPEG or an interlaced PNG, which cannot
 * be decoded as a stream (the whole image, or its coefficients at two bytes each, is held at once).
 * At the default 100 million pixels a 778 KB interlaced 16-bit RGBA PNG of 10,000² pixels, and a
 * 2.3 MB progressive CMYK JPEG of the same size, each took the media process past 2 GB.
 */
async function imageSize(path: string): Promise<{ ok: true; width: number; height: number } | { ok: false; reason: 'unsupported' | 'failed'; message: string }> {
  const metadata = await sharp(path).metadata();
  if (!IMAGE_FORMATS.has(metadata.format)) return { ok: false, reason: 'unsupported', message: `${metadata.format} images are not read` };
  // The HEIF container holds AVIF (AV1), which sharp decodes, and HEIC (HEVC), which it does not.
  if (metadata.format === 'heif' && metadata.compression !== 'av1') return { ok: false, reason: 'unsupported', message: `${metadata.compression ?? 'this'} HEIF images are not read` };
  if (metadata.width * metadata.height > settings.maxPixels) return failed(`the image is ${metadata.width}×${metadata.height} pixels, more than the ${settings.maxPixels} allowed`);
  const decodedBytes = metadata.width * metadata.height * (metadata.channels ?? 4) * (SAMPLE_BYTES[metadata.depth ?? 'uchar'] ?? 4) * (metadata.isProgressive ? 2 : 1);
  if (decodedBytes > settings.maxPixels * 4) {
    return failed(`decoding the ${metadata.width}×${metadata.height} image would hold ${Math.ceil(decodedBytes / 2 ** 20)} MiB, more than the ${Math.ceil((settings.maxPixels * 4) / 2 ** 20)} MiB allowed`);
  }
  return { ok: true, width: metadata.autoOrient.width, height: metadata.autoOrient.height };
}

/**
 * The video's first frame (contract §10). ffmpeg turns it as the video's rotation says, and refuses
 * frames of more than maxPixels before decoding them.
 */
async function videoFrame(ffmpeg: string, path: string, frame: string): Promise<{ ok: true } | { ok: false; reason: 'failed'; message: string }> {
  const run = await runTool(ffmpeg, [
    ...['-nostdin', '-hide_banner', '-loglevel', 'error'],
    ...['-protocol_whitelist', 'file', '-format_whitelist', VIDEO_DEMUXERS, '-max_pixels', String(settings.maxPixels)],
    // `file:` so that no name is taken for another protocol or an option.
    ...['-i', `file:${resolve(path)}`],
    ...['-map', '0:v:0', '-frames:v', '1', '-an', '-sn', '-dn', '-update', '1', '-f', 'image2', '-c:v', 'png', '-y', frame],
  ]);
  if (run.code === 0 && (await exists(frame))) return { ok: true };
  return failed(`ffmpeg found no frame${run.stderr ? `: ${run.stderr}` : ''}`);
}

async function pdfPage(pdftoppm: string, path: string, frame: string): Promise<{ ok: true } | { ok: false; reason: 'failed'; message: string }> {
  // -singlefile writes `<root>.png`, without a page number.
  const root = frame.slice(0, -'.png'.length);
  const run = await runTool(pdftoppm, ['-f', '1', '-l', '1', '-png', '-singlefile', '-scale-to', String(PDF_RENDER_SIDE), resolve(path), root]);
  if (run.code === 0 && (await exists(frame))) return { ok: true };
  return failed(`pdftoppm rendered no page${run.stderr ? `: ${run.stderr}` : ''}`);
}

/**
 * Runs ffmpeg or pdftoppm (at this process's priority, which it inherits) and waits for it. Past
 * toolTimeoutMs it is killed, which is trouble of the moment: a busy machine may have been slow.
 */
function runTool(command: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    running.add(child);
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < STDERR_CAP) stderr = (stderr + chunk).slice(0, STDERR_CAP);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, settings.toolTimeoutMs);
    child.once('error', (error) => {
      // It could not be started (out of processes or memory, or uninstalled meanwhile).
      clearTimeout(timer);
      running.delete(child);
      reject(new Trouble(`${command} could not start: ${error.message}`));
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      running.delete(child);
      if (timedOut) reject(new Trouble(`${command} took longer than ${settings.toolTimeoutMs} ms`));
      else resolvePromise({ code, stderr: stderr.trim().split('\n').slice(-3).join(' ') });
    });
  });
}

async function recognize(path: string): Promise<OcrOutcome> {
  const size = await imageSize(path);
  if (!size.ok) return failed(size.message);
  const image = await forRecognition(path);
  const scheduler = await ocrScheduler();
  const result = await scheduler.addJob('recognize', image);
  return { ok: true, text: tidy(result.data.text) };
}

/**
 * The image as tesseract reads text best: turned upright, grey, dark text on a light background
 * (a mostly dark image, such as a screenshot in dark mode, is inverted: tesseract otherwise inverts
 * each line it is unsure of and reads it again, which doubles the time), at most 4096 px a side.
 * Transparent parts become white.
 */
async function forRecognition(path: string): Promise<Buffer> {
  const { data, info } = await sharp(path, { limitInputPixels: settings.maxPixels, autoOrient: true })
    .flatten({ background: '#ffffff' })
    .resize(OCR_MAX_SIDE, OCR_MAX_SIDE, { fit: 'inside', withoutEnlargement: true })
    .toColourspace('b-w')
    .raw()
    .toBuffer({ resolveWithObject: true });
  let sum = 0;
  for (let i = 0; i < data.length; i++) sum += data[i]!;
  if (sum < 128 * data.length) for (let i = 0; i < data.length; i++) data[i] = 255 - data[i]!;
  // A PGM: tesseract reads it as it is, with nothing to encode and decode again, and with no
  // resolution, so that it estimates one from the size of the text (a screenshot has no DPI worth
  // believing).
  return Buffer.concat([Buffer.from(`P5\n${info.width} ${info.height}\n255\n`, 'latin1'), data]);
}

let scheduler: Promise<Tesseract.Scheduler> | undefined;

/**
 * The tesseract workers, made on the first recognition and kept for this process's life: loading
 * the model takes about half a second per worker. If they cannot start, every recognition of this
 * process answers trouble: tesseract.js leaves the failed worker's thread behind, and trying again
 * would add another. The next process (after the idle time) tries anew.
 */
function ocrScheduler(): Promise<Tesseract.Scheduler> {
  scheduler ??= (async () => {
    const workers = await Promise.all(Array.from({ length: settings.ocrConcurrency }, startOcrWorker));
    // Pages as they come: screenshots and scans have columns, captions and buttons, not one block.
    // Tesseract's remarks ("Estimating resolution as 156") would go to the server's error output.
    await Promise.all(workers.map((worker) => worker.setParameters({ tessedit_pageseg_mode: Tesseract.PSM.AUTO, debug_file: '/dev/null' })));
    const made = Tesseract.createScheduler();
    for (const worker of workers) made.addWorker(worker);
    return made;
  })();
  return scheduler;
}

/**
 * One tesseract worker (a thread). Language data, worker script and WebAssembly all come from
 * node_modules: tesseract.js's Node code loads its core with require(), and reads the model from
 * langPath when that is a local directory (its CDN default is used only without one);
 * `cacheMethod: 'none'` keeps it from writing a copy of the model into the working directory.
 */
function startOcrWorker(): Promise<Tesseract.Worker> {
  return new Promise((resolvePromise, reject) => {
    let started = false;
    Tesseract.createWorker('eng', Tesseract.OEM.LSTM_ONLY, {
      langPath: settings.languageDir,
      gzip: true,
      cacheMethod: 'none',
      // tesseract.js tells of a model it cannot read only here (its promise then never settles),
      // and without a handler it throws a failed job's error out of its message listener, which
      // would end this process; with one, only the job's promise rejects.
      errorHandler: (error: unknown) => {
        if (!started) reject(new Trouble(`tesseract could not start: ${String(error)}`));
      },
    }).then(
      (worker) => {
        started = true;
        resolvePromise(worker);
      },
      (error: unknown) => reject(new Trouble(`tesseract could not start: ${String(error)}`)),
    );
  });
}

/** Trimmed, runs of spaces within a line made one, at most one empty line in a row, at most 100,000 characters. */
function tidy(text: string): string {
  const lines = text.split('\n').map((line) => line.replace(/\s+/g, ' ').trim());
  let tidied = lines.join('\n').replace(/\n{3,}/g, '\n\n').trim();
  if (tidied.length > OCR_MAX_CHARS) {
    tidied = tidied.slice(0, OCR_MAX_CHARS);
    // Not half of a character outside the Basic Multilingual Plane.
    if (/[\uD800-\uDBFF]$/.test(tidied)) tidied = tidied.slice(0, -1);
  }
  return tidied;
}

/**
 * Linux keeps a nice value per thread, and os.setPriority() sets the calling thread's alone. Node's
 * own threads (V8's, libuv's pool) exist already, so each is set; threads started later (sharp's,
 * the tesseract workers) and processes (ffmpeg, pdftoppm) inherit it from the thread that starts
 * them. Best effort: lowering a priority is always allowed, raising it back (a parent already
 * nicer than `niceness`) is not, and then stays as it is.
 */
function lowerPriority(niceness: number): void {
  let threads = [0];
  try {
    threads = readdirSync('/proc/self/task').map(Number);
  } catch {
    // Not Linux: there, the priority is the whole process's.
  }
  for (const thread of threads) {
    try {
      os.setPriority(thread, niceness);
    } catch {
      // EACCES (raising a priority), or a thread that ended meanwhile.
    }
  }
}

function failed(message: string): { ok: false; reason: 'failed'; message: string } {
  return { ok: false, reason: 'failed', message };
}

/** Whether a tool wrote something there. */
function exists(path: string): Promise<boolean> {
  return stat(path).then(
    (stats) => stats.size > 0,
    () => false,
  );
}

/** Errors of the machine rather than of the file: out of file descriptors, memory or disk. */
function isTransient(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'EMFILE' || code === 'ENFILE' || code === 'ENOMEM' || code === 'ENOSPC' || code === 'EAGAIN';
}
