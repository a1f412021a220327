import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { crc32, deflateSync } from 'node:zlib';
import { pino } from 'pino';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MediaWorker, MediaWorkerError, ocrLanguageDir, type ThumbnailOutcome } from '../../src/media/media-worker.ts';

// Every image, video and PDF is made here, into a temporary directory. The video tests need ffmpeg
// and the PDF test pdftoppm: CI installs both, so these tests fail rather than skip without them.

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const log = pino({ level: 'silent' });
const run = promisify(execFile);

let dir: string;
let worker: MediaWorker;
let counter = 0;
const file = (name: string) => join(dir, name);
const outFile = () => file(`thumb-${++counter}.webp`);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'hoard-media-'));
  worker = new MediaWorker({ maxPixels: 50_000_000, ocrConcurrency: 1, log });
});

afterAll(async () => {
  await worker.close();
  rmSync(dir, { recursive: true, force: true });
});

async function thumbnailOf(path: string, kind: 'image' | 'video' | 'pdf' = 'image'): Promise<{ outcome: ThumbnailOutcome; outPath: string }> {
  const outPath = outFile();
  return { outcome: await worker.thumbnail({ path, kind, outPath }), outPath };
}

/** A solid-colour image in the given format. */
async function solid(name: string, width: number, height: number, format: 'png' | 'webp' | 'avif' | 'tiff', background = '#3366cc'): Promise<string> {
  const path = file(name);
  await sharp({ create: { width, height, channels: 3, background } }).toFormat(format).toFile(path);
  return path;
}

/** The media worker processes this test process has running now (one per MediaWorker with work). */
function mediaChildren(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return parent === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('media-worker-process.ts');
      } catch {
        return false; // ended meanwhile
      }
    })
    .map(Number);
}

