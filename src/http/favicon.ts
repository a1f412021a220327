import { crc32, deflateSync } from 'node:zlib';

/**
 * `/favicon.ico`: Hoard's mark (the app's icon, web/index.html) as a 32 × 32 PNG inside an ICO
 * container, drawn here once so that no binary file needs to ship. Browsers ask for it on every
 * page they show, the share pages included.
 */
const SIZE = 32;
const BRAND: [number, number, number] = [0x4f, 0x46, 0xe5];

function pixels(): Buffer {
  const rows: Buffer[] = [];
  const inside = (x: number, y: number, x0: number, y0: number, x1: number, y1: number, radius: number) => {
    if (x < x0 || x >= x1 || y < y0 || y >= y1) return false;
    const cx = Math.min(Math.max(x + 0.5, x0 + radius), x1 - radius);
    const cy = Math.min(Math.max(y + 0.5, y0 + radius), y1 - radius);
    return (x + 0.5 - cx) ** 2 + (y + 0.5 - cy) ** 2 <= radius ** 2;
  };
  for (let y = 0; y < SIZE; y++) {
    const row = Buffer.alloc(1 + SIZE * 4); // filter byte 0, then RGBA
    for (let x = 0; x < SIZE; x++) {
      if (!inside(x, y, 0, 0, SIZE, SIZE, 7)) continue;
      // The lid (a bar) and the box below it, in white, as in the app's SVG icon.
      const white = inside(x, y, 8, 11, 24, 14, 0.01) || inside(x, y, 8, 16, 24, 24, 2);
      const [r, g, b] = white ? [255, 255, 255] : BRAND;
      row.set([r, g, b, 255], 1 + x * 4);
    }
    rows.push(row);
  }
  return Buffer.concat(rows);
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

function png(): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(SIZE, 0);
  header.writeUInt32BE(SIZE, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8 bits per channel, RGBA, deflate, no filter method, no interlace
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(pixels())), chunk('IEND', Buffer.alloc(0))]);
}

/** The ICO file: one 32 × 32 image, stored as PNG (which every browser reads inside ICO). */
export function faviconIco(): Buffer {
  const image = png();
  const directory = Buffer.alloc(22);
  directory.writeUInt16LE(0, 0);
  directory.writeUInt16LE(1, 2); // an icon
  directory.writeUInt16LE(1, 4); // one image
  directory.set([SIZE, SIZE, 0, 0], 6); // width, height, no palette, reserved
  directory.writeUInt16LE(1, 10); // colour planes
  directory.writeUInt16LE(32, 12); // bits per pixel
  directory.writeUInt32LE(image.length, 14);
  directory.writeUInt32LE(22, 18); // the image follows the directory
  return Buffer.concat([directory, image]);
}
