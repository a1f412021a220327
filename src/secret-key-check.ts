import type { Logger } from 'pino';
import type { Db } from './db/database.ts';
import { loadSecretBox, type SecretBox } from './auth/secret-box.ts';
import type { Config } from './config.ts';
import { totpSealContext } from './accounts/two-factor.ts';
import { uploadCredentialSealContext } from './tokens/legacy-token.ts';

/**
 * Whether the database holds any value sealed with the instance's key. A process without
 * SECRET_KEY whose DATA_DIR has lost its `secret.key` (restored from a backup without it) then must
 * not make a new one (src/auth/secret-box.ts): it would open none of them, and what it sealed
 * before the operator noticed would not open with the real key once put back.
 */
export async function holdsSealedSecrets(db: Db): Promise<boolean> {
  const [totp, credential, hook] = await Promise.all([
    db.selectFrom('users').select('id').where('totpSecretSealed', 'is not', null).limit(1).executeTakeFirst(),
    db.selectFrom('users').select('id').where('uploadTokenEncrypted', 'is not', null).limit(1).executeTakeFirst(),
    db.selectFrom('webhooks').select('id').limit(1).executeTakeFirst(),
  ]);
  return totp !== undefined || credential !== undefined || hook !== undefined;
}

/**
 * The instance's secret box, as every process opens it: the server, the workers' primary and the
 * command line. A new key is made only where the database holds nothing sealed with the old one.
 */
export async function openSecretBox(db: Db, config: Pick<Config, 'secretKey' | 'dataDir'>): Promise<SecretBox> {
  return loadSecretBox(config, await holdsSealedSecrets(db));
}

/** How many of the newest sealed values of each kind are tried at start-up. */
const SAMPLE = 3;

/**
 * Whether this process's key opens the secrets the database holds (two-factor secrets, legacy
 * upload credentials, webhook signing secrets), tried on a few of the newest of each. A process
 * started with another `SECRET_KEY` than the others (or without one, on its own `secret.key`) ran
 * without a word: it answered correct two-factor codes with 401 and sealed a new upload credential
 * under its own key, which the other processes then could not open. Said at start-up, as an error
 * in the log, when none of them opens and also when only some do (two keys have sealed secrets
 * here), rather than refusing to start: moving an instance to another key is a documented step
 * (README, "SECRET_KEY"), during which the old secrets are expected not to open.
 */
export async function checkSecretKey(db: Db, box: SecretBox, log: Pick<Logger, 'error'>): Promise<{ tried: number; opened: number }> {
  const samples: Array<{ sealed: string; context: string }> = [];
  const totp = await db.selectFrom('users').select(['id', 'totpSecretSealed']).where('totpSecretSealed', 'is not', null).orderBy('updatedAt', 'desc').limit(SAMPLE).execute();
  for (const row of totp) samples.push({ sealed: row.totpSecretSealed!, context: totpSealContext(row.id) });
  const credentials = await db.selectFrom('users').select(['id', 'uploadTokenEncrypted']).where('uploadTokenEncrypted', 'is not', null).orderBy('updatedAt', 'desc').limit(SAMPLE).execute();
  for (const row of credentials) samples.push({ sealed: row.uploadTokenEncrypted!, context: uploadCredentialSealContext(row.id) });
  const hooks = await db.selectFrom('webhooks').select(['id', 'secretEncrypted']).orderBy('createdAt', 'desc').limit(SAMPLE).execute();
  for (const row of hooks) samples.push({ sealed: row.secretEncrypted, context: row.id });

  let opened = 0;
  for (const { sealed, context } of samples) {
    try {
      box.open(sealed, context);
      opened += 1;
    } catch {
      // Counted below: another key, or a value altered in the database.
    }
  }
  if (samples.length > 0 && opened > 0 && opened < samples.length) {
    // Some open and some do not: two keys have sealed secrets here, as when one process ran with
    // another key for a while (what it sealed then opens nowhere else). Asking only whether none
    // opens missed this once a first secret under either key was stored.
    log.error(
      { tried: samples.length, opened },
      'some of the secrets this database holds do not open with this SECRET_KEY: a process with another key has sealed secrets here (or the key was changed). Every process of an instance must run with the same SECRET_KEY; secrets sealed under another key must be made anew (webhook secrets rotated, two-factor set up again, upload credentials regenerated).',
    );
  }
  if (samples.length > 0 && opened === 0) {
    log.error(
      { tried: samples.length },
      'SECRET_KEY does not open any of the secrets this database holds (two-factor secrets, upload credentials, webhook signing secrets): this process has another key than the one that sealed them. Every process of an instance must run with the same SECRET_KEY (or the same DATA_DIR/secret.key); until then two-factor sign-ins fail here, webhooks cannot be signed and upload credentials must be regenerated.',
    );
  }
  return { tried: samples.length, opened };
}
