import type { Executor } from '../db/account-scope.ts';
import { readSettings } from '../settings/instance-settings.ts';
import type { SetupStatus } from '../api/accounts.ts';

/** What the sign-in screen needs to offer before anyone is signed in (GET /api/setup). */
export async function setupStatus(db: Executor): Promise<SetupStatus> {
  const [anyUser, settings] = await Promise.all([db.selectFrom('users').select('id').limit(1).executeTakeFirst(), readSettings(db)]);
  return { needsAdministrator: anyUser === undefined, registration: settings.registration };
}
