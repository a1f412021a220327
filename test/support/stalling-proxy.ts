import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP relay in front of a server that can stall: once armed, each connection's answers stop
 * after `afterBytes` more bytes, the connection left open, as a store that stops in the middle of
 * a response (a hung process, a network path that drops everything). For fault tests only.
 */
export interface StallingProxy {
  /** The relay's address, to use instead of the server's (`http://127.0.0.1:<port>`). */
  endpoint: string;
  /** From now on, each connection's answers stop after this many more bytes. */
  stallAfter(afterBytes: number): void;
  /** Relays everything again (what was held back stays held back). */
  release(): void;
  close(): Promise<void>;
}

export async function startStallingProxy(target: string): Promise<StallingProxy> {
  const { hostname, port } = new URL(target);
  let budget: number | null = null;
  const sockets = new Set<net.Socket>();
  const links: Array<{ allowance: { left: number | null } }> = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    const link = { allowance: { left: budget } };
    links.push(link);
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      const { allowance } = link;
      if (allowance.left === null) return void client.write(chunk);
      if (allowance.left <= 0) return;
      client.write(chunk.subarray(0, allowance.left));
      allowance.left -= Math.min(chunk.length, allowance.left);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    // Once stalled, the server's side closing is not passed on either: the client sees only silence.
    const upstreamEnd = () => {
      if (link.allowance.left === null) end();
    };
    upstream.on('close', upstreamEnd).on('error', upstreamEnd);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stallAfter(afterBytes) {
      budget = afterBytes;
      for (const link of links) link.allowance.left = afterBytes;
    },
    release() {
      budget = null;
      for (const link of links) link.allowance.left = null;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
