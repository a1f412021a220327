import { clientKey } from '../shared/client-key.ts';

/**
 * The throttle keys of sign-in (docs/decisions.md, "Sign-in throttling"), apart from the sign-in
 * itself so that an administrator's reset of an account can clear its own without importing it.
 */

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The throttle key of failed sign-ins from one address, whatever the account. */
export function loginFailureKey(ip: string): string {
  return `login:ip:${clientKey(ip)}`;
}

/** The throttle key of sign-in attempts on one account from one address (password and code steps). */
export function loginAttemptKey(email: string, ip: string): string {
  return `${accountSignInKeys(email)}${clientKey(ip)}`;
}

/** The throttle key of wrong current passwords given to change an account's own settings. */
export function passwordChangeKey(userId: string): string {
  return `password-change:${userId}`;
}

/** What every key of `loginAttemptKey` for this account begins with, whatever the address. */
export function accountSignInKeys(email: string): string {
  return `login:account:${normalizeEmail(email)}:ip:`;
}
