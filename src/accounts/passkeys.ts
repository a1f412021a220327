import type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { Db } from '../db/database.ts';
import { forAccount, type Executor } from '../db/account-scope.ts';
import type { PasskeysTable, WebauthnChallengesTable } from '../db/schema.ts';
import { newId } from '../db/ids.ts';
import { isUniqueViolation } from '../db/unique-violation.ts';
import type { SecretBox } from '../auth/secret-box.ts';
import { refundAttempt, takeAttempt } from '../auth/throttle.ts';
import { conflict, invalid, notFound, unauthorized } from '../errors.ts';
import type { Passkey } from '../api/sign-in-security.ts';
import { loginFailureKey, loginLimits } from './login.ts';
import { findUserById, findUserForLogin, normalizeEmail, type UserRow } from './users.ts';
import { clientKey } from '../shared/client-key.ts';

/**
 * Passkeys (contract §8, "Passkeys"): WebAuthn credentials registered on an account, and signing in
 * with one. Verification is @simplewebauthn/server's; what is decided here is which challenge an
 * answer may use (server-side, 5 minutes, once), which account it signs in, and the counter rule.
 */

/** Where passkeys are used: the relying-party ID and the one origin answers may come from. */
export interface RelyingParty {
  id: string;
  origin: string;
  name: string;
}

export function relyingParty(config: { baseUrl: string; webauthnRpId: string }): RelyingParty {
  return { id: config.webauthnRpId, origin: new URL(config.baseUrl).origin, name: 'Hoard' };
}

interface WebAuthn {
  server: typeof import('@simplewebauthn/server');
  isoBase64URL: typeof import('@simplewebauthn/server/helpers').isoBase64URL;
}

/**
 * @simplewebauthn/server, loaded on first use: with its certificate, ASN.1 and CBOR libraries it
 * held about 4 MiB of the server's resident memory from start, for requests most processes rarely
 * see. Its helpers (base64url) come from the same package and load with it.
 */
let webauthnModules: Promise<WebAuthn> | undefined;
function loadWebAuthn(): Promise<WebAuthn> {
  return (webauthnModules ??= Promise.all([import('@simplewebauthn/server'), import('@simplewebauthn/server/helpers')]).then(([server, { isoBase64URL }]) => ({ server, isoBase64URL })));
}

/** A challenge lasts 5 minutes (contract §8); the browser's prompt is given as long. */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000;
/** ES256 and RS256 (contract §8). */
const ALGORITHMS = [-7, -257];
/** Passkeys an account may hold: the sign-in options list them all. */
export const MAX_PASSKEYS = 50;
/** Options asked for per client address (sign-in) or per account (registration) per window. */
export const optionsLimit = { perWindow: 100, windowMs: 15 * 60 * 1000 } as const;

const TOO_MANY_SIGN_INS = 'Too many sign-in attempts; try again later';
const TOO_MANY_OPTIONS = 'Too many passkey requests; try again later';

type Purpose = WebauthnChallengesTable['purpose'];

/**
 * The WebAuthn user handle of an account: its ID's bytes. Its ID is random and says nothing about the
 * person; a discoverable credential hands it back at sign-in.
 */
function userHandleOf({ isoBase64URL }: WebAuthn, userId: string): string {
  return isoBase64URL.fromUTF8String(userId);
}

function view(row: Pick<PasskeysTable, 'id' | 'name' | 'createdAt' | 'lastUsedAt'>): Passkey {
  return {
    id: row.id,
    name: row.name,
    createdAt: new Date(row.createdAt).toISOString(),
    lastUsedAt: row.lastUsedAt === null ? null : new Date(row.lastUsedAt).toISOString(),
  };
}

const viewColumns = ['id', 'name', 'createdAt', 'lastUsedAt'] as const;

function parseTransports(text: string): string[] {
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter((t): t is string => typeof t === 'string') : [];
  } catch {
    return [];
  }
}

