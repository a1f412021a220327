/**
 * The media figures (contract §10; method in docs/benchmarks.md), each beside a baseline measured in
 * the same run:
 * - the thumbnail of a 24-megapixel photo, made by Hoard's media worker (its low-priority process,
 *   reached over IPC, as the jobs reach it), beside sharp doing the same in the benchmark's process;
 *   and, for what a user waits, the time from the upload's answer until the thumbnail is served;
 * - text recognition of a 1920×1080 screenshot by the media worker's long-lived tesseract worker,
 *   beside tesseract.js called directly with the same language data;
 * - 16 concurrent 10 KiB PNG uploads with thumbnails and text recognition on, beside the same
 *   instance with both switched off in the same run: media work must not slow uploads down.
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import pino from 'pino';
import sharp from 'sharp';
import { createWorker, OEM } from 'tesseract.js';
import { MediaWorker, ocrLanguageDir } from '../../src/media/media-worker.ts';
import type { ChildServer } from './child.ts';
import { startHoard } from './hoard.ts';
import { fileIdOf, sessionJson, signIn, uploadFromDisk } from './archives.ts';
import { figure, type Figure } from './report.ts';
import { smallFileUploads } from './uploads.ts';
import { median, round } from './stats.ts';

export interface MediaBenchOptions {
  workDir: string;
  reps: number;
  seconds: number;
  log: (message: string) => void;
  children: ChildServer[];
}

const THUMBNAIL_RUNS = 7;
const OCR_RUNS = 5;

/** A 6000×4000 photo-like JPEG: a gradient with detail everywhere (noise), quality 90. */
async function photo24mp(file: string): Promise<void> {
  const width = 6000;
  const height = 4000;
  const noise = await sharp({ create: { width, height, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } })
    .blur(1.2)
    .raw()
    .toBuffer();
  await sharp(noise, { raw: { width, height, channels: 3 } })
    .composite([{ input: Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><defs><linearGradient id="g"><stop offset="0" stop-color="#1d4f91" stop-opacity="0.6"/><stop offset="1" stop-color="#e0a030" stop-opacity="0.6"/></linearGradient></defs><rect width="100%" height="100%" fill="url(#g)"/></svg>`) }])
    .jpeg({ quality: 90 })
    .toFile(file);
}

/**
 * A 1920×1080 screenshot of a document window: a title bar, a side bar of 8 short items, and 20
 * lines of 18 px body text (about 1,600 characters), dark on light, as a screenshot tool captures.
 */
export async function screenshot1080p(file: string): Promise<{ words: string[] }> {
  const sentences = [
    'Quarterly report for the northern region, prepared for the budget meeting on Thursday.',
    'Revenue grew by 12 percent while operating costs stayed within the approved forecast.',
    'The invoice backlog was cleared in March after the new approval workflow went live.',
    'Customer support answered 4,210 tickets with a median first response of 38 minutes.',
    'Shipping delays in February came from the warehouse move and are now resolved.',
  ];
  const lines = Array.from({ length: 20 }, (_, i) => `${sentences[i % sentences.length]}`);
  const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const side = ['Inbox', 'Drafts', 'Reports', 'Invoices', 'Archive', 'Shared', 'Settings', 'Help'];
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1920" height="1080">
<rect width="1920" height="1080" fill="#f6f7f9"/>
<rect width="1920" height="44" fill="#2b2f36"/><text x="24" y="29" font-family="DejaVu Sans, sans-serif" font-size="16" fill="#f0f0f0">Quarterly report - Documents</text>
<rect y="44" width="260" height="1036" fill="#e9ecf1"/>
${side.map((item, i) => `<text x="28" y="${100 + i * 40}" font-family="DejaVu Sans, sans-serif" font-size="17" fill="#333">${item}</text>`).join('')}
${lines.map((line, i) => `<text x="320" y="${110 + i * 42}" font-family="DejaVu Sans, sans-serif" font-size="18" fill="#1b1d21">${escape(line)}</text>`).join('')}
</svg>`;
  await sharp(Buffer.from(svg)).png().toFile(file);
  return { words: ['quarterly', 'invoice', 'warehouse', 'approval'] };
}

/** A 10 KiB PNG (noise keeps it from compressing), like a small screenshot crop. */
async function smallPng(): Promise<Buffer> {
  for (let side = 40; ; side++) {
    const png = await sharp({ create: { width: side, height: side, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 60 } } }).png().toBuffer();
    if (png.length >= 10 * 1024) return png;
  }
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const started = performance.now();
  const result = await work();
  return { ms: performance.now() - started, result };
}

export async function mediaSection(options: MediaBenchOptions): Promise<Figure[]> {
  const { workDir, log, children } = options;
  const dir = path.join(workDir, 'media');
  fs.mkdirSync(dir, { recursive: true });
  const photo = path.join(dir, 'photo-24mp.jpg');
  const shot = path.join(dir, 'screenshot-1080p.png');
  await photo24mp(photo);
  const { words } = await screenshot1080p(shot);
  log(`media: a 6000×4000 JPEG (${(fs.statSync(photo).size / 1e6).toFixed(1)} MB) and a 1920×1080 screenshot (${(fs.statSync(shot).size / 1e3).toFixed(0)} kB)`);

  // The worker as the jobs use it (its own process at nice 19, over IPC).
  const worker = new MediaWorker({ maxPixels: 100_000_000, ocrConcurrency: 1, log: pino({ level: 'silent' }) });
  const thumbnails: number[] = [];
  const baselineThumbnails: number[] = [];
  let size = { width: 0, height: 0 };
  try {
    const out = path.join(dir, 'thumb.webp');
    // One warm-up each: the worker's process start and sharp's first load are not a thumbnail's cost.
    await worker.thumbnail({ path: photo, kind: 'image', outPath: out });
    await sharp(photo).rotate().resize(512, 512, { fit: 'inside', withoutEnlargement: true }).webp().toFile(out);
    for (let run = 0; run < THUMBNAIL_RUNS; run++) {
      const made = await timed(() => worker.thumbnail({ path: photo, kind: 'image', outPath: out }));
      if (!made.result.ok) throw new Error(`thumbnail failed: ${made.result.message}`);
      size = { width: made.result.width, height: made.result.height };
      thumbnails.push(made.ms);
      baselineThumbnails.push((await timed(() => sharp(photo, { limitInputPixels: 100_000_000 }).rotate().resize(512, 512, { fit: 'inside', withoutEnlargement: true }).webp().toFile(out))).ms);
    }
    log(`media:   thumbnail ${median(thumbnails).toFixed(0)} ms (${size.width}×${size.height}), sharp in-process ${median(baselineThumbnails).toFixed(0)} ms`);

    const recognitions: number[] = [];
    let text = '';
    await worker.recognize({ path: shot });
    for (let run = 0; run < OCR_RUNS; run++) {
      const read = await timed(() => worker.recognize({ path: shot }));
      if (!read.result.ok) throw new Error(`recognition failed: ${read.result.message}`);
      text = read.result.text;
      recognitions.push(read.ms);
    }
    const missing = words.filter((w) => !text.toLowerCase().includes(w));
    if (missing.length) throw new Error(`recognition missed ${missing.join(', ')}: ${text.slice(0, 300)}`);
    const direct = await createWorker('eng', OEM.LSTM_ONLY, { langPath: ocrLanguageDir, gzip: true, cacheMethod: 'none' });
    const baselineRecognitions: number[] = [];
    try {
      await direct.recognize(shot);
      for (let run = 0; run < OCR_RUNS; run++) baselineRecognitions.push((await timed(() => direct.recognize(shot))).ms);
    } finally {
      await direct.terminate();
    }
    log(`media:   text recognition ${median(recognitions).toFixed(0)} ms (${text.length} characters), tesseract.js in-process ${median(baselineRecognitions).toFixed(0)} ms`);

    // What a user waits for: upload answered → thumbnail served, on an idle instance.
    const hoard = await startHoard({ workDir: path.join(dir, 'hoard') });
    children.push(hoard.server);
    const base = hoard.server.url;
    const session = await signIn(base);
    const endToEnd: number[] = [];
    for (let run = 0; run < 5; run++) {
      const links = await uploadFromDisk(base, hoard.token, photo, `photo-${run}.jpg`, 'image/jpeg');
      const started = performance.now();
      const id = fileIdOf(links);
      for (;;) {
        const answer = await fetch(`${base}/api/files/${id}/thumbnail`, { headers: { cookie: session.cookie } });
        await answer.arrayBuffer();
        if (answer.status === 200) break;
        if (performance.now() - started > 60_000) throw new Error('no thumbnail within a minute');
        // A browser would ask rarely; a tight loop would itself be the load that media work gives way to.
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      endToEnd.push(performance.now() - started);
    }
    log(`media:   upload answered → thumbnail served ${median(endToEnd).toFixed(0)} ms`);

    // Uploads with media work off and on, on the same instance (switched through the settings).
    const png = await smallPng();
    // Six pairs of short runs rather than three of long ones: each pair is measured within a few
    // seconds, so the machine's slower minutes (its neighbours, writeback) fall on both sides.
    const pairs = options.reps * 2;
    const seconds = Math.max(4, Math.round(options.seconds / 2));
    const rate = async () => (await smallFileUploads(base, hoard.token, { size: png.length, concurrency: 16, seconds, warmupSeconds: 1, content: png, name: 'shot.png', type: 'image/png' })).filesPerSecond;
    // Off and on alternate, so that neither side is measured only on the larger database or the
    // busier machine of a later minute.
    const off: number[] = [];
    const on: number[] = [];
    for (let run = 0; run < pairs; run++) {
      for (const enabled of [false, true]) {
        await sessionJson(session, 'PATCH', '/api/settings', 200, { thumbnailsEnabled: enabled, ocrEnabled: enabled });
        // As before every upload figure: no run pays for the writeback of what came before it (the
        // archives section writes gigabytes just before this one), each upload being fsynced.
        spawnSync('sync');
        (enabled ? on : off).push(await rate());
      }
      log(`media:   pair ${run + 1}: off ${off.at(-1)!.toFixed(0)}, on ${on.at(-1)!.toFixed(0)} files/s`);
    }
    const progress = (await sessionJson(session, 'GET', '/api/settings/media', 200)).data;
    log(`media:   ${png.length} B PNG uploads, 16 concurrent: off ${median(off).toFixed(0)} files/s, on ${median(on).toFixed(0)} files/s (thumbnails done ${progress.thumbnails.done}, text done ${progress.ocr.done}, waiting ${progress.thumbnails.pending} + ${progress.ocr.pending})`);
    await hoard.server.stop();
    children.splice(children.indexOf(hoard.server), 1);

    return [
      figure({
        id: 'media.thumbnail.24mp',
        label: 'thumbnail of a 24-megapixel JPEG (media worker), median',
        unit: 'ms',
        value: median(thumbnails),
        baseline: median(baselineThumbnails),
        baselineLabel: 'sharp in-process',
        target: { on: 'value', op: '<', value: 400 },
        detail: { runsMs: thumbnails.map((v) => round(v, 1)), baselineRunsMs: baselineThumbnails.map((v) => round(v, 1)), jpegBytes: fs.statSync(photo).size, thumbnail: size },
      }),
      figure({
        id: 'media.thumbnail.endToEnd',
        label: 'the same: upload answered → thumbnail served, median',
        unit: 'ms',
        value: median(endToEnd),
        baseline: null,
        baselineLabel: null,
        target: null,
        detail: { runsMs: endToEnd.map((v) => round(v, 1)) },
      }),
      figure({
        id: 'media.ocr.1080p',
        label: `text recognition of a 1920×1080 screenshot (${text.length} characters), median`,
        unit: 'ms',
        value: median(recognitions),
        baseline: median(baselineRecognitions),
        baselineLabel: 'tesseract.js in-process',
        target: { on: 'value', op: '<', value: 3000 },
        detail: { runsMs: recognitions.map((v) => round(v, 0)), baselineRunsMs: baselineRecognitions.map((v) => round(v, 0)) },
      }),
      figure({
        id: 'media.uploads.png',
        label: '10 KiB PNG uploads, 16 concurrent, thumbnails and text recognition on (SQLite)',
        unit: 'files/s',
        value: median(on),
        baseline: median(off),
        baselineLabel: 'the same with both off',
        target: { on: 'ratio', op: '>=', value: 0.9 },
        detail: { onRuns: on.map((v) => round(v, 1)), offRuns: off.map((v) => round(v, 1)), progressAfter: progress },
      }),
    ];
  } finally {
    await worker.close();
  }
}
