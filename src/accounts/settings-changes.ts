import type { Db } from '../db/database.ts';
import type { AlsoInTransaction } from '../db/also.ts';
import { hasPermission, type PermissionSet } from '../auth/permissions.ts';
import { readSettings, updateSettings, type InstanceSettings } from '../settings/instance-settings.ts';
import { forbidden } from '../errors.ts';

/**
 * An administrator's change of the instance settings. The default quota is a quota of every account
 * without one of its own: removing it (0) or raising it exempts them all as `quotas.bypass` exempts
 * one account, so without that permission it may only be lowered (docs/decisions.md,
 * "Administration"), as an account's own quota may.
 */
export async function updateSettingsAs(
  db: Db,
  actor: PermissionSet,
  changes: Partial<InstanceSettings>,
  also?: AlsoInTransaction<{ before: InstanceSettings; after: InstanceSettings }>,
): Promise<{ before: InstanceSettings; after: InstanceSettings }> {
  if (changes.defaultQuotaBytes !== undefined && !hasPermission(actor, 'quotas.bypass')) {
    const current = (await readSettings(db)).defaultQuotaBytes;
    const lowering = changes.defaultQuotaBytes === current || (changes.defaultQuotaBytes > 0 && (current === 0 || changes.defaultQuotaBytes <= current));
    if (!lowering) throw forbidden('You cannot raise or remove the default quota without the permission quotas.bypass');
  }
  return updateSettings(db, changes, also);
}
