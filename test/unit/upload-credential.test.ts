import { describe, expect, it } from 'vitest';
import { newUploadCredential } from '../../src/tokens/legacy-token.ts';
import { SECRET_PREFIX } from '../../src/auth/token-format.ts';

// The legacy upload credential and named tokens share the Authorization header; a value with a named
// token's prefix is judged as one (spec, Authentication), so no credential may begin with it.
describe('a new legacy upload credential', () => {
  it('never begins with the prefix of a named token', () => {
    const values = [`${SECRET_PREFIX}first`, `${SECRET_PREFIX}second`, 'plain-value'];
    expect(newUploadCredential(() => values.shift()!)).toBe('plain-value');
  });

  it('is 32 random bytes in base64url by default', () => {
    const value = newUploadCredential();
    expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newUploadCredential()).not.toBe(value);
  });
});