/** Stores a new challenge (deleting the expired ones of every account on the way). */
async function issueChallenge(db: Db, challenge: string, purpose: Purpose, userId: string | null): Promise<void> {
  const now = Date.now();
  await db.deleteFrom('webauthnChallenges').where('expiresAt', '<=', now).execute();
  await db.insertInto('webauthnChallenges').values({ challenge, purpose, userId, expiresAt: now + CHALLENGE_TTL_MS }).execute();
}

/**
 * What an answer's clientDataJSON says: the challenge it names (null when it names none), and
 * whether the browser made it in a frame of another site (`crossOrigin`). Hoard's pages refuse to be
 * framed (frame-ancestors 'none'), so a framed answer was not made on them; the WebAuthn library
 * checks this for sign-ins only, and only when the browser also names the top origin.
 */
function clientDataOf({ isoBase64URL }: WebAuthn, clientDataJSON: string): { challenge: string | null; framed: boolean } {
  try {
    const data: unknown = JSON.parse(isoBase64URL.toUTF8String(clientDataJSON));
    const { challenge, crossOrigin, topOrigin } = (data ?? {}) as { challenge?: unknown; crossOrigin?: unknown; topOrigin?: unknown };
    // A top origin is only ever named for a frame; named without crossOrigin, the answer is not a
    // browser's (the library refuses that sign-in too).
    return { challenge: typeof challenge === 'string' && challenge.length > 0 && challenge.length <= 1024 ? challenge : null, framed: crossOrigin === true || topOrigin !== undefined };
  } catch {
    return { challenge: null, framed: false };
  }
}

/**
 * Uses up the challenge an answer names, in one statement (so two processes cannot both use it):
 * found, live and for this purpose (and this account, for a registration), or nothing. An answer
 * that fails afterwards has still used its challenge.
 */
async function consumeChallenge(db: Db, challenge: string, purpose: Purpose, userId?: string): Promise<{ userId: string | null } | null> {
  let query = db.deleteFrom('webauthnChallenges').where('challenge', '=', challenge).where('purpose', '=', purpose);
  if (userId !== undefined) query = query.where('userId', '=', userId);
  const row = await query.returning(['userId', 'expiresAt']).executeTakeFirst();
  if (!row || Number(row.expiresAt) <= Date.now()) return null;
  return { userId: row.userId };
}

export async function countPasskeys(db: Executor, userId: string): Promise<number> {
  const { count } = await forAccount(db, userId)
    .selectFrom('passkeys')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(count);
}

export async function listPasskeys(db: Executor, userId: string): Promise<Passkey[]> {
  const rows = await forAccount(db, userId).selectFrom('passkeys').select(viewColumns).orderBy('createdAt', 'desc').orderBy('id', 'desc').execute();
  return rows.map(view);
}

/** Options for registering a passkey on the account; its passkeys are excluded (contract §8). */
export async function registrationOptions(db: Db, rp: RelyingParty, user: UserRow): Promise<PublicKeyCredentialCreationOptionsJSON> {
  await takeAttempt(db, `passkey-options:account:${user.id}`, optionsLimit.perWindow, optionsLimit.windowMs, TOO_MANY_OPTIONS);
  const existing = await forAccount(db, user.id).selectFrom('passkeys').select(['credentialId', 'transports']).execute();
  const webauthn = await loadWebAuthn();
  const options = await webauthn.server.generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.email,
    userDisplayName: user.name,
    userID: webauthn.isoBase64URL.toBuffer(userHandleOf(webauthn, user.id)),
    timeout: CHALLENGE_TTL_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((c) => ({ id: c.credentialId, transports: parseTransports(c.transports) })),
    // Discoverable where the authenticator can (sign-in without an email); user verification always,
    // since a passkey sign-in asks for nothing else (contract §8: no two-factor code).
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
    supportedAlgorithmIDs: ALGORITHMS,
  });
  await issueChallenge(db, options.challenge, 'registration', user.id);
  return options;
}

const REGISTRATION_FAILED = 'The passkey could not be verified; start again';