/** The processes whose command line mentions `text`. */
function processesWith(text: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** A PNG chunk with its CRC. */
function pngChunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A valid PNG header claiming 60000×60000 RGB pixels (10.8 GB decoded), followed by a few bytes of image data. */
function decompressionBomb(): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(60_000, 0);
  header.writeUInt32BE(60_000, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, deflate, no filter, not interlaced
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(Buffer.alloc(4096)).subarray(0, 40)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A one-page PDF of 200×100 points saying `text`, with a correct cross-reference table. */
function onePagePdf(text: string): Buffer {
  const content = `BT /F1 28 Tf 20 40 Td (${text}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${Buffer.byteLength(content)} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let pdf = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(pdf));
    pdf += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(pdf);
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, 'latin1');
}

/** The entries of the GPS directory an EXIF block (TIFF structure, as sharp's metadata gives it) points to; 0 without one. */
function gpsEntries(exif: Buffer): number {
  const tiff = exif.subarray(exif.indexOf('II*\0') >= 0 ? exif.indexOf('II*\0') : exif.indexOf('MM\0*'));
  const little = tiff.toString('latin1', 0, 2) === 'II';
  const u16 = (at: number) => (little ? tiff.readUInt16LE(at) : tiff.readUInt16BE(at));
  const u32 = (at: number) => (little ? tiff.readUInt32LE(at) : tiff.readUInt32BE(at));
  const ifd0 = u32(4);
  for (let i = 0; i < u16(ifd0); i++) {
    const entry = ifd0 + 2 + i * 12;
    if (u16(entry) === 0x8825) return u16(u32(entry + 8));
  }
  return 0;
}

const words = ['invoice', 'hoard', '4217', 'lighthouse'];

/** The words rendered big, in one line, as a PNG. */
async function textImage(name: string, colours: { text: string; background: string }): Promise<string> {
  const path = file(name);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1100" height="180"><rect width="100%" height="100%" fill="${colours.background}"/><text x="30" y="115" font-family="DejaVu Sans, sans-serif" font-size="56" fill="${colours.text}">Invoice HOARD 4217 lighthouse</text></svg>`;
  await sharp(Buffer.from(svg)).png().toFile(path);
  return path;
}

function expectWords(text: string): void {
  const found = text.toLowerCase();
  for (const word of words) expect(found).toContain(word);
}

describe('thumbnails of images', () => {
  it('scales a 2000×1000 PNG to a 512×256 WebP, and never enlarges a small one', async () => {
    const big = await thumbnailOf(await solid('big.png', 2000, 1000, 'png'));
    expect(big.outcome).toEqual({ ok: true, width: 512, height: 256, sourceWidth: 2000, sourceHeight: 1000 });
    const meta = await sharp(big.outPath).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 512, 256]);

    const small = await thumbnailOf(await solid('small.png', 100, 80, 'png'));
    expect(small.outcome).toEqual({ ok: true, width: 100, height: 80, sourceWidth: 100, sourceHeight: 80 });
    expect((await sharp(small.outPath).metadata()).width).toBe(100);
  });

  it('turns a JPEG as its EXIF orientation says, and keeps none of its metadata (no GPS position)', async () => {
    const path = file('rotated.jpg');
    await sharp({ create: { width: 400, height: 300, channels: 3, background: '#cc6633' } })
      .withExif({ IFD0: { Make: 'Hoard test camera' }, IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '51/1 30/1 0/1', GPSLongitudeRef: 'W', GPSLongitude: '0/1 7/1 0/1' } })
      .withMetadata({ orientation: 6 })
      .jpeg()
      .toFile(path);
    const input = await sharp(path).metadata();
    expect(input.orientation).toBe(6);
    expect(gpsEntries(input.exif!)).toBe(4);

    const { outcome, outPath } = await thumbnailOf(path);
    expect(outcome).toEqual({ ok: true, width: 300, height: 400, sourceWidth: 300, sourceHeight: 400 });
    const meta = await sharp(outPath).metadata();
    expect([meta.width, meta.height]).toEqual([300, 400]);
    expect(meta.exif).toBeUndefined();
    expect(meta.xmp).toBeUndefined();
    expect(meta.orientation).toBeUndefined();
    const bytes = readFileSync(outPath).toString('latin1');
    for (const marker of ['Exif', 'EXIF', 'GPS', 'Hoard test camera', 'XMP ']) expect(bytes).not.toContain(marker);
  });

  it('takes the first frame of an animated GIF', async () => {
    // Two 40×40 frames: red, then blue.
    const frames = Buffer.alloc(40 * 80 * 3);
    for (let i = 0; i < frames.length; i += 3) frames[i < frames.length / 2 ? i : i + 2] = 255;
    const path = file('animated.gif');
    await sharp(frames, { raw: { width: 40, height: 80, channels: 3, pageHeight: 40 } }).gif().toFile(path);
    expect((await sharp(path).metadata()).pages).toBe(2);

    const { outcome, outPath } = await thumbnailOf(path);
    expect(outcome).toEqual({ ok: true, width: 40, height: 40, sourceWidth: 40, sourceHeight: 40 });
    const meta = await sharp(outPath).metadata();
    expect(meta.pages ?? 1).toBe(1);
    const { channels } = await sharp(outPath).stats();
    expect(channels[0]!.mean).toBeGreaterThan(200);
    expect(channels[2]!.mean).toBeLessThan(50);
  });

  it('reads WebP, AVIF and TIFF', async () => {
    for (const format of ['webp', 'avif', 'tiff'] as const) {
      const { outcome, outPath } = await thumbnailOf(await solid(`input.${format}`, 800, 600, format));
      expect(outcome, format).toEqual({ ok: true, width: 512, height: 384, sourceWidth: 800, sourceHeight: 600 });
      expect((await sharp(outPath).metadata()).format).toBe('webp');
    }
  });

  it('refuses a decompression bomb from its header at once, and goes on working', async () => {
    const normal = await solid('before-bomb.png', 300, 200, 'png');
    expect((await thumbnailOf(normal)).outcome.ok).toBe(true); // the process is up

    const bomb = file('bomb.png');
    writeFileSync(bomb, decompressionBomb());
    let started = performance.now();
    const { outcome, outPath } = await thumbnailOf(bomb);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(outcome).toMatchObject({ ok: false, reason: 'failed' });
    expect(existsSync(outPath)).toBe(false);

    started = performance.now();
    expect(await worker.recognize({ path: bomb })).toMatchObject({ ok: false, reason: 'failed' });
    expect(performance.now() - started).toBeLessThan(1000);

    expect((await thumbnailOf(normal)).outcome).toMatchObject({ ok: true, width: 300, height: 200 });
  });

  it('fails for bytes that are no image, and answers unsupported for an SVG', async () => {
    const garbage = file('garbage.bin');
    writeFileSync(garbage, Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919) % 251)));
    expect((await thumbnailOf(garbage)).outcome).toMatchObject({ ok: false, reason: 'failed' });
    expect(await worker.recognize({ path: garbage })).toMatchObject({ ok: false, reason: 'failed' });

    const svg = file('drawing.svg');
    writeFileSync(svg, '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><circle cx="50" cy="50" r="40"/></svg>');
    expect((await thumbnailOf(svg)).outcome).toMatchObject({ ok: false, reason: 'unsupported' });
  });
});

