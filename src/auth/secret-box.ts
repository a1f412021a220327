import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ensureDataDir } from '../data-dir.ts';

/**
 * Encrypts secrets the instance must be able to read back (webhook signing secrets, the legacy upload
 * credential) with AES-256-GCM.
 *
 * The key is derived with HKDF-SHA256 from the `SECRET_KEY` environment variable or, when it is unset,
 * from `DATA_DIR/secret.key`, a random key written (mode 0600) on first start. Several processes
 * sharing one PostgreSQL database must share the key: give them the same SECRET_KEY (or the same
 * secret.key file). A sealed value is bound to a context string (e.g. the webhook's ID) as GCM
 * additional data, so a ciphertext copied to another row does not open. One key serves every kind of
 * secret: the contexts differ (a webhook's ID; `upload-credential:<account ID>`).
 *
 * Format: `v1.<base64url(12-byte IV ‖ ciphertext ‖ 16-byte tag)>`.
 */
export class SecretBox {
  private readonly key: Buffer;

  /** `material`: the SECRET_KEY text or the key file's content; `purpose` separates derived keys. */
  constructor(material: string, purpose = 'hoard webhook secrets v1') {
    if (material.length < 32) throw new Error('The secret key must be at least 32 characters');
    this.key = Buffer.from(hkdfSync('sha256', Buffer.from(material, 'utf8'), Buffer.from('hoard-secret-box'), Buffer.from(purpose), 32));
  }

  seal(plaintext: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `v1.${Buffer.concat([iv, ciphertext, cipher.getAuthTag()]).toString('base64url')}`;
  }

  /** Throws when the value was sealed with another key or context, or was altered. */
  open(sealed: string, context: string): string {
    if (!sealed.startsWith('v1.')) throw new Error('Unknown sealed-secret format');
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    if (raw.length < 12 + 16) throw new Error('Sealed secret is truncated');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString('utf8');
  }

  /**
   * A keyed digest of `data` (HMAC-SHA256 under a key derived for `purpose`): the same in every
   * process sharing the key, unpredictable without it. For values that must look random but stay
   * stable, e.g. the made-up passkey offered for an email without passkeys (contract §8).
   */
  digest(purpose: string, data: string): Buffer {
    const key = Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), Buffer.from(`digest:${purpose}`), 32));
    return createHmac('sha256', key).update(data, 'utf8').digest();
  }
}

export const KEY_FILE = 'secret.key';

/**
 * The instance's SecretBox: from SECRET_KEY, else from DATA_DIR/secret.key, which is created with a
 * random key when missing (exclusively, so processes starting together agree on one file), unless
 * the database already holds secrets sealed with a key (`sealedSecretsExist`): a `DATA_DIR`
 * restored without its key file got a new key that opened none of them, and what was sealed with
 * it before the operator noticed would not open with the real key once put back.
 */
export function loadSecretBox(config: { secretKey: string | null; dataDir: string }, sealedSecretsExist: boolean): SecretBox {
  if (config.secretKey) return new SecretBox(config.secretKey);
  const file = path.join(config.dataDir, KEY_FILE);
  ensureDataDir(config.dataDir);
  if (!fs.existsSync(file)) {
    if (sealedSecretsExist) {
      throw new Error(`${file} is missing, and the database holds secrets sealed with a key (two-factor secrets, upload credentials, webhook signing secrets): restore it from the backup, or set SECRET_KEY to the key. If the key is lost, set SECRET_KEY to a new one of at least 32 characters (README, "SECRET_KEY" says what then has to be made anew)`);
    }
    // Written to a temporary file and hard-linked into place: the link fails if another process won
    // the race, and nobody ever reads a half-written key.
    const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    fs.writeFileSync(temporary, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    try {
      fs.linkSync(temporary, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      fs.rmSync(temporary, { force: true });
    }
  }
  const material = fs.readFileSync(file, 'utf8').trim();
  if (material.length < 32) throw new Error(`${file} does not hold a key (at least 32 characters); delete it to generate a new one`);
  return new SecretBox(material);
}
