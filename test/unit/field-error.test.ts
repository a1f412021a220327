import { describe, expect, it } from 'vitest';
import { fieldError } from '../../web/src/field-error.ts';

describe("the web app's reading of an API message about one field", () => {
  it('reads the field with or without the part of the request it came in', () => {
    expect(fieldError('body.currentPassword: must be at least 8 characters')).toEqual({ field: 'currentPassword', problem: 'must be at least 8 characters' });
    expect(fieldError('expiresAt: must be in the future')).toEqual({ field: 'expiresAt', problem: 'must be in the future' });
    expect(fieldError('name: you already have a tag named "work"')).toEqual({ field: 'name', problem: 'you already have a tag named "work"' });
    expect(fieldError('querystring.limit: must be 1 to 100')).toEqual({ field: 'limit', problem: 'must be 1 to 100' });
  });

  it('leaves a message about no one field as it is', () => {
    expect(fieldError('The declared file type image/jpeg does not match the content, which is image/png')).toBeNull();
    expect(fieldError('Too many sign-in attempts; try again later')).toBeNull();
  });
});
