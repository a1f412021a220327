import { describe, expect, it } from 'vitest';
import { formFileName, nameCandidates, nameFromBytes, sanitizeFileName } from '../../src/shared/naming.ts';

describe('names stored as bytes', () => {
  it('reads a name as UTF-8 when it is UTF-8, as Latin-1 otherwise', () => {
    expect(nameFromBytes(Buffer.from('café ✓ 😀.txt'))).toBe('café ✓ 😀.txt');
    expect(nameFromBytes(Buffer.from([0x63, 0x61, 0x66, 0xe9]))).toBe('café');
    // A lone continuation byte, or a truncated sequence, is not UTF-8 either.
    expect(nameFromBytes(Buffer.from([0x61, 0x80]))).toBe('a\u0080');
    expect(nameFromBytes(Buffer.from([0x61, 0xe2, 0x9c]))).toBe('a\u00e2\u009c');
  });
});

describe('sanitised file names', () => {
  it('are cut to length between characters, never inside one', () => {
    // 195 letters, then emoji of two UTF-16 units each: the cut before `.txt` (at 196 units) falls
    // inside the first emoji, which goes whole.
    expect(sanitizeFileName('a.txt ')).toBe('a.txt');
    expect(sanitizeFileName(' two words.txt\t')).toBe('two_words.txt');
    // A tab or line break between words separates them, as a space does.
    expect(sanitizeFileName('Foo  Bar\tBaz\r\nQux\u0085end.txt')).toBe('Foo_Bar_Baz_Qux_end.txt');
    expect(sanitizeFileName('bell\u0007ring.txt')).toBe('bellring.txt');
    expect(sanitizeFileName('half\ud83d.txt')).toBe('half\ufffd.txt');
    expect(sanitizeFileName('\udc00lone.txt')).toBe('\ufffdlone.txt');
    const cut = sanitizeFileName(`${'a'.repeat(195)}😀😀😀.txt`);
    expect(cut).toBe(`${'a'.repeat(195)}.txt`);
    expect(cut.isWellFormed()).toBe(true);
    expect(cut.endsWith('.txt')).toBe(true);
    expect(cut.length).toBeLessThanOrEqual(200);
  });

  it('reads the quotes and line breaks a browser sends percent-encoded in a form file name', () => {
    // The HTML form encoding writes " as %22 and CR, LF as %0D, %0A; they were kept as digits.
    expect(formFileName('say %22hi%22.txt')).toBe('say "hi".txt');
    expect(sanitizeFileName(formFileName('say %22hi%22.txt'))).toBe('say_hi.txt');
    expect(formFileName('a%0D%0Ab.txt')).toBe('a\r\nb.txt');
    // Nothing else is decoded: a name with a percent sign of its own keeps it.
    expect(formFileName('100%25 done.txt')).toBe('100%25 done.txt');
  });

  it('keep a number for a name taken within the limit, before a real extension only', () => {
    const numbered = (name: string) => {
      const candidates = nameCandidates(name);
      candidates.next();
      return candidates.next().value!;
    };
    expect(numbered('photo.png')).toBe('photo-1.png');
    expect(numbered(`${'b'.repeat(196)}.txt`)).toBe(`${'b'.repeat(194)}-1.txt`);
    expect(numbered('Dr._Smiths_notes')).toBe('Dr._Smiths_notes-1');
    // A joiner beside a dot joins nothing; a stem with nothing to see is no name.
    expect(sanitizeFileName('a\u200d.txt')).toBe('a.txt');
    expect(sanitizeFileName('x\u200d.\u200dy')).toBe('x.y');
    expect(sanitizeFileName('\u200d.htaccess')).toBe('htaccess');
    expect(sanitizeFileName('\u200c_\u200d-.txt')).toBe(sanitizeFileName('.txt'));
    expect(sanitizeFileName('a_\u200d_b.txt')).toBe('a_b.txt');
    expect(sanitizeFileName('\u3164.txt')).toBe('file.txt');
    expect(sanitizeFileName('\u3164a.txt')).toBe('\u3164a.txt');
    // A letter and its accent (decomposed, as some systems keep it) are never parted by a cut.
    expect(sanitizeFileName(`${'x'.repeat(195)}e\u0301\u0301\u0301.txt`).normalize('NFD').endsWith('x.txt')).toBe(true);
  });
});
