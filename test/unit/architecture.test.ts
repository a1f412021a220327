import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The dependency rules of docs/architecture.md ("Dependency direction"), read from the import
// statements of src/**/*.ts.

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

interface Import {
  from: string;
  /** What was written after `from`. */
  specifier: string;
  /** The imported file (relative to the repository), for imports of a relative path. */
  target: string | null;
  /** `import type` / `export type`: erased before the code runs. */
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

// `import … from '…'`, `import '…'`, `export … from '…'` (across lines), and `import('…')`.
const staticImport = /^[ \t]*(?:import|export)\s+(type\s+)?(?:[\w$*{}\s,]*?\s*from\s*)?['"]([^'"]+)['"]/gm;
const dynamicImport = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(file: string): Import[] {
  const text = readFileSync(join(root, file), 'utf8');
  const found: Array<{ specifier: string; typeOnly: boolean }> = [];
  for (const match of text.matchAll(staticImport)) found.push({ specifier: match[2]!, typeOnly: match[1] !== undefined });
  for (const match of text.matchAll(dynamicImport)) found.push({ specifier: match[1]!, typeOnly: false });
  return found.map(({ specifier, typeOnly }) => ({
    from: file,
    specifier,
    target: specifier.startsWith('.') ? posix.normalize(posix.join(posix.dirname(file), specifier)) : null,
    typeOnly,
  }));
}

/** A module: a directory directly under src/ (a domain, db, storage, http, …) or a file there. */
function moduleOf(file: string): string {
  return file.split('/').slice(0, 2).join('/');
}

/** One cycle in the graph, as a path that returns to its start, or null. */
function findCycle(edges: Map<string, Set<string>>): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string): string[] | null => {
    state.set(node, 'open');
    path.push(node);
    for (const next of [...(edges.get(node) ?? [])].sort()) {
      if (state.get(next) === 'open') return [...path.slice(path.indexOf(next)), next];
      if (!state.has(next)) {
        const cycle = visit(next);
        if (cycle) return cycle;
      }
    }
    path.pop();
    state.set(node, 'done');
    return null;
  };
  for (const node of [...edges.keys()].sort()) {
    if (state.has(node)) continue;
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return null;
}

function graph(imports: Import[], node: (file: string) => string): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const { from, target } of imports) {
    if (target === null) continue;
    const a = node(from);
    const b = node(target);
    if (a === b) continue;
    if (!edges.has(a)) edges.set(a, new Set());
    edges.get(a)!.add(b);
  }
  return edges;
}

/** Each import behind an edge of a cycle, to say where to look. */
function describeCycle(cycle: string[], imports: Import[], node: (file: string) => string): string {
  const lines = [cycle.join(' → ')];
  for (let i = 0; i + 1 < cycle.length; i++) {
    for (const imp of imports) {
      if (imp.target !== null && node(imp.from) === cycle[i] && node(imp.target) === cycle[i + 1]) lines.push(`  ${imp.from} imports ${imp.specifier}`);
    }
  }
  return lines.join('\n');
}

const files = sourceFiles('src');
const imports = files.flatMap(importsOf);
const runtime = imports.filter((imp) => !imp.typeOnly);

