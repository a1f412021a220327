import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';

/**
 * Writes a Brotli (.br) and a gzip (.gz) copy beside every script, style sheet and SVG of the build,
 * at the highest levels (done once, at build time), which the server sends to browsers that accept
 * them (src/http/routes/web-app.ts): the app's 330 kB of JavaScript travel as about a third.
 */
function precompress(): Plugin {
  let outDir = '';
  return {
    name: 'hoard-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = path.resolve(config.root, config.build.outDir);
    },
    writeBundle(_options, bundle) {
      for (const name of Object.keys(bundle)) {
        if (!/\.(js|css|svg|json)$/.test(name)) continue;
        const file = path.join(outDir, name);
        const content = fs.readFileSync(file);
        fs.writeFileSync(`${file}.br`, brotliCompressSync(content, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: content.length } }));
        fs.writeFileSync(`${file}.gz`, gzipSync(content, { level: 9 }));
      }
    },
  };
}

const root = fileURLToPath(new URL('.', import.meta.url));
// The API server `npm run dev:web` proxies to (a running `npm start`).
const apiTarget = process.env.HOARD_API ?? 'http://localhost:3000';

// The app is served by the Hoard process itself: index.html at / and /app/*, hashed files at /assets/*
// (src/http/routes/web-app.ts). docs/web.md describes the layout.
export default defineConfig({
  root,
  base: '/',
  plugins: [react(), precompress()],
  // The API's shapes, shared with the server (src/api/). The app imports their types from `@api`
  // (erased at build time) and plain values from modules that import nothing (`@api/vocabulary.ts`,
  // `@api/display-text.ts`), so zod stays out of the bundle.
  resolve: {
    alias: [
      { find: /^@api$/, replacement: fileURLToPath(new URL('../src/api/index.ts', import.meta.url)) },
      { find: /^@api\//, replacement: fileURLToPath(new URL('../src/api/', import.meta.url)) },
    ],
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    sourcemap: false,
  },
  server: {
    proxy: Object.fromEntries(
      ['/api', '/u/'].map((path) => [
        path,
        {
          target: apiTarget,
          // State-changing requests must carry the origin of BASE_URL; the dev server is another origin.
          configure: (proxy) => {
            proxy.on('proxyReq', (request) => request.setHeader('origin', new URL(apiTarget).origin));
          },
        },
      ]),
    ),
  },
});
