import { describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { resolveMimeType } from '../../src/uploads/content-type.ts';

/** The head as the upload's probe keeps it: the first 4,100 bytes. */
const head = (bytes: Buffer) => bytes.subarray(0, 4100);

describe('resolveMimeType and text that spells a signature', () => {
  it('counts a head cut inside a character as text', async () => {
    // "`가" is ARJ's signature; 1,500 Hangul syllables of 3 bytes each cut the head mid-character.
    const text = Buffer.from('`' + '가'.repeat(1500));
    expect(head(text).length).toBe(4100);
    expect(() => new TextDecoder('utf-8', { fatal: true }).decode(head(text))).toThrow();
    await expect(resolveMimeType('text/markdown', head(text), 'notes.md')).resolves.toBe('text/markdown');
  });

  it('counts the control characters of terminal output as text, but not bytes that are not UTF-8', async () => {
    await expect(resolveMimeType('text/plain', Buffer.from('MZ \u001b[31mred\u001b[0m\tdone\r\n'), 'build.log')).resolves.toBe('text/plain');
    const notUtf8 = Buffer.from([0x60, 0xea, 0x41, 0x42, 0x43, 0x0a]);
    await expect(resolveMimeType('text/plain', notUtf8, 'notes.txt')).rejects.toThrow(/does not match the content, which is application\/x-arj/);
  });

  it('keeps a contradiction between two binary formats, and a non-text declaration for text bytes', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
    await expect(resolveMimeType('image/jpeg', png, 'a.jpg')).rejects.toThrow(/does not match/);
    // "BM…" text declared as an image: the declaration is not a text type, so the check stands.
    await expect(resolveMimeType('image/png', Buffer.from('BM25 is a ranking function.'), 'a.png')).rejects.toThrow(/does not match the content, which is image\/bmp/);
  });
});

/** A small ZIP with one entry, as formats built on ZIP begin. */
async function zip(): Promise<Buffer> {
  const archive = new yazl.ZipFile();
  archive.addBuffer(Buffer.from('<page/>'), 'page.xml');
  archive.end();
  const chunks: Buffer[] = [];
  for await (const chunk of archive.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('resolveMimeType and formats built on a container', () => {
  it('takes the declared name of a ZIP, RAR or Compound File based format the signature reader has no name for', async () => {
    const bytes = head(await zip());
    const formats: Array<[string, string]> = [
      ['application/vnd.comicbook+zip', 'issue.cbz'],
      ['application/x-cbz', 'issue.cbz'],
      ['application/vnd.google-earth.kmz', 'places.kmz'],
      ['model/3mf', 'part.3mf'],
      ['application/vnd.ms-package.3dmanufacturing-3dmodel+xml', 'part.3mf'],
      ['application/vnd.ms-visio.drawing', 'plan.vsdx'],
    ];
    for (const [declared, name] of formats) {
      await expect(resolveMimeType(declared, bytes, name), declared).resolves.toBe(declared);
    }
    const rar = Buffer.concat([Buffer.from('Rar!\x1a\x07\x01\x00', 'latin1'), Buffer.alloc(64)]);
    await expect(resolveMimeType('application/vnd.comicbook-rar', rar, 'issue.cbr')).resolves.toBe('application/vnd.comicbook-rar');
  });

  it('still refuses what a container contradicts: a signature format, text, or a format the reader would have named', async () => {
    const bytes = head(await zip());
    for (const declared of ['image/png', 'application/pdf', 'application/json', 'text/plain', 'video/mp4', 'application/x-msdownload']) {
      await expect(resolveMimeType(declared, bytes, 'file.bin'), declared).rejects.toThrow(/does not match the content, which is application\/zip/);
    }
  });

  it('knows the other names of fonts and Encapsulated PostScript', async () => {
    const eps = Buffer.concat([Buffer.from([0xc5, 0xd0, 0xd3, 0xc6]), Buffer.alloc(60)]);
    const detected = await resolveMimeType(undefined, eps, 'figure.eps');
    for (const declared of ['image/x-eps', 'application/postscript']) {
      await expect(resolveMimeType(declared, eps, 'figure.eps'), declared).resolves.toBe(declared === 'image/x-eps' ? detected : declared);
    }
  });
});
