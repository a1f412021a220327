import type { Db } from '../db/database.ts';
import { randomSecret, sha256Hex } from '../auth/secrets.ts';

/** The account's legacy upload credential, created on first request. */
export async function getUploadToken(db: Db, userId: string): Promise<string> {
  const row = await db.selectFrom('users').select('uploadToken').where('id', '=', userId).executeTakeFirstOrThrow();
  return row.uploadToken ?? regenerateUploadToken(db, userId);
}

/** A new value; the previous one (and every configuration embedding it) stops working at once. */
export async function regenerateUploadToken(db: Db, userId: string): Promise<string> {
  const token = randomSecret(32);
  await db.updateTable('users').set({ uploadToken: token, uploadTokenHash: sha256Hex(token), updatedAt: Date.now() }).where('id', '=', userId).execute();
  return token;
}
