import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

/**
 * A software WebAuthn authenticator for tests (contract §8, "Passkeys"): what a browser and a
 * platform authenticator together hand the server. It makes ES256 (P-256) or RS256 key pairs,
 * answers registrations with attestation `none`, keeps every credential resident (discoverable, with
 * its user handle) and signs assertions over authenticatorData ‖ SHA-256(clientDataJSON). Each
 * credential's signature counter can be set, and steps by `counterStep` on every assertion (0: an
 * authenticator that keeps no counter).
 */

type Algorithm = 'ES256' | 'RS256';

interface StoredCredential {
  id: Buffer;
  rpId: string;
  userHandle: string;
  privateKey: KeyObject;
  counter: number;
}

export interface CeremonyOverrides {
  /** The page's origin the client reports in clientDataJSON (default: the authenticator's origin). */
  origin?: string;
  /** The RP ID whose hash the authenticator signs (default: the options' RP ID). */
  rpId?: string;
  /** Sign this challenge instead of the options' one. */
  challenge?: string;
  /** Report user verification (default true). */
  userVerified?: boolean;
  /** Registration: make the credential with this ID (base64url), as a forged answer could. */
  credentialId?: string;
  /**
   * Report the ceremony as made in a frame of another site: clientDataJSON's crossOrigin, with that
   * site as topOrigin, or without one (null) as browsers that do not report it write.
   */
  framedBy?: string | null;
  /** Name this top origin in clientDataJSON without saying the page is framed (no browser does). */
  topOriginOnly?: string;
}

interface RegistrationOptions {
  challenge: string;
  rp: { id?: string; name: string };
  user: { id: string; name: string; displayName: string };
  pubKeyCredParams: Array<{ alg: number; type: string }>;
  excludeCredentials?: Array<{ id: string }>;
}

interface RequestOptions {
  challenge: string;
  rpId?: string;
  allowCredentials?: Array<{ id: string }>;
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

function counterBytes(counter: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(counter);
  return out;
}

function coseKey(algorithm: Algorithm, publicKey: KeyObject): Uint8Array {
  const jwk = publicKey.export({ format: 'jwk' });
  const bytes = (value: string | undefined) => new Uint8Array(Buffer.from(value!, 'base64url'));
  if (algorithm === 'ES256') {
    return isoCBOR.encode(new Map<number, number | Uint8Array>([[1, 2], [3, -7], [-1, 1], [-2, bytes(jwk.x)], [-3, bytes(jwk.y)]]));
  }
  return isoCBOR.encode(new Map<number, number | Uint8Array>([[1, 3], [3, -257], [-1, bytes(jwk.n)], [-2, bytes(jwk.e)]]));
}

/** clientDataJSON as a browser writes it: crossOrigin, and topOrigin when the page is in another site's frame. */
function clientData(type: string, challenge: string, origin: string, overrides: CeremonyOverrides): string {
  const { framedBy, topOriginOnly } = overrides;
  const topOrigin = typeof framedBy === 'string' ? framedBy : topOriginOnly;
  return JSON.stringify({ type, challenge, origin, crossOrigin: framedBy !== undefined, ...(topOrigin === undefined ? {} : { topOrigin }) });
}

export class SoftwareAuthenticator {
  readonly origin: string;
  readonly algorithm: Algorithm;
  /** Added to a credential's counter on every assertion. */
  counterStep = 1;
  private readonly credentials: StoredCredential[] = [];

  constructor(origin: string, algorithm: Algorithm = 'ES256') {
    this.origin = origin;
    this.algorithm = algorithm;
  }

