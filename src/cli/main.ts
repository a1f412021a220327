import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { openDatabase } from '../db/database.ts';
import { migrate } from '../db/migrator.ts';
import { ensureBuiltinRoles, roleIdBySystemKey } from '../auth/roles.ts';
import { ensureSettings, initialSettings } from '../settings/instance-settings.ts';
import { createUserAsAdmin, findUserForLogin } from '../accounts/users.ts';
import { createToken } from '../tokens/named-tokens.ts';
import { scopes, type Scope } from '../auth/route-policy.ts';
import { allPermissions } from '../auth/permissions.ts';
import { resetTwoFactor } from '../accounts/two-factor.ts';

const usage = `Usage: npm run cli -- <command>

Commands:
  migrate                                              apply database migrations
  user create --email E --password P [--name N] [--admin]
                                                       create an account (--admin: Administrator role)
  user reset-two-factor --email E                      turn an account's two-factor off (a user who lost
                                                       the authenticator and the recovery codes)
  token create --email E --name N --scopes a,b [--expires ISO] [--profile ID]
                                                       create a named API token; prints the secret once
                                                       (scopes: ${scopes.join(', ')})`;

class UsageError extends Error {}

async function withDatabase<T>(config: Config, work: (handle: ReturnType<typeof openDatabase>) => Promise<T>): Promise<T> {
  const handle = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  try {
    await migrate(handle.db);
    await ensureBuiltinRoles(handle.db);
    await ensureSettings(handle.db, initialSettings(config));
    return await work(handle);
  } finally {
    await handle.close();
  }
}

async function run(argv: string[], config: Config): Promise<string> {
  const [command, sub, ...rest] = argv;
  if (command === 'migrate') {
    const handle = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
    try {
      const applied = await migrate(handle.db);
      return applied.length ? `Applied migrations: ${applied.join(', ')}` : 'Database is up to date';
    } finally {
      await handle.close();
    }
  }
  if (command === 'user' && sub === 'create') {
    const { values } = parseArgs({ args: rest, options: { email: { type: 'string' }, password: { type: 'string' }, name: { type: 'string' }, admin: { type: 'boolean', default: false } }, strict: true });
    if (!values.email || !values.password) throw new UsageError('user create needs --email and --password');
    return withDatabase(config, async ({ db, dialect }) => {
      const roleIds = values.admin ? [await roleIdBySystemKey(db, 'administrator')] : [];
      // The operator at the console holds every permission.
      const user = await createUserAsAdmin(db, dialect, new Set(allPermissions), { email: values.email!, password: values.password!, name: values.name, roleIds, emailVerified: true });
      return `Created ${user.email} (id ${user.id}${values.admin ? ', Administrator' : ''})`;
    });
  }
  if (command === 'user' && sub === 'reset-two-factor') {
    const { values } = parseArgs({ args: rest, options: { email: { type: 'string' } }, strict: true });
    if (!values.email) throw new UsageError('user reset-two-factor needs --email');
    return withDatabase(config, async ({ db }) => {
      const user = await findUserForLogin(db, values.email!);
      if (!user) throw new Error(`No account with the email ${values.email}`);
      await resetTwoFactor(db, user.id);
      return `Two-factor is off for ${user.email}; they sign in with their password and may set it up again`;
    });
  }
  if (command === 'token' && sub === 'create') {
    const { values } = parseArgs({ args: rest, options: { email: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' }, expires: { type: 'string' }, profile: { type: 'string' } }, strict: true });
    if (!values.email || !values.name || !values.scopes) throw new UsageError('token create needs --email, --name and --scopes');
    const requested = values.scopes.split(',').map((s) => s.trim()).filter(Boolean);
    const unknown = requested.find((s) => !(scopes as readonly string[]).includes(s));
    if (unknown) throw new UsageError(`Unknown scope ${unknown}; scopes are ${scopes.join(', ')}`);
    let expiresAt: Date | null = null;
    if (values.expires !== undefined) {
      expiresAt = new Date(values.expires);
      if (!/^\d{4}-\d{2}-\d{2}T/.test(values.expires) || Number.isNaN(expiresAt.getTime())) throw new UsageError('--expires must be an ISO 8601 timestamp, e.g. 2027-01-01T00:00:00Z');
    }
    return withDatabase(config, async ({ db, dialect }) => {
      const user = await findUserForLogin(db, values.email!);
      if (!user) throw new Error(`No account with the email ${values.email}`);
      const { secret } = await createToken(db, dialect, user.id, { name: values.name!, scopes: requested as Scope[], expiresAt, profileId: values.profile ?? null });
      return secret;
    });
  }
  throw new UsageError(command ? `Unknown command: ${[command, sub].filter(Boolean).join(' ')}` : 'No command given');
}

if (existsSync('.env')) process.loadEnvFile('.env');
try {
  const config = loadConfig(process.env);
  console.log(await run(process.argv.slice(2), config));
} catch (error) {
  if (error instanceof UsageError) {
    console.error(`${error.message}\n\n${usage}`);
    process.exit(2);
  }
  const message = error instanceof Error ? error.message : String(error);
  console.error(error instanceof ConfigError ? `hoard: invalid configuration: ${message}` : `hoard: ${message}`);
  process.exit(1);
}
