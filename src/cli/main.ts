import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { openDatabase } from '../db/database.ts';
import { migrate } from '../db/migrator.ts';
import { ensureBuiltinRoles, roleIdBySystemKey } from '../auth/roles.ts';
import { ensureSettings, initialSettings } from '../settings/instance-settings.ts';
import { createUserAsAdmin } from '../accounts/users.ts';
import { allPermissions } from '../auth/permissions.ts';

const usage = `Usage: npm run cli -- <command>

Commands:
  migrate                                              apply database migrations
  user create --email E --password P [--name N] [--admin]
                                                       create an account (--admin: Administrator role)`;

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
