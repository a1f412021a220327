import { Secret, TOTP } from 'otpauth';

/** The TOTP step (contract §8): 30 seconds. */
export const STEP_MS = 30_000;

/** The code an authenticator app shows for `secret` at `timestamp`. */
export const codeAt = (secret: string, timestamp: number) => new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: STEP_MS / 1000 }).generate({ timestamp });

/**
 * The code of the step before the current one, which the server takes only until the current step
 * ends. It is taken at least `margin` before that end (waiting for the next step otherwise), so that
 * the request carrying it arrives in time even on a busy machine: a browser test's click and fetch
 * took long enough under load to cross the step's end.
 */
export async function previousStepCode(secret: string, margin = 10_000): Promise<string> {
  const left = STEP_MS - (Date.now() % STEP_MS);
  if (left < margin) await new Promise((resolve) => setTimeout(resolve, left + 50));
  return codeAt(secret, Date.now() - STEP_MS);
}
