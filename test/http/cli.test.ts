import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectUnderTest, startTestServer, type TestServer } from '../support/server.ts';
import { Client } from '../support/client.ts';
import { runCli } from '../support/cli.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

function cli(...args: string[]) {
  return runCli(args, { ...process.env, ...server.env });
}

describe('command-line tool', () => {
  it('migrate reports an up-to-date database', async () => {
    const result = await cli('migrate');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/up to date/);
  });

  it('user create makes an account that can sign in, with --admin an Administrator', async () => {
    const result = await cli('user', 'create', '--email', 'Ops@Example.test', '--password', 'operator password', '--admin');
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Created ops@example\.test/);
    const client = new Client(server.baseUrl);
    const login = await client.post('/api/auth/login', { email: 'ops@example.test', password: 'operator password' });
    expect(login.status).toBe(200);
    expect(login.body.data.user.permissions).toContain('administrator');

    const plain = await cli('user', 'create', '--email', 'plain@example.test', '--password', 'plain password');
    expect(plain.status).toBe(0);
    const member = new Client(server.baseUrl);
    await member.post('/api/auth/login', { email: 'plain@example.test', password: 'plain password' });
    expect((await member.get('/api/auth/me')).body.data.user.permissions).not.toContain('administrator');
  });

  it('user create makes the first account of an instance its Administrator, --admin or not', async () => {
    const fresh = await startTestServer();
    try {
      const first = await runCli(['user', 'create', '--email', 'first@example.test', '--password', 'first password'], { ...process.env, ...fresh.env });
      expect(first.status, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/Created first@example\.test \(id \S+, Administrator: the first account\)/);
      const login = await new Client(fresh.baseUrl).post('/api/auth/login', { email: 'first@example.test', password: 'first password' });
      expect(login.body.data.user.permissions).toContain('administrator');
      expect((await new Client(fresh.baseUrl).get('/api/setup')).body.data.needsAdministrator).toBe(false);
    } finally {
      await fresh.close();
    }
  });

  it('token create prints a secret once that works on the named-token API', async () => {
    const result = await cli('token', 'create', '--email', 'ops@example.test', '--name', 'backup script', '--scopes', 'urls:read,files:read', '--expires', new Date(Date.now() + 3_600_000).toISOString());
    expect(result.status, result.stderr).toBe(0);
    const secret = result.stdout.trim();
    expect(secret).toMatch(/^svc_[A-Za-z0-9_-]{43,}$/);
    const list = await new Client(server.baseUrl).get('/api/urls', { token: secret });
    expect(list.status).toBe(200);
    expect((await new Client(server.baseUrl).post('/api/urls', { url: 'https://example.com/' }, { token: secret })).status).toBe(401);
    // Instants as the API takes them: a time zone, and no later than the year 9999.
    for (const expires of ['9999-12-31T23:59:59-23:59', '2030-01-01T00:00:00']) {
      const refused = await cli('token', 'create', '--email', 'ops@example.test', '--name', 'x', '--scopes', 'urls:read', '--expires', expires);
      expect(refused.status, expires).toBe(2);
      expect(refused.stderr, expires).toMatch(/--expires must be an ISO 8601 timestamp with a time zone, at the latest in the year 9999/);
    }
    const bad = await cli('token', 'create', '--email', 'ops@example.test', '--name', 'x', '--scopes', 'files:delete');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/Unknown scope files:delete/);
    const nobody = await cli('token', 'create', '--email', 'nobody@example.test', '--name', 'x', '--scopes', 'urls:read');
    expect(nobody.status).toBe(1);
    expect(nobody.stderr.trim()).toMatch(/^hoard: No account with the email nobody@example\.test in the (SQLite|PostgreSQL) database /);
  });

  it('explains mistakes in one line and exits non-zero', async () => {
    const duplicate = await cli('user', 'create', '--email', 'ops@example.test', '--password', 'operator password');
    expect(duplicate.status).toBe(1);
    expect(duplicate.stderr.trim()).toBe('hoard: An account with this email already exists');
    const missing = await cli('user', 'create', '--email', 'x@example.test');
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/needs --email and --password/);
    expect((await cli('frobnicate')).status).toBe(2);
    // A flag the command does not know is a mistake in the command line like any other.
    const unknownFlag = await cli('user', 'create', '--email', 'x@example.test', '--password', 'long enough', '--colour', 'red');
    expect(unknownFlag.status).toBe(2);
    expect(unknownFlag.stderr).toMatch(/--colour/);
    expect(unknownFlag.stderr).toMatch(/^Usage: /m);
    const help = await cli('--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: npm run cli/);
    // Help after a command is help too.
    const commandHelp = await cli('user', 'create', '--help');
    expect([commandHelp.status, commandHelp.stdout.startsWith('Usage: npm run cli')]).toEqual([0, true]);
    // A flag given twice, or a word a command does not take, is a mistake, not the last one winning.
    const twice = await cli('token', 'create', '--email', 'ops@example.test', '--email', 'plain@example.test', '--name', 'x', '--scopes', 'urls:read');
    expect(twice.status).toBe(2);
    expect(twice.stderr).toMatch(/^--email is given more than once/);
    const extra = await cli('migrate', 'now');
    expect(extra.status).toBe(2);
    expect(extra.stderr).toMatch(/^migrate takes nothing more \(given: now\)/);
    const stray = await cli('user', 'reset-two-factor', 'ops@example.test');
    expect(stray.status).toBe(2);
    expect(stray.stderr).toMatch(/Unexpected argument 'ops@example.test'/);
    const empty = await cli('import', '', '--email', 'ops@example.test');
    expect(empty.status).toBe(2);
    expect(empty.stderr).toMatch(/^import needs a directory: the one given is an empty path/);
    // Fifteen processes, each starting Node and reading the tool: a busy machine needs more than 30 s.
  }, 90_000);

  it("makes no database for a command that needs an instance's accounts, and names the database it searched", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'hoard-cli-elsewhere-'));
    // Run from another directory, or with another DATA_DIR, than the server's.
    for (const args of [['user', 'reset-password', '--email', 'ops@example.test'], ['user', 'reset-two-factor', '--email', 'ops@example.test'], ['token', 'create', '--email', 'ops@example.test', '--name', 'n', '--scopes', 'urls:read'], ['import', elsewhere, '--email', 'ops@example.test']]) {
      const result = await runCli(args, { PATH: process.env.PATH, DATA_DIR: elsewhere });
      expect([result.status, result.stderr.trim()], args.join(' ')).toEqual([1, `hoard: No database at ${join(elsewhere, 'hoard.sqlite')}: this DATA_DIR holds no instance; set DATA_DIR (and DATABASE_URL, for PostgreSQL) as the server has them`]);
      expect(readdirSync(elsewhere)).toEqual([]);
    }
    // On the server's database, an unknown email says which database was searched.
    const unknown = await cli('user', 'reset-password', '--email', 'nobody@example.test');
    const searched = server.env.DATABASE_URL ? `the PostgreSQL database ${new URL(server.env.DATABASE_URL).host}${new URL(server.env.DATABASE_URL).pathname}` : `the SQLite database ${join(server.env.DATA_DIR!, 'hoard.sqlite')}`;
    expect([unknown.status, unknown.stderr.trim()]).toEqual([1, `hoard: No account with the email nobody@example.test in ${searched}`]);
  });

  it('says why the database cannot be opened, in one line', async () => {
    // PostgreSQL: a database that does not exist on a server that answers. SQLite: a DATA_DIR that is a file.
    const env = server.env.DATABASE_URL
      ? { DATABASE_URL: server.env.DATABASE_URL.replace(/\/[^/?]+(\?|$)/, '/no_such_database$1') }
      : { DATA_DIR: join(server.env.DATA_DIR!, 'hoard.sqlite') };
    const failed = await runCli(['migrate'], { ...process.env, ...server.env, ...env });
    expect(failed.status).toBe(1);
    expect(failed.stderr.trim().split('\n')).toHaveLength(1);
    expect(failed.stderr).toMatch(server.env.DATABASE_URL ? /no_such_database" does not exist/ : /DATA_DIR .*hoard\.sqlite is not a directory/);
  });

  // About PostgreSQL's connection alone, whatever database the other tests run on: defined once, in
  // the PostgreSQL run, rather than waiting out the same 20 seconds of timeouts in both.
  if (dialectUnderTest === 'postgres') it('gives up on a database host that accepts the connection and never answers, saying so', async () => {
    // Something listening where PostgreSQL should be, silent: a wrong port, a proxy with no upstream.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const started = Date.now();
      const failed = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, ['src/cli/main.ts', 'migrate'], { env: { ...process.env, ...server.env, DATABASE_URL: `postgres://hoard@127.0.0.1:${port}/hoard` } });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('close', (status) => resolve({ status, stderr }));
      });
      expect(failed.status).toBe(1);
      expect(failed.stderr).toMatch(/^hoard: The database cannot be used right now: .*time/im);
      expect(Date.now() - started).toBeLessThan(25_000);
    } finally {
      silent.close();
    }
  }, 40_000);

  it('holds accounts and tokens to the rules the API holds them to', async () => {
    // Contract §2: passwords of at least 8 characters; the email and name as POST /api/users takes them.
    const cases: Array<[string[], RegExp]> = [
      [['--email', 'short@example.test', '--password', 'short'], /--password: must be at least 8 characters/],
      [['--email', 'not an email', '--password', 'long enough'], /--email: must be an email address/],
      [['--email', 'named@example.test', '--password', 'long enough', '--name', 'n'.repeat(101)], /--name: /],
    ];
    for (const [args, message] of cases) {
      const result = await cli('user', 'create', ...args);
      expect(result.status, result.stdout).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
    for (const email of ['short@example.test', 'named@example.test']) {
      expect((await new Client(server.baseUrl).post('/api/auth/login', { email, password: 'short' })).status).toBe(401);
      expect((await new Client(server.baseUrl).post('/api/auth/login', { email, password: 'long enough' })).status).toBe(401);
    }
    // A token's name is 1 to 80 characters (specification, Named API token).
    const long = await cli('token', 'create', '--email', 'ops@example.test', '--name', 't'.repeat(81), '--scopes', 'urls:read');
    expect(long.status, long.stdout).toBe(2);
    expect(long.stderr).toMatch(/--name: /);
  });
});
