import type { z } from 'zod';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, databaseName, loadConfig, loadDotEnv, type Config } from '../config.ts';
import { openDatabase } from '../db/database.ts';
import { migrate } from '../db/migrator.ts';
import { ensureBuiltinRoles, roleIdBySystemKey } from '../auth/roles.ts';
import { ensureSettings, initialSettings } from '../settings/instance-settings.ts';
import { createUserAsAdmin, findUserForLogin, updateUserAsAdmin } from '../accounts/users.ts';
import { randomSecret } from '../auth/secrets.ts';
import { accountNameSchema, emailSchema, passwordSchema } from '../accounts/account-settings.ts';
import { createToken, tokenNameSchema } from '../tokens/named-tokens.ts';
import { scopes, type Scope } from '../auth/route-policy.ts';
import { allPermissions } from '../auth/permissions.ts';
import { resetTwoFactor } from '../accounts/two-factor.ts';
import { IMPORT_CONCURRENCY, newImportProgress, prepareImport, runImport, type ImportOutcome } from '../imports/import-tree.ts';
import { openOfflineInstance } from './offline-context.ts';
import { megabytes, ProgressLine } from './progress.ts';
import { INSTANT_RULE, instantOf, isInstant } from '../shared/instants.ts';

const usage = `Usage: npm run cli -- <command>

Commands:
  migrate                                              apply database migrations
  user create --email E --password P [--name N] [--admin]
                                                       create an account (--admin: Administrator role;
                                                       the first account of an instance always is)
  user reset-password --email E [--password P]         set an account's password (a user who forgot it);
                                                       without --password, a random one is printed once.
                                                       Ends the account's browser sessions
  user reset-two-factor --email E                      turn an account's two-factor off (a user who lost
                                                       the authenticator and the recovery codes)
  token create --email E --name N --scopes a,b [--expires ISO] [--profile ID]
                                                       create a named API token; prints the secret once
                                                       (scopes: ${scopes.join(', ')})
  import DIR --email E [--folder ID] [--profile ID]
                                                       upload every regular file under DIR (recursively;
                                                       symbolic links, special files and this instance's
                                                       DATA_DIR are left out) to the account, under the
                                                       rules of POST /api/files: its upload defaults and
                                                       default profile (or --profile ID, or none), --folder
                                                       ID, permissions, size limit and quota. Progress on
                                                       stderr, a summary on stdout. A second run skips files
                                                       already imported (same path under DIR, same bytes).
                                                       Exits 1 when a file failed or the quota stopped it,
                                                       130 when interrupted`;

class UsageError extends Error {}

type FlagOptions = Record<string, { type: 'string' } | { type: 'boolean'; default?: boolean }>;

/**
 * The flags of a command. A flag given twice is a mistake (`--email a --email b` made the token for
 * the second address without a word), as is a word the command does not take.
 */