describe('thumbnails of videos and PDFs', () => {
  const video = async (name: string, seconds: number) => {
    const path = file(name);
    await run('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25', '-t', String(seconds), '-pix_fmt', 'yuv420p', '-y', path]);
    return path;
  };

  it('takes a frame of a video, also of one shorter than a second', async () => {
    const long = await thumbnailOf(await video('two-seconds.mp4', 2), 'video');
    expect(long.outcome).toEqual({ ok: true, width: 320, height: 240, sourceWidth: 320, sourceHeight: 240 });
    const meta = await sharp(long.outPath).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 320, 240]);

    const short = await thumbnailOf(await video('short.mp4', 0.4), 'video');
    expect(short.outcome).toMatchObject({ ok: true, width: 320, height: 240 });
    // The temporary frames beside the thumbnails are gone.
    expect(readdirSync(dir).filter((name) => name.endsWith('.png') && name.includes('.webp.'))).toEqual([]);
  });

  it('refuses a playlist in place of a video: ffmpeg must not fetch what it names', async () => {
    const playlist = file('playlist.mp4');
    writeFileSync(playlist, '#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nfile:///etc/hostname\n#EXT-X-ENDLIST\n');
    expect((await thumbnailOf(playlist, 'video')).outcome).toMatchObject({ ok: false, reason: 'failed' });
  });

  it('renders the first page of a PDF', async () => {
    const path = file('hello.pdf');
    writeFileSync(path, onePagePdf('Hello PDF'));
    const { outcome, outPath } = await thumbnailOf(path, 'pdf');
    // Rendered at 1024 px on the longest side: 1024×512 for a page of 200×100 points.
    expect(outcome).toEqual({ ok: true, width: 512, height: 256, sourceWidth: 1024, sourceHeight: 512 });
    const meta = await sharp(outPath).metadata();
    expect(meta.format).toBe('webp');
    expect(Math.max(meta.width, meta.height)).toBeLessThanOrEqual(512);
    // Not a blank page: the text is there.
    expect((await sharp(outPath).stats()).channels[0]!.min).toBeLessThan(100);
  });

  it('answers unsupported for videos and PDFs where ffmpeg and pdftoppm are not installed', async () => {
    const bare = new MediaWorker({ maxPixels: 50_000_000, ocrConcurrency: 1, log, env: { ...process.env, PATH: join(dir, 'no-tools') } });
    try {
      const pdf = file('bare.pdf');
      writeFileSync(pdf, onePagePdf('Hello PDF'));
      expect(await bare.thumbnail({ path: await video('bare.mp4', 1), kind: 'video', outPath: outFile() })).toMatchObject({ ok: false, reason: 'unsupported' });
      expect(await bare.thumbnail({ path: pdf, kind: 'pdf', outPath: outFile() })).toMatchObject({ ok: false, reason: 'unsupported' });
    } finally {
      await bare.close();
    }
    expect(await MediaWorker.tools()).toEqual({ ffmpeg: true, pdftoppm: true });
  });
});