/** Verifies a registration answer and stores the passkey; 400 when it does not verify. */
export async function registerPasskey(db: Db, rp: RelyingParty, user: UserRow, input: { name: string; response: RegistrationResponseJSON }): Promise<Passkey> {
  const webauthn = await loadWebAuthn();
  const { challenge, framed } = clientDataOf(webauthn, input.response.response.clientDataJSON);
  if (!challenge || !(await consumeChallenge(db, challenge, 'registration', user.id)) || framed) throw invalid(REGISTRATION_FAILED);
  let verified;
  try {
    verified = await webauthn.server.verifyRegistrationResponse({
      response: input.response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
      supportedAlgorithmIDs: ALGORITHMS,
    });
  } catch {
    throw invalid(REGISTRATION_FAILED);
  }
  if (!verified.verified) throw invalid(REGISTRATION_FAILED);
  const { credential } = verified.registrationInfo;
  if ((await countPasskeys(db, user.id)) >= MAX_PASSKEYS) throw conflict(`An account can hold at most ${MAX_PASSKEYS} passkeys; delete one first`);
  const row = {
    id: newId(),
    credentialId: credential.id,
    publicKey: webauthn.isoBase64URL.fromBuffer(credential.publicKey),
    counter: credential.counter,
    transports: JSON.stringify((credential.transports ?? []).slice(0, 10)),
    name: input.name,
    createdAt: Date.now(),
    lastUsedAt: null,
  };
  try {
    await forAccount(db, user.id).insertInto('passkeys', row).execute();
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    // Taken by another account: answered as an answer that does not verify. Sign-in options hand out
    // an email's credential IDs to anyone (made-up ones for an address without passkeys,
    // docs/decisions.md), and a 409 here told a signed-in prober which of them were real.
    const own = await forAccount(db, user.id).selectFrom('passkeys').select('id').where('credentialId', '=', credential.id).executeTakeFirst();
    if (!own) throw invalid(REGISTRATION_FAILED);
    throw conflict('This passkey is already registered');
  }
  return view(row);
}

export async function renamePasskey(db: Db, userId: string, id: string, name: string): Promise<Passkey> {
  const account = forAccount(db, userId);
  const result = await account.updateTable('passkeys').set({ name }).where('id', '=', id).executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw notFound('Passkey not found');
  return view(await account.selectFrom('passkeys').select(viewColumns).where('id', '=', id).executeTakeFirstOrThrow());
}

export async function deletePasskey(db: Db, userId: string, id: string): Promise<void> {
  const result = await forAccount(db, userId).deleteFrom('passkeys').where('id', '=', id).executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) throw notFound('Passkey not found');
}

/**
 * Credential IDs of the lengths authenticators use (16 and 20 bytes from the platforms' password
 * managers, 32 and 64 from others), so that a made-up one does not stand out by its length.
 */
const DECOY_ID_LENGTHS = [16, 16, 20, 32, 64] as const;

/**
 * The made-up credentials of an address without passkeys: one, or two for one address in four (as
 * accounts with a second passkey have), each of a length authenticators use; every byte from keyed
 * digests of the address, so the same on every request and in every process.
 */
function decoyCredentials(secretBox: SecretBox, email: string): Buffer[] {
  const seed = secretBox.digest('passkey-decoy', email);
  const count = seed[0]! % 4 === 0 ? 2 : 1;
  return Array.from({ length: count }, (_, i) => {
    const length = DECOY_ID_LENGTHS[seed[1 + i]! % DECOY_ID_LENGTHS.length]!;
    return Buffer.concat([secretBox.digest(`passkey-decoy:${i}:0`, email), secretBox.digest(`passkey-decoy:${i}:1`, email)]).subarray(0, length);
  });
}

/**
 * Options for signing in. With an email: that account's credentials as `allowCredentials`. So that
 * the answer does not tell whether the address has an account (or passkeys), an address without
 * passkeys gets made-up credentials (decoyCredentials): the same on every request and in every
 * process, and shaped like real ones. Without an email: a discoverable-credential request.
 */