function parseFlags<T extends FlagOptions>(args: string[], options: T, allowPositionals = false) {
  const parsed = parseArgs({ args, options, allowPositionals, strict: true, tokens: true });
  const seen = new Set<string>();
  for (const token of parsed.tokens) {
    if (token.kind !== 'option') continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} is given more than once`);
    seen.add(token.name);
  }
  return parsed;
}

/** Checks flag values with the schemas the API checks the same fields with; a mistake names its flag. */
function checkFlags(shape: Record<string, z.ZodType>, values: Record<string, unknown>): void {
  for (const [flag, schema] of Object.entries(shape)) {
    const result = schema.safeParse(values[flag]);
    if (!result.success) throw new UsageError(`--${flag}: ${result.error.issues[0]?.message ?? 'is not valid'}`);
  }
}

/** A command that ended short of its work, with its exit code and one line saying why. */
class CommandFailure extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

/**
 * Refuses a command that works on an instance's accounts where no instance is: run from another
 * directory than the server's (DATA_DIR defaults to ./data), it made a new, empty database there and
 * then found no account in it. `user create` may start an instance; `migrate` makes one.
 */
function requireInstance(config: Config): void {
  const file = path.join(config.dataDir, 'hoard.sqlite');
  if (config.databaseUrl === null && !fs.existsSync(file)) {
    throw new CommandFailure(`No database at ${file}: this DATA_DIR holds no instance; set DATA_DIR (and DATABASE_URL, for PostgreSQL) as the server has them`);
  }
}

/** The account of an email, or a failure naming the database searched. */
async function accountOf(db: ReturnType<typeof openDatabase>['db'], config: Config, email: string) {
  const user = await findUserForLogin(db, email);
  if (!user) throw new CommandFailure(`No account with the email ${email} in ${databaseName(config)}`);
  return user;
}

async function withDatabase<T>(config: Config, work: (handle: ReturnType<typeof openDatabase>) => Promise<T>, options: { mayCreate?: boolean } = {}): Promise<T> {
  if (!options.mayCreate) requireInstance(config);
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
  if (command === 'import') return importDirectory(argv.slice(1), config);
  if (command === 'migrate') {
    if (argv.length > 1) throw new UsageError(`migrate takes nothing more (given: ${argv.slice(1).join(' ')})`);
    const handle = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
    try {
      const applied = await migrate(handle.db, undefined, () => process.stderr.write('The database is locked by another process (a start upgrading it, another migrate, the import): waiting for it, up to 15 minutes\n'));
      return applied.length ? `Applied migrations: ${applied.join(', ')}` : 'Database is up to date';
    } finally {
      await handle.close();
    }
  }
  if (command === 'user' && sub === 'create') {
    const { values } = parseFlags(rest, { email: { type: 'string' }, password: { type: 'string' }, name: { type: 'string' }, admin: { type: 'boolean', default: false } });
    if (!values.email || !values.password) throw new UsageError('user create needs --email and --password');
    // The rules POST /api/users holds an account to (contract §2).
    checkFlags({ email: emailSchema, password: passwordSchema, name: accountNameSchema.optional() }, values);
    return withDatabase(config, async ({ db, dialect }) => {
      // The first account is the Administrator, as the first to register is: made here without
      // --admin, it left an instance with no administrator and registration closed.
      const { count } = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
      const admin = values.admin || Number(count) === 0;
      const roleIds = admin ? [await roleIdBySystemKey(db, 'administrator')] : [];
      // The operator at the console holds every permission.
      const user = await createUserAsAdmin(db, dialect, new Set(allPermissions), { email: values.email!, password: values.password!, name: values.name, roleIds, emailVerified: true });
      return `Created ${user.email} (id ${user.id}${admin ? `, Administrator${values.admin ? '' : ': the first account'}` : ''})`;
    }, { mayCreate: true });
  }
  if (command === 'user' && sub === 'reset-two-factor') {
    const { values } = parseFlags(rest, { email: { type: 'string' } });
    if (!values.email) throw new UsageError('user reset-two-factor needs --email');
    return withDatabase(config, async ({ db }) => {
      const user = await accountOf(db, config, values.email!);
      await resetTwoFactor(db, user.id);
      return `Two-factor is off for ${user.email}; they sign in with their password and may set it up again`;
    });
  }
  if (command === 'user' && sub === 'reset-password') {
    const { values } = parseFlags(rest, { email: { type: 'string' }, password: { type: 'string' } });
    if (!values.email) throw new UsageError('user reset-password needs --email');
    if (values.password !== undefined) checkFlags({ password: passwordSchema }, values);
    // Without --password, one no one chose: 128 random bits, shown once and never stored in clear.
    const password = values.password ?? randomSecret(16);
    return withDatabase(config, async ({ db, dialect }) => {
      const user = await accountOf(db, config, values.email!);
      // The operator at the console holds every permission and is no account.
      await updateUserAsAdmin(db, dialect, { id: '', permissions: new Set(allPermissions) }, user.id, { password });
      const said = values.password === undefined ? `; the new password, shown once: ${password}` : '';
      return `Password set for ${user.email}; their browser sessions ended, named tokens keep working${said}`;
    });
  }
  if (command === 'token' && sub === 'create') {
    const { values } = parseFlags(rest, { email: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' }, expires: { type: 'string' }, profile: { type: 'string' } });
    if (!values.email || !values.name || !values.scopes) throw new UsageError('token create needs --email, --name and --scopes');
    checkFlags({ name: tokenNameSchema }, values);
    const requested = values.scopes.split(',').map((s) => s.trim()).filter(Boolean);
    const unknown = requested.find((s) => !(scopes as readonly string[]).includes(s));
    if (unknown) throw new UsageError(`Unknown scope ${unknown}; scopes are ${scopes.join(', ')}`);
    let expiresAt: Date | null = null;
    if (values.expires !== undefined) {
      // The API's rule (src/shared/instants.ts): with a time zone, at the latest in the year 9999.
      if (!isInstant(values.expires)) throw new UsageError(`--expires ${INSTANT_RULE}, e.g. 2027-01-01T00:00:00Z`);
      expiresAt = instantOf(values.expires);
    }
    return withDatabase(config, async ({ db, dialect }) => {
      const user = await accountOf(db, config, values.email!);
      const { secret } = await createToken(db, dialect, user.id, { name: values.name!, scopes: requested as Scope[], expiresAt, profileId: values.profile ?? null });
      return secret;
    });
  }
  throw new UsageError(command ? `Unknown command: ${[command, sub].filter(Boolean).join(' ')}` : 'No command given');
}

async function importDirectory(args: string[], config: Config): Promise<string> {
  let parsed;
  try {
    parsed = parseFlags(args, { email: { type: 'string' }, folder: { type: 'string' }, profile: { type: 'string' } }, true);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1 || !values.email) throw new UsageError('import needs one directory and --email');
  const directory = positionals[0]!;
  if (directory === '') throw new UsageError('import needs a directory: the one given is an empty path');
  // A second Ctrl-C ends the process at once; the first lets the files in flight finish.
  const interrupt = new AbortController();
  process.once('SIGINT', () => {
    interrupt.abort();
    process.stderr.write('\nimport: stopping once the files in progress are done (Ctrl-C again to quit now)\n');
  });
  requireInstance(config);
  const instance = await openOfflineInstance(config, { poolSize: IMPORT_CONCURRENCY + 2 });
  let outcome: ImportOutcome;
  let seconds: number;
  try {
    const started = performance.now();
    const prepared = await prepareImport(instance.ctx, { directory, email: values.email, folderId: values.folder, profileId: values.profile }, () => process.stderr.write(`import: reading the tree of ${directory}\n`));
    const progress = newImportProgress(prepared);
    const line = new ProgressLine(process.stderr, () => progress, { label: 'import' });
    line.start();
    try {
      outcome = await runImport(instance.ctx, prepared, progress, { signal: interrupt.signal });
    } finally {
      line.stop();
    }
    seconds = (performance.now() - started) / 1000;
  } finally {
    await instance.close();
  }
  const summary = importSummary(outcome, seconds);
  if (outcome.stopped) {
    console.log(summary);
    throw new CommandFailure(outcome.stopped);
  }
  if (outcome.interrupted) {
    console.log(summary);
    throw new CommandFailure(`Interrupted: ${outcome.progress.totalFiles - outcome.progress.doneFiles} files were not imported; run the same import again to continue`, 130);
  }
  if (outcome.failures.length > 0) {
    console.log(summary);
    throw new CommandFailure(`Not everything could be imported: ${outcome.failures.length} failed (listed above), the rest was imported`);
  }
  return summary;
}

/** Lists at most this many paths of one kind in a summary. */
const LISTED = 20;

function importSummary(outcome: ImportOutcome, seconds: number): string {
  const { progress, failures, notRegular } = outcome;
  const listed = (items: string[]) => [...items.slice(0, LISTED), ...(items.length > LISTED ? [`  … and ${items.length - LISTED} more`] : [])];
  return [
    `imported: ${progress.imported} files, ${progress.importedBytes} bytes (${megabytes(progress.importedBytes)})`,
    `skipped (already imported): ${progress.skipped}`,
    `failed: ${progress.failed}`,
    `not imported (symbolic links, special files): ${notRegular.length}`,
    ...(outcome.dataDir === null ? [] : [`not imported (this instance's data directory, DATA_DIR): ${outcome.dataDir}`]),
    `seconds: ${seconds.toFixed(2)}`,
    `rate: ${(progress.doneFiles / seconds).toFixed(1)} files/s, ${(progress.doneBytes / 1e6 / seconds).toFixed(1)} MB/s`,
    ...listed(failures.map((f) => `  failed ${f.path}: ${f.reason}`)),
    ...listed(notRegular.map((path) => `  not a regular file: ${path}`)),
  ].join('\n');
}

const argv = process.argv.slice(2);
// Help anywhere (`user create --help`) is help, not an unknown flag.
if ((argv.length > 0 && argv[0] === 'help') || argv.some((arg) => arg === '--help' || arg === '-h')) {
  console.log(usage);
  process.exit(0);
}
try {
  loadDotEnv();
  const config = loadConfig(process.env);
  console.log(await run(argv, config));
} catch (error) {
  // A flag parseArgs does not know, or one without its value, is a mistake in the command line.
  const badFlag = error instanceof TypeError && String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS');
  if (error instanceof UsageError || badFlag) {
    console.error(`${error.message}\n\n${usage}`);
    process.exit(2);
  }
  const message = error instanceof Error ? error.message : String(error);
  console.error(error instanceof ConfigError ? `hoard: invalid configuration: ${message}` : `hoard: ${message}`);
  process.exit(error instanceof CommandFailure ? error.exitCode : 1);
}
