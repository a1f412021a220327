import { sha256Hex } from './secrets.ts';
// Algorithm.Argon2id; the package exports it as a const enum, which type stripping cannot inline.
const options = { algorithm: 2 } as const;

export const MIN_PASSWORD_LENGTH = 8;

/**
 * The Argon2 binding (a native module), loaded on first use: about 2 MiB of resident memory from
 * start, which only password checks and changes need (sign-in, registration, password-protected
 * files), not the token and session requests that are most of a process's work.
 */
let argon2: Promise<typeof import('@node-rs/argon2')> | undefined;
const loadArgon2 = () => (argon2 ??= import('@node-rs/argon2'));

/**
 * Passwords are hashed as NFKC text (NIST SP 800-63B, 5.1.1.2): "pässwörd" typed composed on one
 * keyboard and decomposed on another (macOS text, some input methods), or a full-width digit from a
 * Japanese input method, is the same password.
 */
export async function hashPassword(password: string): Promise<string> {
  const { hash } = await loadArgon2();
  return hash(password.normalize('NFKC'), options);
}

/**
 * What stands for an account's password hash where a step of a sign-in is recorded (a two-factor
 * ticket): a session is made only while the account's hash still has this fingerprint.
 */
export const passwordFingerprint = (passwordHash: string): string => sha256Hex(passwordHash);

// Verifying against this when the account does not exist keeps a failed login's timing the same
// whether or not the email is registered.
let decoy: Promise<string> | undefined;

/**
 * Whether `password` opens `passwordHash`: `'as typed'` when it did only as the text was typed
 * (a hash made before passwords were normalised, of text that is not NFKC), which the caller may
 * replace with a hash of the normalised text; truthy either way.
 */
export async function verifyPassword(passwordHash: string | null, password: string): Promise<boolean | 'as typed'> {
  const { verify } = await loadArgon2();
  const normalized = password.normalize('NFKC');
  // A hash made before passwords were normalised is of the text as it was typed then.
  const candidates = normalized === password ? [password] : [normalized, password];
  if (passwordHash === null) {
    decoy ??= hashPassword('decoy password that matches nothing');
    for (const candidate of candidates) await verify(await decoy, candidate).catch(() => false);
    return false;
  }
  for (const candidate of candidates) {
    try {
      if (await verify(passwordHash, candidate)) return candidate === normalized ? true : 'as typed';
    } catch {
      return false;
    }
  }
  return false;
}