export async function signInOptions(db: Db, rp: RelyingParty, secretBox: SecretBox, input: { email?: string | undefined; ip: string }): Promise<PublicKeyCredentialRequestOptionsJSON> {
  await takeAttempt(db, `passkey-options:ip:${clientKey(input.ip)}`, optionsLimit.perWindow, optionsLimit.windowMs, TOO_MANY_OPTIONS);
  const webauthn = await loadWebAuthn();
  let userId: string | null = null;
  let allowCredentials: Array<{ id: string }> | undefined;
  if (input.email !== undefined) {
    const user = await findUserForLogin(db, input.email);
    const credentials = user ? await forAccount(db, user.id).selectFrom('passkeys').select('credentialId').orderBy('createdAt').orderBy('id').execute() : [];
    if (user && credentials.length > 0) {
      userId = user.id;
      // Transports are left out: a made-up credential would have none, and would stand out.
      allowCredentials = credentials.map((c) => ({ id: c.credentialId }));
    } else {
      allowCredentials = decoyCredentials(secretBox, normalizeEmail(input.email)).map((id) => ({ id: webauthn.isoBase64URL.fromBuffer(new Uint8Array(id)) }));
    }
  }
  const options = await webauthn.server.generateAuthenticationOptions({
    rpID: rp.id,
    timeout: CHALLENGE_TTL_MS,
    userVerification: 'required',
    ...(allowCredentials ? { allowCredentials } : {}),
  });
  await issueChallenge(db, options.challenge, 'authentication', userId);
  return options;
}

/**
 * Signs in with a passkey: the account whose credential signed a live sign-in challenge (bound to
 * that account when the options were asked for an email), with user verification, from this
 * instance's origin and RP ID, and with a signature counter that moved forwards (or stays 0: some
 * authenticators keep none). Every failure is the generic 401. Attempts count toward the per-address
 * sign-in limit before anything is verified; a successful one gives its count back.
 */
export async function signInWithPasskey(db: Db, rp: RelyingParty, input: { response: AuthenticationResponseJSON; ip: string }): Promise<UserRow> {
  const throttleKey = loginFailureKey(input.ip);
  await takeAttempt(db, throttleKey, loginLimits.failuresPerIp, loginLimits.windowMs, TOO_MANY_SIGN_INS);
  const user = await verifySignIn(db, rp, input.response);
  if (!user) throw unauthorized();
  await refundAttempt(db, throttleKey);
  return user;
}

async function verifySignIn(db: Db, rp: RelyingParty, response: AuthenticationResponseJSON): Promise<UserRow | null> {
  const webauthn = await loadWebAuthn();
  const { challenge, framed } = clientDataOf(webauthn, response.response.clientDataJSON);
  if (!challenge) return null;
  const issued = await consumeChallenge(db, challenge, 'authentication');
  if (!issued || framed) return null;
  const passkey = await db.selectFrom('passkeys').selectAll().where('credentialId', '=', response.id).executeTakeFirst();
  if (!passkey) return null;
  if (issued.userId !== null && issued.userId !== passkey.userId) return null;
  // A discoverable credential names its account too: it must be the credential's.
  if (response.response.userHandle !== undefined && response.response.userHandle !== userHandleOf(webauthn, passkey.userId)) return null;
  let verified;
  try {
    verified = await webauthn.server.verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: { id: passkey.credentialId, publicKey: webauthn.isoBase64URL.toBuffer(passkey.publicKey), counter: Number(passkey.counter), transports: parseTransports(passkey.transports) as never },
      requireUserVerification: true,
    });
  } catch {
    return null;
  }
  if (!verified.verified) return null;
  const { newCounter } = verified.authenticationInfo;
  // Conditional, so that of two answers carrying the same counter (a clone racing the original) one
  // fails: the counter must still be below the new one, or both must be 0.
  const moved = await db
    .updateTable('passkeys')
    .set({ counter: newCounter, lastUsedAt: Date.now() })
    .where('id', '=', passkey.id)
    .where((eb) => (newCounter === 0 ? eb('counter', '=', 0) : eb('counter', '<', newCounter)))
    .executeTakeFirst();
  if (Number(moved.numUpdatedRows) === 0) return null;
  return (await findUserById(db, passkey.userId)) ?? null;
}
