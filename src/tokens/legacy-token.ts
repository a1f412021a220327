import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import type { SecretBox } from '../auth/secret-box.ts';
import { randomSecret, sha256Hex } from '../auth/secrets.ts';
import { SECRET_PREFIX } from '../auth/token-format.ts';
import { accountGone, conflict } from '../errors.ts';

/**
 * The legacy upload credential is shown again whenever asked (uploader configurations embed it), so
 * it is kept sealed by the secret box, bound to its account, beside the hash it is authenticated by.
 */
export const uploadCredentialSealContext = (userId: string) => `upload-credential:${userId}`;

/** The account's legacy upload credential, created on first request. */
export async function getUploadToken(db: Db, box: SecretBox, log: Logger, userId: string): Promise<string> {
  const row = await db.selectFrom('users').select('uploadTokenEncrypted').where('id', '=', userId).executeTakeFirstOrThrow(accountGone);
  if (row.uploadTokenEncrypted === null) return regenerateUploadToken(db, box, userId);
  try {
    return box.open(row.uploadTokenEncrypted, uploadCredentialSealContext(userId));
  } catch (error) {
    // The credential still authenticates (by its hash); only showing it again needs the key.
    log.error({ userId, err: error }, 'the upload credential does not open with this instance secret key');
    throw conflict("The upload credential was stored with another secret key (SECRET_KEY or DATA_DIR/secret.key); regenerate it to see a new one");
  }
}

/** A new value; the previous one (and every configuration embedding it) stops working at once. */
export async function regenerateUploadToken(db: Db, box: SecretBox, userId: string): Promise<string> {
  const token = newUploadCredential();
  await db
    .updateTable('users')
    .set({ uploadToken: null, uploadTokenEncrypted: box.seal(token, uploadCredentialSealContext(userId)), uploadTokenHash: sha256Hex(token), updatedAt: Date.now() })
    .where('id', '=', userId)
    .execute();
  return token;
}

/**
 * A credential value. Never one with a named token's prefix: a request bearing it would be judged
 * as a named token and never authenticate (one random value in 16.7 million began so).
 */
export function newUploadCredential(random: () => string = () => randomSecret(32)): string {
  for (;;) {
    const value = random();
    if (!value.startsWith(SECRET_PREFIX)) return value;
  }
}

/**
 * Seals the plaintext credentials an older version stored (migration 0011 cannot: it has no key) and
 * clears them. Run at every start; a no-op once done. Each row is changed only while it still holds
 * the plaintext it was read with, so processes starting together, or a regeneration in between, are safe.
 */
export async function sealPlaintextUploadTokens(db: Db, box: SecretBox): Promise<number> {
  const rows = await db.selectFrom('users').select(['id', 'uploadToken']).where('uploadToken', 'is not', null).execute();
  let sealed = 0;
  for (const { id, uploadToken } of rows) {
    const result = await db
      .updateTable('users')
      .set({ uploadToken: null, uploadTokenEncrypted: box.seal(uploadToken!, uploadCredentialSealContext(id)) })
      .where('id', '=', id)
      .where('uploadToken', '=', uploadToken)
      .executeTakeFirst();
    sealed += Number(result.numUpdatedRows);
  }
  return sealed;
}
