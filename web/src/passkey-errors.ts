/**
 * The browser's WebAuthn failures in the app's words. Its own ("The operation either timed out or
 * was not allowed. See: https://www.w3.org/TR/webauthn-2/…") told a user nothing they could act on.
 * @simplewebauthn/browser passes most of them through with the browser's error as `cause`.
 */
export function explainPasskeyError(error: unknown, ceremony: 'sign-in' | 'register'): unknown {
  const names = [nameOf(error), nameOf((error as { cause?: unknown } | null)?.cause)];
  const code = (error as { code?: unknown } | null)?.code;
  if (names.includes('NotAllowedError') || names.includes('AbortError') || code === 'ERROR_CEREMONY_ABORTED') {
    return new Error(
      ceremony === 'sign-in'
        ? 'No passkey was used: this device has none for this site, or the request was cancelled or timed out. Try again, or sign in with your password.'
        : 'No passkey was added: the request was cancelled or timed out. Try again.',
    );
  }
  if (names.includes('InvalidStateError') || code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED') return new Error('This device already holds a passkey for this account.');
  if (names.includes('SecurityError')) return new Error("Passkeys work only at the site's own address over HTTPS (or on localhost): open Hoard at the address its administrator set.");
  return error;
}

const nameOf = (value: unknown) => (value instanceof Error || (typeof DOMException !== 'undefined' && value instanceof DOMException) ? value.name : null);