  /** navigator.credentials.create(): a `RegistrationResponseJSON` for the server's options. */
  register(options: RegistrationOptions, overrides: CeremonyOverrides = {}) {
    const alg = this.algorithm === 'ES256' ? -7 : -257;
    if (!options.pubKeyCredParams.some((p) => p.alg === alg)) throw new Error(`the server does not offer ${this.algorithm}`);
    const excluded = new Set((options.excludeCredentials ?? []).map((c) => c.id));
    if (this.credentials.some((c) => excluded.has(b64url(c.id)))) throw new Error('InvalidStateError: this authenticator already holds a credential of the account');
    const rpId = overrides.rpId ?? options.rp.id ?? new URL(this.origin).hostname;
    const { privateKey, publicKey } =
      this.algorithm === 'ES256' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('rsa', { modulusLength: 2048 });
    const id = overrides.credentialId === undefined ? randomBytes(32) : Buffer.from(overrides.credentialId, 'base64url');
    const credential: StoredCredential = { id, rpId, userHandle: options.user.id, privateKey, counter: 0 };
    this.credentials.push(credential);

    const credentialIdLength = Buffer.alloc(2);
    credentialIdLength.writeUInt16BE(id.length);
    const flags = FLAG_UP | FLAG_AT | (overrides.userVerified === false ? 0 : FLAG_UV);
    const authData = Buffer.concat([sha256(rpId), Buffer.from([flags]), counterBytes(0), Buffer.alloc(16), credentialIdLength, id, coseKey(this.algorithm, publicKey)]);
    const attestationObject = isoCBOR.encode(new Map<string, string | Map<string, string> | Uint8Array>([['fmt', 'none'], ['attStmt', new Map<string, string>()], ['authData', new Uint8Array(authData)]]));
    const clientDataJSON = clientData('webauthn.create', overrides.challenge ?? options.challenge, overrides.origin ?? this.origin, overrides);
    return {
      id: b64url(id),
      rawId: b64url(id),
      type: 'public-key' as const,
      response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ['internal', 'hybrid'] },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform' as const,
    };
  }

  /**
   * navigator.credentials.get(): an `AuthenticationResponseJSON`. With `allowCredentials` the first
   * listed credential this authenticator holds answers; without, a resident credential of the RP ID
   * (a discoverable-credential sign-in).
   */
  signIn(options: RequestOptions, overrides: CeremonyOverrides & { credentialId?: string } = {}) {
    const rpId = overrides.rpId ?? options.rpId ?? new URL(this.origin).hostname;
    const allowed = (options.allowCredentials ?? []).map((c) => c.id);
    const credential = overrides.credentialId
      ? this.credential(overrides.credentialId)
      : allowed.length > 0
        ? this.credentials.find((c) => allowed.includes(b64url(c.id)))
        : this.credentials.find((c) => c.rpId === (options.rpId ?? rpId));
    if (!credential) throw new Error('NotAllowedError: no credential of this authenticator fits the request');
    credential.counter += this.counterStep;
    const flags = FLAG_UP | (overrides.userVerified === false ? 0 : FLAG_UV);
    const authenticatorData = Buffer.concat([sha256(rpId), Buffer.from([flags]), counterBytes(credential.counter)]);
    const clientDataJSON = clientData('webauthn.get', overrides.challenge ?? options.challenge, overrides.origin ?? this.origin, overrides);
    const signed = Buffer.concat([authenticatorData, sha256(clientDataJSON)]);
    // ES256: an ASN.1 DER ECDSA signature; RS256: RSASSA-PKCS1-v1_5 (node's defaults for these keys).
    const signature = sign('sha256', signed, credential.privateKey);
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: 'public-key' as const,
      response: { clientDataJSON: b64url(clientDataJSON), authenticatorData: b64url(authenticatorData), signature: b64url(signature), userHandle: credential.userHandle },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform' as const,
    };
  }

  /** The IDs (base64url) of the credentials held, oldest first. */
  get credentialIds(): string[] {
    return this.credentials.map((c) => b64url(c.id));
  }

  /** Sets a credential's signature counter (the next assertion reports it plus `counterStep`). */
  setCounter(credentialId: string, counter: number): void {
    this.credential(credentialId).counter = counter;
  }

  private credential(id: string): StoredCredential {
    const found = this.credentials.find((c) => b64url(c.id) === id);
    if (!found) throw new Error(`no credential ${id}`);
    return found;
  }
}
