import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { webBuildReason } from '../../scripts/web-build.ts';

// `npm start` builds the web app when web/dist is missing or older than what it is built from.
describe('whether the web app needs building', () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
  });

  /** A repository of the app's files, each written at the given time (seconds since 1970). */
  function tree(files: Record<string, number>): string {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-web-build-'));
    roots.push(root);
    for (const [file, seconds] of Object.entries(files)) {
      const at = path.join(root, file);
      fs.mkdirSync(path.dirname(at), { recursive: true });
      fs.writeFileSync(at, file);
      fs.utimesSync(at, seconds, seconds);
    }
    return root;
  }

  it('builds when the build is missing, or older than a source of web/ or a module of src/api it imports', () => {
    expect(webBuildReason(tree({ 'web/src/main.tsx': 100 }))).toBe('web/dist/index.html is missing');
    const built = { 'web/dist/index.html': 200, 'web/src/main.tsx': 100, 'src/api/vocabulary.ts': 100, 'src/http/routes/files.ts': 300 };
    // A server module changed since does not make the app stale.
    expect(webBuildReason(tree(built))).toBeNull();
    for (const changed of ['web/src/main.tsx', 'web/index.html', 'src/api/vocabulary.ts', 'src/api/display-text.ts']) {
      expect(webBuildReason(tree({ ...built, [changed]: 300 })), changed).toBe('its sources (web/, src/api/) changed since the last build');
    }
  });
});
