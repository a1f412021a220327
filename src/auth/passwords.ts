import { hash, verify } from '@node-rs/argon2';

// Algorithm.Argon2id; the package exports it as a const enum, which type stripping cannot inline.
const options = { algorithm: 2 } as const;

export const MIN_PASSWORD_LENGTH = 8;

export function hashPassword(password: string): Promise<string> {
  return hash(password, options);
}

// Verifying against this when the account does not exist keeps a failed login's timing the same
// whether or not the email is registered.
let decoy: Promise<string> | undefined;

export async function verifyPassword(passwordHash: string | null, password: string): Promise<boolean> {
  if (passwordHash === null) {
    decoy ??= hashPassword('decoy password that matches nothing');
    await verify(await decoy, password).catch(() => false);
    return false;
  }
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}
