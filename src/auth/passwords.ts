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

export async function hashPassword(password: string): Promise<string> {
  const { hash } = await loadArgon2();
  return hash(password, options);
}

// Verifying against this when the account does not exist keeps a failed login's timing the same
// whether or not the email is registered.
let decoy: Promise<string> | undefined;

export async function verifyPassword(passwordHash: string | null, password: string): Promise<boolean> {
  const { verify } = await loadArgon2();
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
