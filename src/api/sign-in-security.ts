import { z } from 'zod';
import { success, timestamp } from './envelope.ts';
import { meSchema } from './accounts.ts';

/**
 * Sign-in security (contract §8): two-factor codes, passkeys and the session history. All but the
 * sign-in steps take a browser session only.
 */

/** POST /api/auth/totp/setup: a new secret, pending until a first code confirms it. */
export const totpSetupResponse = success(
  z.object({
    secret: z.string().describe('Base32, at least 160 bits; for typing into an authenticator app'),
    otpauthUrl: z.string().describe('`otpauth://totp/…`: the same secret as a QR code'),
  }),
);

/** POST /api/auth/totp/enable and /api/auth/recovery-codes: ten single-use codes, shown once. */
export const recoveryCodesResponse = success(z.object({ recoveryCodes: z.array(z.string()).describe('Each works once, instead of a code') }));

export const twoFactorMethods = ['totp', 'recovery'] as const;

/** The password step of a sign-in with two-factor on: no cookie yet, a ticket for the code step. */
export const twoFactorChallengeSchema = z
  .object({
    twoFactorRequired: z.literal(true),
    ticket: z.string().describe('For POST /api/auth/login/two-factor: lasts 5 minutes, works once, dies after 5 wrong codes'),
    methods: z.array(z.enum(twoFactorMethods)),
  })
  .meta({ id: 'TwoFactorChallenge' });
export type TwoFactorChallenge = z.infer<typeof twoFactorChallengeSchema>;

/** POST /api/auth/login: signed in (`{user}`, with the cookie), or the two-factor step. */
export const loginResponse = success(z.union([z.object({ user: meSchema }), twoFactorChallengeSchema]));
export type LoginResponse = z.infer<typeof loginResponse>;

/** A passkey registered on the account (contract §8, "Passkeys"). */
export const passkeySchema = z
  .object({
    id: z.string(),
    name: z.string().describe('1–80 characters'),
    createdAt: timestamp,
    lastUsedAt: timestamp.nullable().describe('The last sign-in with it; null: never used'),
  })
  .meta({ id: 'Passkey' });
export type Passkey = z.infer<typeof passkeySchema>;

export const passkeyResponse = success(z.object({ passkey: passkeySchema }));
export const passkeyListResponse = success(z.object({ passkeys: z.array(passkeySchema) }));

/**
 * WebAuthn options in their standard JSON form (`PublicKeyCredentialCreationOptionsJSON` or
 * `PublicKeyCredentialRequestOptionsJSON`), passed to the browser as they are: every field is kept.
 */
export const passkeyOptionsResponse = success(z.object({ options: z.looseObject({ challenge: z.string() }) }));

export const signInMethods = ['password', 'two-factor', 'passkey'] as const;

/** A live browser session of the account (contract §8, "Session history"). */
export const sessionRecordSchema = z
  .object({
    id: z.string().describe('An opaque identifier: never the cookie value or its hash'),
    createdAt: timestamp,
    lastSeenAt: timestamp,
    expiresAt: timestamp,
    ip: z.string().nullable().describe('The client address of the sign-in'),
    userAgent: z.string().nullable().describe('The browser of the sign-in'),
    method: z.enum(signInMethods),
    current: z.boolean().describe('The session of this request'),
  })
  .meta({ id: 'BrowserSession' });
export type SessionRecord = z.infer<typeof sessionRecordSchema>;

export const sessionListResponse = success(z.object({ sessions: z.array(sessionRecordSchema).describe('Newest first') }));

/**
 * Until when this browser session may add a passkey or turn on two-factor: its sign-in or its latest
 * password confirmation, plus an hour (docs/decisions.md, "Recent sign-in").
 */
const confirmationSchema = z.object({ confirmedUntil: timestamp.describe('May be in the past: confirm the password again (POST /api/auth/confirm)') });
export const confirmationResponse = success(confirmationSchema);
export type SessionConfirmation = z.infer<typeof confirmationSchema>;
