/**
 * `npm start`: builds the web app when web/dist is missing or older than its sources, then runs the
 * server (src/main.ts) in this process.
 */
import { ensureWebBuild } from './web-build.ts';

ensureWebBuild();
await import('../src/main.ts');
