import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const root = fileURLToPath(new URL('.', import.meta.url));
// The API server `npm run dev:web` proxies to (a running `npm start`).
const apiTarget = process.env.HOARD_API ?? 'http://localhost:3000';

// The app is served by the Hoard process itself: index.html at / and /app/*, hashed files at /assets/*
// (src/http/routes/web-app.ts). docs/web.md describes the layout.
export default defineConfig({
  root,
  base: '/',
  plugins: [react()],
  // The API's shapes, shared with the server (src/api/). The app imports their types from `@api`
  // (erased at build time) and plain values from `@api/vocabulary.ts`, so zod stays out of the bundle.
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