describe('text recognition', () => {
  it('reads the words of an image, dark on light and light on dark', async () => {
    const light = await worker.recognize({ path: await textImage('light.png', { text: '#151515', background: '#fafafa' }) });
    expect(light.ok).toBe(true);
    if (light.ok) expectWords(light.text);
    const dark = await worker.recognize({ path: await textImage('dark.png', { text: '#e6e6e6', background: '#1c1c1c' }) });
    expect(dark.ok).toBe(true);
    if (dark.ok) expectWords(dark.text);
    // The model is read where it is, and no copy of it is written.
    expect(existsSync(join(process.cwd(), 'eng.traineddata'))).toBe(false);
  });

  it('runs every thread of its process, and what that starts, at nice 19', async () => {
    expect((await thumbnailOf(await solid('nice.png', 900, 900, 'png'))).outcome.ok).toBe(true);
    const [pid] = mediaChildren();
    expect(pid).toBeDefined();
    const threads = readdirSync(`/proc/${pid}/task`);
    expect(threads.length).toBeGreaterThan(5); // V8's, libuv's, libvips' and tesseract's threads
    for (const thread of threads) {
      const stat = readFileSync(`/proc/${pid}/task/${thread}/stat`, 'utf8');
      expect(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16], `thread ${thread}`).toBe('19');
    }
  });

  it('reads its model from node_modules and reaches no network', async () => {
    expect(ocrLanguageDir.startsWith(join(repoRoot, 'node_modules') + '/')).toBe(true);
    expect(existsSync(join(ocrLanguageDir, 'eng.traineddata.gz'))).toBe(true);

    // A process in a network namespace of its own (no interface but a loopback that is down):
    // whatever tesseract.js would download would fail there. The script does not close the worker:
    // it must exit by itself once the answer is in, as an idle worker keeps nothing alive.
    const script = file('offline.mjs');
    writeFileSync(
      script,
      [
        `import os from 'node:os';`,
        `import { pino } from ${JSON.stringify(pathToFileURL(createRequire(import.meta.url).resolve('pino')).href)};`,
        `import { MediaWorker } from ${JSON.stringify(pathToFileURL(join(repoRoot, 'src/media/media-worker.ts')).href)};`,
        `const worker = new MediaWorker({ maxPixels: 50_000_000, ocrConcurrency: 1, log: pino({ level: 'silent' }) });`,
        `const outcome = await worker.recognize({ path: process.argv[2] });`,
        `const external = Object.values(os.networkInterfaces()).flat().filter((address) => address && !address.internal);`,
        `console.log(JSON.stringify({ outcome, external: external.length }));`,
      ].join('\n'),
    );
    const image = await textImage('offline.png', { text: '#151515', background: '#ffffff' });
    const child = spawn('unshare', ['--net', process.execPath, script, image], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(code).toBe(0);
    const { outcome, external } = JSON.parse(stdout) as { outcome: { ok: boolean; text?: string }; external: number };
    expect(external).toBe(0);
    expect(outcome.ok).toBe(true);
    expectWords(outcome.text!);
  });
});

