/**
 * The request-rate baseline: a bare Fastify hello-world route (no plugins, no logging, no database).
 *   PORT=… node bench/servers/baseline-hello.ts
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
