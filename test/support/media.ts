import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.ts';

/**
 * Test media made in the tests themselves (contract §10): photos with EXIF, text to recognise, a
 * decompression bomb, a video and a PDF.
 */

/** A JPEG whose EXIF turns it on its side (orientation 6) and names where it was taken (GPS). */
export function jpegWithGps(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: '#357' } })
    .withExif({ IFD0: { Make: 'HoardCam' }, IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '51/1 30/1 0/1', GPSLongitudeRef: 'W', GPSLongitude: '0/1 7/1 0/1' } })
    .withMetadata({ orientation: 6 })
    .jpeg()
    .toBuffer();
}

export function solidPng(width: number, height: number, background = '#c83'): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background } }).png().toBuffer();
}

/** Known words, drawn large enough to be read, as a screenshot would show them. */
export function pngWithWords(words: string, options: { dark?: boolean } = {}): Promise<Buffer> {
  const [bg, fg] = options.dark ? ['#1e1f24', '#e8e8e8'] : ['#ffffff', '#111111'];
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="160"><rect width="100%" height="100%" fill="${bg}"/><text x="30" y="100" font-family="DejaVu Sans, sans-serif" font-size="48" fill="${fg}">${words}</text></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/**
 * A decompression bomb: a few hundred bytes whose header claims 60,000 × 60,000 pixels (3.6
 * gigapixels, gigabytes once decoded). Only its first rows are there; a reader that trusts the
 * header before checking the pixel count would try to hold the whole image.
 */
export function pngBomb(side = 60_000): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header[8] = 8; // bit depth
  header[9] = 0; // greyscale
  const rows = Buffer.alloc(64 * (side + 1)); // 64 rows of zeros, filter byte 0
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

/** A two-second 320×240 MP4 from ffmpeg's test pattern (CI installs ffmpeg). */
export function mp4(width = 320, height = 240, seconds = 2): Buffer {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-video-')), 'clip.mp4');
  const made = spawnSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', `testsrc=size=${width}x${height}:rate=25`, '-t', String(seconds), '-pix_fmt', 'yuv420p', '-movflags', '+faststart', out]);
  if (made.status !== 0) throw new Error(`ffmpeg could not make a test video: ${made.stderr?.toString() ?? made.error}`);
  const bytes = fs.readFileSync(out);
  fs.rmSync(path.dirname(out), { recursive: true, force: true });
  return bytes;
}

/** A 320×240 MP4 whose first second is red and next two seconds blue: which frame a thumbnail shows. */
export function redThenBlueMp4(): Buffer {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-video-')), 'clip.mp4');
  const made = spawnSync('ffmpeg', [
    ...['-v', 'error', '-f', 'lavfi', '-i', 'color=c=red:s=320x240:r=10:d=1', '-f', 'lavfi', '-i', 'color=c=blue:s=320x240:r=10:d=2'],
    ...['-filter_complex', '[0:v][1:v]concat=n=2:v=1[v]', '-map', '[v]', '-pix_fmt', 'yuv420p', '-movflags', '+faststart', out],
  ]);
  if (made.status !== 0) throw new Error(`ffmpeg could not make a test video: ${made.stderr?.toString() ?? made.error}`);
  const bytes = fs.readFileSync(out);
  fs.rmSync(path.dirname(out), { recursive: true, force: true });
  return bytes;
}

/** A one-page PDF (200 × 100 pt) saying "Hello PDF", written by hand with exact xref offsets. */
export function onePagePdf(): Buffer {
  const content = 'BT /F1 24 Tf 20 40 Td (Hello PDF) Tj ET';
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let pdf = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(pdf, 'latin1'));
    pdf += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(pdf, 'latin1');
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, 'latin1');
}

type MediaRow = Pick<Database['files'], 'thumbnailKey' | 'thumbnailWidth' | 'thumbnailHeight' | 'mediaWidth' | 'mediaHeight' | 'ocrText'> & { thumbnailStatus: string; ocrStatus: string };

/**
 * Runs due jobs until the file's media work is no longer pending (the server's own runner works
 * too; this only makes the wait short). Throws after `timeoutMs`.
 */
export async function mediaSettled(server: { jobs: { runDueJobs(): Promise<number> }; ctx: { db: Kysely<Database> } }, fileId: string, timeoutMs = 60_000): Promise<MediaRow> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await server.jobs.runDueJobs();
    const row = await server.ctx.db
      .selectFrom('files')
      .select(['thumbnailStatus', 'thumbnailKey', 'thumbnailWidth', 'thumbnailHeight', 'mediaWidth', 'mediaHeight', 'ocrStatus', 'ocrText'])
      .where('id', '=', fileId)
      .executeTakeFirstOrThrow();
    if (row.thumbnailStatus !== 'pending' && row.ocrStatus !== 'pending') return row;
    if (Date.now() > deadline) throw new Error(`media work of ${fileId} still pending: ${JSON.stringify(row)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
