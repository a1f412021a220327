/**
 * A user who forgot their password: Hoard sends no email, so an administrator sets a new one
 * (PATCH /api/users/{id} with `password`, or the CLI's `user reset-password`). It ends the account's
 * browser sessions; named tokens stay. Nobody sets their own this way, nor one of an account holding
 * a permission they lack. An address mistyped at sign-up is changed by the account (with its
 * password) or by an administrator. The administration also shows what each account stores.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';
import { createToken, uploadFile } from '../support/uploads.ts';

let server: TestServer;
let admin: Awaited<ReturnType<typeof signUp>>;

beforeAll(async () => {
  server = await startTestServer();
  admin = await signUp(server.baseUrl);
  expect((await admin.patch('/api/settings', { registration: 'open' })).status).toBe(200);
});
afterAll(() => server.close());

const signIn = (email: string, password: string) => new Client(server.baseUrl).post('/api/auth/login', { email, password });
const cli = (...args: string[]) => runCli(args, { ...process.env, ...server.env });

describe('an administrator sets a password for an account that forgot its own', () => {
  it('through the API: the new password signs in, the old one no longer does, its sessions end and its tokens keep working', async () => {
    const user = await signUp(server.baseUrl);
    const token = await createToken(user, ['files:read']);
    const other = new Client(server.baseUrl);
    expect((await other.post('/api/auth/login', { email: user.email, password: user.password })).status).toBe(200);

    const set = await admin.patch(`/api/users/${user.userId}`, { password: 'a brand new password' });
    expect(set.status, set.text).toBe(200);
    expect(JSON.stringify(set.body)).not.toContain('a brand new password');
    for (const session of [user, other]) expect((await session.get('/api/auth/me')).status).toBe(401);
    expect((await signIn(user.email, user.password)).status).toBe(401);
    expect((await signIn(user.email, 'a brand new password')).status).toBe(200);
    expect((await new Client(server.baseUrl).get('/api/files', { token })).status).toBe(200);
  });

  it('lifts the lock its owner put on the sign-in by guessing: the new password works at once', async () => {
    const user = await signUp(server.baseUrl);
    for (let i = 0; i < 10; i++) expect((await signIn(user.email, `guess number ${i}`)).status).toBe(401);
    expect((await signIn(user.email, user.password)).status).toBe(429);
    // Wrong current passwords given to change it, counted on the account, are cleared too: the
    // temporary password is replaced with one of the user's own at once.
    for (let i = 0; i < 10; i++) expect((await user.patch('/api/account', { currentPassword: `wrong ${i}`, newPassword: 'never set at all' })).status).toBe(403);
    expect((await user.patch('/api/account', { currentPassword: user.password, newPassword: 'never set at all' })).status).toBe(429);
    expect((await admin.patch(`/api/users/${user.userId}`, { password: 'set after the lockout' })).status).toBe(200);
    const fresh = new Client(server.baseUrl);
    expect((await fresh.post('/api/auth/login', { email: user.email, password: 'set after the lockout' })).status).toBe(200);
    expect((await fresh.patch('/api/account', { currentPassword: 'set after the lockout', newPassword: 'my own password again' })).status).toBe(200);
  });

  it('never its own (that takes the current password), never too short, never for an account holding more than the setter', async () => {
    const own = await admin.patch(`/api/users/${admin.userId}`, { password: 'an administrator password' });
    expect([own.status, own.body.error]).toEqual([400, 'password: you cannot set your own password from the administration; change it in your account settings, with your current one']);
    expect((await signIn(admin.email, admin.password)).status).toBe(200);

    const user = await signUp(server.baseUrl);
    const short = await admin.patch(`/api/users/${user.userId}`, { password: 'short' });
    expect(short.status).toBe(400);
    expect(short.body.error).toContain('password');
    expect((await signIn(user.email, user.password)).status).toBe(200);

    // A manager of users without administrator cannot take an administrator's account this way.
    const role = await admin.post('/api/roles', { name: 'Password managers', permissions: ['users.manage'] });
    const manager = await signUp(server.baseUrl);
    expect((await admin.patch(`/api/users/${manager.userId}`, { roleIds: [role.body.data.role.id] })).status).toBe(200);
    const taken = await manager.patch(`/api/users/${admin.userId}`, { password: 'taken over at last' });
    expect(taken.status).toBe(403);
    expect((await signIn(admin.email, 'taken over at last')).status).toBe(401);
    expect((await signIn(admin.email, admin.password)).status).toBe(200);
    // An ordinary account it may help.
    expect((await manager.patch(`/api/users/${user.userId}`, { password: 'helped by a manager' })).status).toBe(200);
    expect((await signIn(user.email, 'helped by a manager')).status).toBe(200);
    // And members may not at all.
    const member = await signUp(server.baseUrl);
    expect((await member.patch(`/api/users/${user.userId}`, { password: 'member was here' })).status).toBe(403);
  });

  it('on the server: npm run cli -- user reset-password, with a password chosen or one printed once', async () => {
    const user = await signUp(server.baseUrl);
    const chosen = await cli('user', 'reset-password', '--email', user.email, '--password', 'chosen at the console');
    expect(chosen.status, chosen.stderr).toBe(0);
    expect(chosen.stdout).toContain(user.email);
    expect(chosen.stdout).not.toContain('chosen at the console');
    expect((await user.get('/api/auth/me')).status).toBe(401);
    expect((await signIn(user.email, 'chosen at the console')).status).toBe(200);

    const printed = await cli('user', 'reset-password', '--email', user.email.toUpperCase());
    expect(printed.status, printed.stderr).toBe(0);
    const password = /shown once: (\S+)/.exec(printed.stdout)?.[1];
    expect(password, printed.stdout).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect((await signIn(user.email, password!)).status).toBe(200);
    expect((await signIn(user.email, 'chosen at the console')).status).toBe(401);

    const unknown = await cli('user', 'reset-password', '--email', 'nobody@example.invalid');
    expect([unknown.status, unknown.stderr.includes('No account')]).toEqual([1, true]);
    const missing = await cli('user', 'reset-password');
    expect([missing.status, missing.stderr.includes('--email')]).toEqual([2, true]);
    const short = await cli('user', 'reset-password', '--email', user.email, '--password', 'short');
    expect(short.status).toBe(2);
    expect(short.stderr).toContain('password');
    expect(short.stderr).not.toContain('    at ');
  });
});

describe('the administration shows what each account stores', () => {
  it("lists each account's stored bytes and files, which follow its uploads and deletes", async () => {
    const user = await signUp(server.baseUrl);
    const record = async () => ((await admin.get('/api/users')).body.data.users as Array<{ id: string; usedBytes: number; fileCount: number }>).find((u) => u.id === user.userId)!;
    expect(await record()).toMatchObject({ usedBytes: 0, fileCount: 0 });
    const first = await uploadFile(user, 'one.txt', 'x'.repeat(1000));
    expect(first.status, first.text).toBe(200);
    expect((await uploadFile(user, 'two.txt', 'y'.repeat(24))).status).toBe(200);
    expect(await record()).toMatchObject({ usedBytes: 1024, fileCount: 2 });
    const id = (first.body.data.downloadUrl as string).split('/').at(-2)!;
    expect((await user.delete(`/api/files/${id}`)).status).toBe(204);
    expect(await record()).toMatchObject({ usedBytes: 24, fileCount: 1 });
    // The record a change answers with says the same.
    const changed = await admin.patch(`/api/users/${user.userId}`, { name: 'Stores a little' });
    expect(changed.body.data.user).toMatchObject({ usedBytes: 24, fileCount: 1 });
  });
});

describe('an address mistyped at sign-up is changed', () => {
  it('by the account, with its password: it signs in with the new address, its verification and tokens as they were', async () => {
    const user = await signUp(server.baseUrl);
    expect((await admin.patch(`/api/users/${user.userId}`, { emailVerified: true })).status).toBe(200);
    const address = `Fixed.${user.email}`;
    const without = await user.patch('/api/account', { email: address });
    expect([without.status, without.body.error]).toEqual([400, 'currentPassword: required to change the email']);
    const wrong = await user.patch('/api/account', { email: address, currentPassword: 'not the password' });
    expect(wrong.status).toBe(403);
    const taken = await user.patch('/api/account', { email: admin.email.toUpperCase(), currentPassword: user.password });
    expect([taken.status, taken.body.error]).toEqual([409, 'An account with this email already exists']);
    const invalidAddress = await user.patch('/api/account', { email: 'not an address', currentPassword: user.password });
    expect(invalidAddress.status).toBe(400);

    const changed = await user.patch('/api/account', { email: ` ${address} `, currentPassword: user.password });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.data.account.email).toBe(address.toLowerCase());
    expect((await user.get('/api/auth/me')).body.data.user).toMatchObject({ email: address.toLowerCase(), emailVerified: true });
    expect((await signIn(user.email, user.password)).status).toBe(401);
    expect((await signIn(address, user.password)).status).toBe(200);
    // Where verified addresses are required, its tokens keep working: a typo fixed breaks no script.
    const token = await createToken(user, ['files:read']);
    expect((await admin.patch('/api/settings', { requireEmailVerification: true })).status).toBe(200);
    try {
      expect((await user.patch('/api/account', { email: `again.${address}`, currentPassword: user.password })).status).toBe(200);
      expect((await new Client(server.baseUrl).get('/api/files', { token })).status).toBe(200);
    } finally {
      await admin.patch('/api/settings', { requireEmailVerification: false });
    }
    // Its own address again, in another case: nothing changes.
    expect((await user.patch('/api/account', { email: `AGAIN.${address}`, currentPassword: user.password })).status).toBe(200);
    expect((await user.get('/api/auth/me')).body.data.user.email).toBe(`again.${address}`.toLowerCase());
  });

  it('by an administrator, who vouches for it; never its own from the administration, nor that of an account holding more', async () => {
    const user = await signUp(server.baseUrl);
    const address = `renamed.${user.email}`;
    const changed = await admin.patch(`/api/users/${user.userId}`, { email: address });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.data.user).toMatchObject({ email: address, emailVerified: true });
    expect((await signIn(address, user.password)).status).toBe(200);
    const taken = await admin.patch(`/api/users/${user.userId}`, { email: admin.email });
    expect([taken.status, taken.body.error]).toEqual([409, 'An account with this email already exists']);
    const own = await admin.patch(`/api/users/${admin.userId}`, { email: `other.${admin.email}` });
    expect([own.status, own.body.error]).toEqual([400, 'email: you cannot change your own email from the administration; change it in your account settings, with your password']);
    const role = await admin.post('/api/roles', { name: 'Address managers', permissions: ['users.manage'] });
    const manager = await signUp(server.baseUrl);
    expect((await admin.patch(`/api/users/${manager.userId}`, { roleIds: [role.body.data.role.id] })).status).toBe(200);
    expect((await manager.patch(`/api/users/${admin.userId}`, { email: `stolen.${admin.email}` })).status).toBe(403);
    expect((await signIn(admin.email, admin.password)).status).toBe(200);
  });
});
