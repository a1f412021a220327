import { describe, expect, it } from 'vitest';
import { loggedUrl } from '../../src/http/logged-url.ts';

describe('the URL a log line shows', () => {
  it('is the URL itself when it holds nothing secret', () => {
    for (const url of ['/api/files', '/api/files?limit=24&sort=name&search=holiday', '/u/abc123', '/api/files?folder=none&tag=x']) expect(loggedUrl(url)).toBe(url);
  });
  it('leaves out the values of parameters named like a secret, and anything shaped like a named token', () => {
    expect(loggedUrl('/api/files?access_token=svc_abc&limit=2')).toBe('/api/files?access_token=[redacted]&limit=2');
    expect(loggedUrl('/x?Password=hunter2')).toBe('/x?Password=[redacted]');
    expect(loggedUrl('/x?api%5Fkey=1&apiKey=2&sig=3&session=4')).toBe('/x?api%5Fkey=[redacted]&apiKey=[redacted]&sig=[redacted]&session=[redacted]');
    expect(loggedUrl('/x?q=svc_secret&r=1')).toBe('/x?q=svc_[redacted]&r=1');
    expect(loggedUrl('/api/svc_secret/files?a=1')).toBe('/api/svc_[redacted]/files?a=1');
    expect(loggedUrl('/api/svc_secret')).toBe('/api/svc_[redacted]');
    // A name that is not valid percent-encoding is judged as it is.
    expect(loggedUrl('/x?%zztoken=1')).toBe('/x?%zztoken=[redacted]');
    // A name spelled with escapes is read as it is meant.
    expect(loggedUrl('/x?p%61ss=1&limit=2')).toBe('/x?p%61ss=[redacted]&limit=2');
  });
});