describe('architecture', () => {
  it('reads the import statements of the source tree', () => {
    // Guards the checks below against a parser that silently finds nothing.
    expect(files).toContain('src/server.ts');
    expect(imports.filter((imp) => imp.from === 'src/server.ts' && imp.target === 'src/http/app.ts')).toHaveLength(1);
    expect(imports.some((imp) => imp.typeOnly)).toBe(true);
  });

  it('no import cycle between the modules of src/', () => {
    const cycle = findCycle(graph(runtime, moduleOf));
    expect(cycle && describeCycle(cycle, runtime, moduleOf)).toBeNull();
  });

  it('no import cycle between modules through type imports either, but for the application context', () => {
    // src/context.ts names the type of every part of a running instance (the audit log, the listing
    // cache, …), and the parts' background handlers receive it: a cycle of types only, by design.
    const withTypes = imports.filter((imp) => imp.from !== 'src/context.ts' && imp.target !== 'src/context.ts');
    const cycle = findCycle(graph(withTypes, moduleOf));
    expect(cycle && describeCycle(cycle, withTypes, moduleOf)).toBeNull();
  });

  it('no import cycle between the files of src/ (src/http/ checked as a whole)', () => {
    const node = (file: string) => (file.startsWith('src/http/') ? 'src/http' : file);
    const cycle = findCycle(graph(runtime, node));
    expect(cycle && describeCycle(cycle, runtime, node)).toBeNull();
  });

  it('route modules import neither app.ts nor one another, and the files of src/http/ have no import cycle', () => {
    // Each route module is a plugin of its own (src/http/route-module.ts); what several share lives
    // in a helper module of src/http/ or below.
    const fromRoutes = imports.filter((imp) => imp.from.startsWith('src/http/routes/'));
    expect(fromRoutes.length).toBeGreaterThan(0);
    const sideways = fromRoutes.filter((imp) => imp.target === 'src/http/app.ts' || imp.target?.startsWith('src/http/routes/'));
    expect(sideways.map((imp) => `${imp.from} imports ${imp.specifier}`)).toEqual([]);
    const withinHttp = imports.filter((imp) => imp.from.startsWith('src/http/') && imp.target?.startsWith('src/http/'));
    const cycle = findCycle(graph(withinHttp, (file) => file));
    expect(cycle && describeCycle(cycle, withinHttp, (file) => file)).toBeNull();
  });

  it('nothing outside src/http/ imports it, but the server that starts it', () => {
    const upward = imports.filter((imp) => imp.target?.startsWith('src/http/') && !imp.from.startsWith('src/http/') && imp.from !== 'src/server.ts');
    expect(upward.map((imp) => `${imp.from} imports ${imp.specifier}`)).toEqual([]);
  });

  it('migrations import no application code, only kysely and Node built-ins', () => {
    const migrations = imports.filter((imp) => imp.from.startsWith('src/db/migrations/'));
    expect(migrations.length).toBeGreaterThan(0);
    const allowed = (specifier: string) => specifier === 'kysely' || specifier.startsWith('kysely/') || specifier.startsWith('node:');
    expect(migrations.filter((imp) => !allowed(imp.specifier)).map((imp) => `${imp.from} imports ${imp.specifier}`)).toEqual([]);
  });

  it('src/shared/ imports no domain: only itself, the API shapes, packages and the schema types', () => {
    const shared = imports.filter((imp) => imp.from.startsWith('src/shared/'));
    const allowed = (imp: Import) => imp.target === null || imp.target.startsWith('src/shared/') || imp.target.startsWith('src/api/') || (imp.target === 'src/db/schema.ts' && imp.typeOnly);
    expect(shared.filter((imp) => !allowed(imp)).map((imp) => `${imp.from} imports ${imp.specifier}`)).toEqual([]);
  });

  it('only src/http/ imports the HTTP framework: domains and storage know no request or reply', () => {
    const framework = (specifier: string) => /^(fastify|@fastify\/|@scalar\/)/.test(specifier);
    const outside = imports.filter((imp) => !imp.from.startsWith('src/http/') && framework(imp.specifier));
    expect(outside.map((imp) => `${imp.from} imports ${imp.specifier}`)).toEqual([]);
  });

  it('src/api/ imports only itself and zod: the web app shares it, so no Node and no application code', () => {
    const api = imports.filter((imp) => imp.from.startsWith('src/api/'));
    expect(api.length).toBeGreaterThan(0);
    const allowed = (imp: Import) => (imp.target !== null ? imp.target.startsWith('src/api/') : imp.specifier === 'zod');
    expect(api.filter((imp) => !allowed(imp)).map((imp) => `${imp.from} imports ${imp.specifier}`)).toEqual([]);
  });

  it('the web app takes only types from @api, and values from modules that import nothing (the vocabulary, the display rules), so its bundle carries no schema library', () => {
    const webFiles = (dir: string): string[] =>
      readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
        const path = posix.join(dir, entry.name);
        if (entry.isDirectory()) return webFiles(path);
        return /\.tsx?$/.test(entry.name) ? [path] : [];
      });
    const fromWeb = webFiles('web/src').flatMap(importsOf).filter((imp) => imp.specifier.startsWith('@api'));
    expect(fromWeb.length).toBeGreaterThan(0);
    const importNothing = ['@api/vocabulary.ts', '@api/display-text.ts'];
    const runtime = fromWeb.filter((imp) => !imp.typeOnly && !importNothing.includes(imp.specifier));
    expect(runtime.map((imp) => `${imp.from} imports ${imp.specifier} at run time`)).toEqual([]);
    for (const module of importNothing) expect(imports.filter((imp) => imp.from === `src/api/${module.slice('@api/'.length)}`)).toEqual([]);
  });

  it('every relative import names a file that exists', () => {
    const known = new Set(files);
    const missing = imports.filter((imp) => imp.target !== null && imp.target.endsWith('.ts') && !known.has(imp.target));
    expect(missing.map((imp) => `${imp.from} imports ${imp.specifier}`)).toEqual([]);
  });
});