describe('the process', () => {
  it('kills a process that misses a deadline; its requests reject, and the next request gets a new one', async () => {
    const hasty = new MediaWorker({ maxPixels: 50_000_000, ocrConcurrency: 1, ocrTimeoutMs: 1, log });
    try {
      const image = await solid('deadline.png', 600, 400, 'png');
      const before = new Set(mediaChildren());
      const thumbnail = hasty.thumbnail({ path: image, kind: 'image', outPath: outFile() });
      const ocr = hasty.recognize({ path: image });
      // The thumbnail was pending in the process the recognition's deadline killed.
      await Promise.all([expect(ocr).rejects.toBeInstanceOf(MediaWorkerError), expect(thumbnail).rejects.toBeInstanceOf(MediaWorkerError)]);
      expect(await hasty.thumbnail({ path: image, kind: 'image', outPath: outFile() })).toMatchObject({ ok: true, width: 512 });
      await vi.waitFor(() => expect(mediaChildren().filter((pid) => !before.has(pid))).toHaveLength(1), { timeout: 5000 });
    } finally {
      await hasty.close();
    }
  });

  it('rejects the requests of a process that dies, and starts another', async () => {
    const fragile = new MediaWorker({ maxPixels: 50_000_000, ocrConcurrency: 1, log });
    try {
      const image = await solid('crash.png', 600, 400, 'png');
      const before = new Set(mediaChildren());
      const pending = fragile.recognize({ path: await textImage('crash-text.png', { text: '#000', background: '#fff' }) });
      let pid: number | undefined;
      await vi.waitFor(() => {
        pid = mediaChildren().find((candidate) => !before.has(candidate));
        expect(pid).toBeDefined();
      });
      process.kill(pid!, 'SIGKILL');
      await expect(pending).rejects.toBeInstanceOf(MediaWorkerError);
      expect(await fragile.thumbnail({ path: image, kind: 'image', outPath: outFile() })).toMatchObject({ ok: true });
    } finally {
      await fragile.close();
    }
  });

  it('ends its process when idle, and starts it again on demand', async () => {
    const resting = new MediaWorker({ maxPixels: 50_000_000, ocrConcurrency: 1, idleMs: 200, log });
    try {
      const image = await solid('idle.png', 60, 40, 'png');
      const before = new Set(mediaChildren());
      const fresh = () => mediaChildren().filter((pid) => !before.has(pid));
      expect(await resting.thumbnail({ path: image, kind: 'image', outPath: outFile() })).toMatchObject({ ok: true });
      expect(fresh()).toHaveLength(1);
      await vi.waitFor(() => expect(fresh()).toEqual([]), { timeout: 5000 });
      expect(await resting.thumbnail({ path: image, kind: 'image', outPath: outFile() })).toMatchObject({ ok: true });
      expect(fresh()).toHaveLength(1);
    } finally {
      await resting.close();
    }
  });

  it('ends an ffmpeg that misses its own deadline, and goes on working', async () => {
    // A named pipe with no writer: ffmpeg waits forever to open it.
    const pipe = file('stuck-video.mp4');
    await run('mkfifo', [pipe]);
    const patient = new MediaWorker({ maxPixels: 50_000_000, ocrConcurrency: 1, thumbnailTimeoutMs: 4000, log });
    try {
      const image = await solid('patient.png', 60, 40, 'png');
      const before = new Set(mediaChildren());
      expect(await patient.thumbnail({ path: image, kind: 'image', outPath: outFile() })).toMatchObject({ ok: true });
      const [pid] = mediaChildren().filter((candidate) => !before.has(candidate));
      const started = performance.now();
      await expect(patient.thumbnail({ path: pipe, kind: 'video', outPath: outFile() })).rejects.toThrow(/ffmpeg took longer than 2000 ms/);
      expect(performance.now() - started).toBeLessThan(4000);
      expect(processesWith(pipe)).toEqual([]);
      // The same process answers: only ffmpeg was ended.
      expect(await patient.thumbnail({ path: image, kind: 'image', outPath: outFile() })).toMatchObject({ ok: true });
      expect(mediaChildren().filter((candidate) => !before.has(candidate))).toEqual([pid]);
    } finally {
      await patient.close();
    }
  });

  it('kills the ffmpeg a process runs together with the process', async () => {
    const pipe = file('stuck-video-2.mp4');
    await run('mkfifo', [pipe]);
    const dense = file('dense.png');
    const lines = Array.from({ length: 40 }, (_, i) => `<text x="10" y="${24 + i * 26}" font-family="DejaVu Sans, sans-serif" font-size="17" fill="#222">line ${i} of a dense page of words that takes tesseract several seconds to read, invoice lighthouse</text>`);
    await sharp(Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="1920" height="1080"><rect width="100%" height="100%" fill="#fff"/>${lines.join('')}</svg>`)).png().toFile(dense);
    const hasty = new MediaWorker({ maxPixels: 50_000_000, ocrConcurrency: 1, ocrTimeoutMs: 1500, log });
    try {
      const video = hasty.thumbnail({ path: pipe, kind: 'video', outPath: outFile() });
      await vi.waitFor(() => expect(processesWith(pipe).length).toBeGreaterThan(0), { timeout: 5000 });
      await Promise.all([expect(hasty.recognize({ path: dense })).rejects.toThrow(/recognize took longer than 1500 ms/), expect(video).rejects.toBeInstanceOf(MediaWorkerError)]);
      await vi.waitFor(() => expect(processesWith(pipe)).toEqual([]), { timeout: 2000 });
    } finally {
      await hasty.close();
    }
  });

  it('close() ends the process, rejects what is pending and refuses new requests', async () => {
    const closing = new MediaWorker({ maxPixels: 50_000_000, ocrConcurrency: 1, log });
    const before = new Set(mediaChildren());
    const pending = closing.recognize({ path: await textImage('closing.png', { text: '#000', background: '#fff' }) });
    await vi.waitFor(() => expect(mediaChildren().filter((pid) => !before.has(pid))).toHaveLength(1));
    await Promise.all([expect(pending).rejects.toBeInstanceOf(MediaWorkerError), closing.close()]);
    expect(mediaChildren().filter((pid) => !before.has(pid))).toEqual([]);
    await expect(closing.thumbnail({ path: file('closing.png'), kind: 'image', outPath: outFile() })).rejects.toBeInstanceOf(MediaWorkerError);
  });
});
