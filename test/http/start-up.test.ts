import { afterAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client } from '../support/client.ts';

/**
 * A start that cannot listen says which variable to change, in the one line `hoard: could not
 * start: …` prints (Node's own words name neither), and leaves nothing open behind it.
 */
describe('a start that cannot listen', () => {
  const running: TestServer[] = [];
  afterAll(async () => {
    for (const server of running) await server.close();
  });

  it('names PORT when the port is in use, and HOST when it is no address of this machine', async () => {
    const first = await startTestServer();
    running.push(first);
    const port = new URL(first.baseUrl).port;
    await expect(startTestServer({ PORT: port })).rejects.toThrow(`PORT=${port}: the port is in use on 127.0.0.1 (by another Hoard, or another program)`);
    // 192.0.2.1 is an address for documentation (RFC 5737): no machine here has it.
    await expect(startTestServer({ HOST: '192.0.2.1' })).rejects.toThrow('HOST=192.0.2.1: not an address of this machine');
    // The first server serves on, and a start on the same DATA_DIR and database afterwards works:
    // the refused starts closed what they had opened.
    expect((await new Client(first.baseUrl).get('/api/health')).status).toBe(200);
    const again = await startTestServer({}, { databaseUrl: first.databaseUrl, dataDir: first.dataDir });
    running.push(again);
    expect((await new Client(again.baseUrl).get('/api/health')).status).toBe(200);
  });
});

describe('PORT=0', () => {
  it('warns when the links would name port 0, and not when BASE_URL names the address', async () => {
    const logged: Array<{ level: number; msg?: string }> = [];
    const unnamed = await startTestServer({ PORT: '0', BASE_URL: 'http://localhost:0', LOG_LEVEL: 'warn' }, undefined, logged);
    await unnamed.close();
    expect(logged.filter((line) => line.level === 40).map((line) => line.msg)).toEqual(['BASE_URL names port 0: the links Hoard returns point nowhere; set BASE_URL to the address clients reach']);
    const quiet: Array<{ level: number; msg?: string }> = [];
    const named = await startTestServer({ PORT: '0', BASE_URL: 'https://files.example.org', LOG_LEVEL: 'warn' }, undefined, quiet);
    await named.close();
    expect(quiet.filter((line) => line.level >= 40)).toEqual([]);
  });
});
