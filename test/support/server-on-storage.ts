import { afterAll, beforeAll } from 'vitest';
import { startTestServer, type TestServer } from './server.ts';
import { signUp } from './client.ts';
import { storageUnderTest, type Provider, type StorageUnderTest } from './stored-objects.ts';

export interface ServerOnStorage {
  readonly storage: StorageUnderTest;
  readonly server: TestServer;
  /** The first account, an administrator. */
  readonly owner: Awaited<ReturnType<typeof signUp>>;
}

/**
 * A test server on `provider`'s storage with its first account signed up, started before the
 * suite's tests and stopped after them (call it in the `describe.each(providers)` body). `env`
 * goes beside the storage's settings.
 */
export function serverOnStorage(provider: Provider, env: Record<string, string> = {}): ServerOnStorage {
  let storage: StorageUnderTest | undefined;
  let server: TestServer | undefined;
  let owner: Awaited<ReturnType<typeof signUp>> | undefined;
  beforeAll(async () => {
    storage = await storageUnderTest(provider);
    server = await startTestServer({ ...storage.env, ...env });
    owner = await signUp(server.baseUrl);
  });
  afterAll(async () => {
    await server?.close();
    await storage?.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('The server on storage is used before its suite started it');
    return value;
  };
  return {
    get storage() {
      return started(storage);
    },
    get server() {
      return started(server);
    },
    get owner() {
      return started(owner);
    },
  };
}
