import { describe, expect, it } from 'vitest';
import { isActiveContent } from '../../src/files/file-access.ts';

describe('isActiveContent', () => {
  it('ignores parameters and case, as a browser does', () => {
    for (const type of ['Text/JavaScript; charset=utf-8', 'TEXT/HTML', 'application/ld+xml;q=1', ' image/svg+xml ']) expect(isActiveContent(type), type).toBe(true);
  });

  it('leaves types a browser only shows or downloads', () => {
    for (const type of ['application/json', 'text/plain', 'text/css', 'image/png', 'application/pdf', 'application/octet-stream', 'video/mp4']) expect(isActiveContent(type), type).toBe(false);
  });
});
