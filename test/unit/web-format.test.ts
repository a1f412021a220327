import { describe, expect, it } from 'vitest';
import { describeFailure, formatWait, withHiddenPassword } from '../../web/src/format.ts';

describe("the web app's display of a webhook receiver", () => {
  it('hides the password of the URL, wherever the userinfo ends', () => {
    expect(withHiddenPassword('https://relay:pass-w0rd@hooks.example.test/hoard')).toBe('https://relay:••••@hooks.example.test/hoard');
    // A parser takes the authority's last `@` as the end of the userinfo: what stands before it is password.
    expect(withHiddenPassword('https://relay:p@ss:w@hooks.example.test:8443/a@b?c@d')).toBe('https://relay:••••@hooks.example.test:8443/a@b?c@d');
    expect(withHiddenPassword('http://:only-password@hooks.example.test')).toBe('http://:••••@hooks.example.test');
  });

  it('leaves a URL without a password as it is', () => {
    for (const url of ['https://hooks.example.test/hoard', 'https://relay@hooks.example.test/', 'https://relay:@hooks.example.test/', 'https://hooks.example.test:8443/a@b', 'https://hooks.example.test/?to=a:b@c', 'https://hooks.example.test#a:b@c']) {
      expect(withHiddenPassword(url), url).toBe(url);
    }
  });
});

describe("the web app's words for a wait the server asks for", () => {
  // A 409 that passes shows it after the server's message (web/src/api.ts, describeFailure; the
  // delivery log's Resend in test/browser/web-app-edges.test.ts).
  it('says seconds, minutes or hours, never less than the wait', () => {
    expect([0, 1, 10, 89, 90, 600, 5399, 5400, 3610, 36_000].map(formatWait)).toEqual([
      '1 second',
      '1 second',
      '10 seconds',
      '89 seconds',
      '2 minutes',
      '10 minutes',
      '90 minutes',
      '2 hours',
      '61 minutes',
      '10 hours',
    ]);
  });
});

describe("the web app's words for a failed request", () => {
  const stillArriving =
    'Part 2 is still arriving in an earlier request; send it again once that request is answered (a request cut off frees the part within 30 seconds)';

  it('gives the wait of a conflict that passes once, where the server already says when', () => {
    // The server's words for a part still arriving name the wait themselves (src/chunks/chunked-upload.ts).
    expect(describeFailure(409, { error: stillArriving }, 30)).toBe(stillArriving);
    expect(describeFailure(429, { error: 'Too many sign-in attempts; try again in 15 minutes' }, 900)).toBe('Too many sign-in attempts; try again in 15 minutes');
  });

  it('adds the wait where the server does not say when', () => {
    expect(describeFailure(409, { error: 'A part of this upload is still arriving; complete the upload once every part has been answered' }, 90)).toBe(
      'A part of this upload is still arriving; complete the upload once every part has been answered (try again in 2 minutes)',
    );
    expect(describeFailure(409, {}, 5)).toBe('This conflicts with work still under way (try again in 5 seconds)');
    expect(describeFailure(429, { error: 'Too many uploads started' }, 20)).toBe('Too many uploads started: wait 20 seconds and try again');
    // In the words a person counts in (formatWait), and 60 seconds when the server gives no time.
    expect(describeFailure(429, { error: 'Too many uploads started' }, 600)).toBe('Too many uploads started: wait 10 minutes and try again');
    expect(describeFailure(429, {}, null)).toBe('Too many requests: wait 60 seconds and try again');
  });
});
