import { z } from 'zod';
import type { Db } from '../db/database.ts';
import type { Executor } from '../db/account-scope.ts';
import type { AlsoInTransaction } from '../db/also.ts';
import { registrationSchema } from '../api/accounts.ts';
import type { InstanceSettings } from '../api/admin.ts';

/** What may be stored (and sent to PATCH /api/settings); the answer's shape is src/api/admin.ts. */
export const instanceSettingsInput = z.strictObject({
  // The values without the API record's component name: an input copy of it would be listed twice in the OpenAPI document.
  registration: z.enum(registrationSchema.options),
  requireEmailVerification: z.boolean(),
  maxUploadSizeBytes: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  defaultQuotaBytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  thumbnailsEnabled: z.boolean(),
  ocrEnabled: z.boolean(),
});

export type { InstanceSettings };
type Key = keyof InstanceSettings;
const keys = Object.keys(instanceSettingsInput.shape) as Key[];

/**
 * Registration starts closed: the first account (the Administrator) can always register, and
 * everyone after that needs an open instance or an invite, so a fresh public instance is not an
 * open file host by accident.
 */
export function initialSettings(env: { maxUploadSize: number; defaultQuota: number }): InstanceSettings {
  return {
    registration: 'closed',
    requireEmailVerification: false,
    maxUploadSizeBytes: env.maxUploadSize,
    defaultQuotaBytes: env.defaultQuota,
    // On from the start (contract §10); an instance that upgrades gets them for its existing files too.
    thumbnailsEnabled: true,
    ocrEnabled: true,
  };
}

/** Writes the initial values of settings that have never been set; later changes are kept. */
export async function ensureSettings(db: Db, initial: InstanceSettings): Promise<void> {
  // Read first, as ensureBuiltinRoles does: a start with every setting in place writes nothing.
  const present = new Set((await db.selectFrom('settings').select('key').where('key', 'in', keys).execute()).map((r) => r.key));
  for (const key of keys.filter((k) => !present.has(k))) {
    await db
      .insertInto('settings')
      .values({ key, value: JSON.stringify(initial[key]) })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
  }
}

export async function readSettings(db: Executor): Promise<InstanceSettings> {
  const rows = await db.selectFrom('settings').select(['key', 'value']).where('key', 'in', keys).execute();
  const values = Object.fromEntries(rows.map((r) => [r.key, JSON.parse(r.value) as unknown]));
  return instanceSettingsInput.parse(values);
}

/** The settings before and after the change, read in its transaction. */
export async function updateSettings(db: Db, changes: Partial<InstanceSettings>, also?: AlsoInTransaction<{ before: InstanceSettings; after: InstanceSettings }>): Promise<{ before: InstanceSettings; after: InstanceSettings }> {
  return db.transaction().execute(async (trx) => {
    const before = await readSettings(trx);
    for (const key of keys) {
      if (changes[key] === undefined) continue;
      await trx.updateTable('settings').set({ value: JSON.stringify(changes[key]) }).where('key', '=', key).execute();
    }
    const outcome = { before, after: await readSettings(trx) };
    if (also) await also(trx, outcome);
    return outcome;
  });
}
