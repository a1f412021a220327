/**
 * What authentication adds to a request: the median time of the single authorization step
 * (authenticate + checkAccess) for a named token, measured in-process against a real database.
 *   node bench/auth-latency.ts            (SQLite in a temporary directory)
 *   DATABASE_URL=postgres://… node bench/auth-latency.ts
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { createLogger, startServer } from '../src/server.ts';
import { authenticate, checkAccess } from '../src/auth/authorize.ts';
import { policyFor } from '../src/auth/route-policy.ts';
import { createUserAsAdmin } from '../src/accounts/users.ts';
import { allPermissions } from '../src/auth/permissions.ts';
import { createToken } from '../src/tokens/named-tokens.ts';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-bench-auth-'));
const config = loadConfig({ ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' });
const server = await startServer(config, createLogger('silent'));
const { db, dialect } = server.ctx;
const user = await createUserAsAdmin(db, dialect, new Set(allPermissions), { email: `bench${Date.now()}@example.test`, password: 'benchmark password' });
const { secret } = await createToken(db, dialect, user.id, { name: 'bench', scopes: ['files:read', 'urls:read'] });
const policy = policyFor('GET', '/api/urls')!;
const credentials = { authorization: `Bearer ${secret}`, sessionCookie: undefined };

async function once(): Promise<number> {
  const start = process.hrtime.bigint();
  const principal = await authenticate(db, policy, credentials);
  checkAccess(policy, principal, { method: 'GET', origin: undefined }, config.baseUrl);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

for (let i = 0; i < 2000; i++) await once();
const samples: number[] = [];
for (let i = 0; i < 20000; i++) samples.push(await once());
samples.sort((a, b) => a - b);
const at = (q: number) => samples[Math.floor(q * (samples.length - 1))]!.toFixed(3);
console.log(`${dialect}: authentication median ${at(0.5)} ms, p90 ${at(0.9)} ms, p99 ${at(0.99)} ms over ${samples.length} requests`);
await server.close();
fs.rmSync(dataDir, { recursive: true, force: true });
