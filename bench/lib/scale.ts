import path from 'node:path';
import pg from 'pg';
import type { PostgresCluster } from '../../test/support/postgres.ts';
import { startBenchPostgres } from './postgres-settings.ts';
import type { ChildServer } from './child.ts';
import { createPostgresDatabase, startHoard, startHoardProcess } from './hoard.ts';
import { getJson, requestRate } from './load.ts';
import { figure, type Figure } from './report.ts';
import { benchImport } from './import.ts';
import { median, round } from './stats.ts';

/**
 * The "scale" section (`npm run bench -- --only scale`): the reads the dashboard makes, on one
 * account of 100,000 and of 1,000,000 files, on both databases, with the listing cache off so each
 * figure is the query itself. Each category is measured over several different requests (terms,
 * orders, zones), so no answer is read twice in a row; its figure is the slowest request's median.
 * Every category also gets its growth factor, 1,000,000 ÷ 100,000 files.
 */
export interface ScaleOptions {
  workDir: string;
  sizes: number[];
  dialects: Array<'sqlite' | 'postgres'>;
  seconds: number;
  runs: number;
  log: (message: string) => void;
  children: ChildServer[];
  helloWorld: () => Promise<ChildServer>;
}

const CONNECTIONS = 32;

interface Category {
  id: string;
  label: string;
  target: number;
  /** Growth from the smallest to the largest size is held to 1.5× unless false. */
  growth: boolean;
  urls: (context: { files: number; folder: string; tag: string }) => string[];
}

const orders = ['newest', 'oldest', 'largest', 'smallest', 'name', 'most-viewed', 'least-viewed', 'most-downloaded', 'least-downloaded'];
const timelines = ['month', 'week', 'year'].flatMap((groupBy) => ['UTC', 'Asia/Kolkata', 'America/New_York'].map((timezone) => `groupBy=${groupBy}&timezone=${encodeURIComponent(timezone)}`));

const categories: Category[] = [
  { id: 'firstPage', label: 'first page, every sort order', target: 5, growth: true, urls: () => orders.map((o) => `/api/files?limit=24&sortBy=${o}`) },
  {
    id: 'searchBroad',
    label: 'search, broad (1 name in 15), newest / name / largest',
    target: 25,
    growth: true,
    urls: () => ['holiday', 'diagram', 'backup'].flatMap((term, i) => [`/api/files?limit=24&search=${term}&sortBy=${['newest', 'name', 'largest'][i]}`]),
  },
  { id: 'searchNarrow', label: 'search, narrow (a few names)', target: 25, growth: true, urls: () => ['f4242', 'f7319', 'f1865'].map((term) => `/api/files?limit=24&search=${term}`) },
  { id: 'searchNone', label: 'search, no match', target: 25, growth: true, urls: () => ['zzqx', 'qqvvk', 'xkcdzz'].map((term) => `/api/files?limit=24&search=${term}`) },
  {
    id: 'singleFilter',
    label: 'each single filter with its exact total',
    target: 25,
    growth: true,
    urls: ({ folder, tag }) => ['visibility=private', 'visibility=public', 'visibility=hasPassword', 'types=image/png', `folder=${folder}`, `tag=${tag}`].map((f) => `/api/files?limit=24&${f}`),
  },
  {
    // The "combined filters may count through their index, within the targets": Hoard counts
    // them per combination (migrations 0028-filter-combinations, 0052-tag-combinations).
    id: 'combinedFilter',
    label: 'combined filters with their exact total (type, visibility, folder, tag)',
    target: 25,
    growth: true,
    urls: ({ folder, tag }) =>
      [
        'types=image/png&visibility=private',
        'types=image/png,image/jpeg&visibility=public',
        `folder=${folder}&visibility=public`,
        `folder=${folder}&types=image/png`,
        'folder=unfiled&visibility=private',
        'visibility=private,hasPassword',
        `tag=${tag}&visibility=public`,
        `folder=${folder}&tag=${tag}`,
      ].map((f) => `/api/files?limit=24&${f}`),
  },
  { id: 'timeline', label: 'timeline by month, week, year in UTC, Kolkata, New York', target: 25, growth: true, urls: () => timelines.map((t) => `/api/files/timeline?${t}`) },
  { id: 'timelineSearch', label: 'timeline with a search', target: 50, growth: true, urls: () => ['holiday', 'f4242', 'zzqx'].map((term) => `/api/files/timeline?groupBy=month&search=${term}`) },
  {
    id: 'deepPage',
    label: 'page 20,000 of 24 (at 100,000 files: page 2,000)',
    target: 50,
    growth: false,
    urls: ({ files }) => ['newest', 'oldest'].map((o) => `/api/files?limit=24&sortBy=${o}&page=${Math.round((0.48 * files) / 24)}`),
  },
];

/** Median latency of each URL, requests taken in turn (so no URL is asked twice in a row). */
async function medians(base: string, urls: string[], runs: number, headers: Record<string, string>): Promise<number[]> {
  const samples = urls.map(() => [] as number[]);
  for (let round = -2; round < runs; round++) {
    for (let i = 0; i < urls.length; i++) {
      const started = performance.now();
      const response = await fetch(base + urls[i], { headers });
      if (response.status !== 200) throw new Error(`${urls[i]}: HTTP ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
      if (round >= 0) samples[i]!.push(performance.now() - started);
    }
  }
  return samples.map((s) => median(s));
}

/**
 * The first page of the account, asked one request after another for `seconds`, alone and then while
 * another client keeps searching with one- and two-letter terms. No trigram serves such a term, so
 * each of those searches reads every file of the account (seconds at a million files); the figure
 * shows whether one client's long read holds up the others' requests.
 */
async function firstPageBesideScans(base: string, headers: Record<string, string>, seconds: number) {
  const time = async (path: string) => {
    const started = performance.now();
    const response = await fetch(base + path, { headers });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${path}: HTTP ${response.status}`);
    return performance.now() - started;
  };
  const during = async (ms: number) => {
    const samples: number[] = [];
    const started = performance.now();
    while (performance.now() - started < ms) samples.push(await time('/api/files?limit=24'));
    return samples;
  };
  const summary = (samples: number[]) => {
    const sorted = [...samples].sort((a, b) => a - b);
    return { count: samples.length, medianMs: round(median(samples), 2), p99Ms: round(sorted[Math.min(sorted.length - 1, Math.floor(0.99 * sorted.length))]!, 2), maxMs: round(sorted[sorted.length - 1]!, 2) };
  };
  await during(500);
  const alone = await during(Math.min(3000, seconds * 1000));
  let stop = false;
  const scans: number[] = [];
  const terms = ['a', 'in', 'ab', 'e'];
  const scanning = (async () => {
    for (let i = 0; !stop; i++) scans.push(await time(`/api/files?limit=24&search=${terms[i % terms.length]}`));
  })();
  const beside = await during(seconds * 1000);
  stop = true;
  await scanning;
  return { alone: summary(alone), during: summary(beside), scans: summary(scans) };
}

export async function scaleSection(options: ScaleOptions): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const dialect of options.dialects) {
    const label = dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL';
    const measured = new Map<number, Record<string, number>>();
    for (const files of options.sizes) {
      let cluster: PostgresCluster | null = null;
      let databaseUrl: string | undefined;
      if (dialect === 'postgres') {
        cluster = await startBenchPostgres();
        databaseUrl = await createPostgresDatabase(cluster.url);
      }
      try {
        const n = files.toLocaleString('en');
        options.log(`scale ${dialect}: seeding ${n} files`);
        const workDir = path.join(options.workDir, `scale-${dialect}-${files}`);
        const hoard = await startHoard({ workDir, databaseUrl, files, env: { LISTING_CACHE_MB: '0' } });
        options.children.push(hoard.server);
        options.log(`scale ${dialect}: seeded ${n} files in ${hoard.seedSeconds.toFixed(0)} s`);
        const headers = { authorization: `Bearer ${hoard.token}` };
        const base = hoard.server.url;
        const session = await getJson(`${base}/api/files?limit=1`, headers);
        if (session.pagination.total !== files) throw new Error(`scale: ${session.pagination.total} files listed, ${files} seeded`);
        // The seeded folders and tags are in the database; the token cannot list them, so read them there.
        const ids = await seededFolderAndTag(dialect, databaseUrl, workDir, hoard.userId);
        const values: Record<string, number> = {};
        for (const category of categories) {
          const urls = category.urls({ files, ...ids });
          const each = await medians(base, urls, options.runs, headers);
          values[category.id] = Math.max(...each);
          options.log(`scale ${dialect} ${n}: ${category.label}: slowest median ${values[category.id]!.toFixed(1)} ms (${each.map((m) => m.toFixed(1)).join(', ')})`);
          figures.push(
            figure({
              id: `scale.${dialect}.${files}.${category.id}`,
              label: `${label}, ${n} files: ${category.label}`,
              unit: 'ms',
              value: values[category.id]!,
              baseline: null,
              baselineLabel: null,
              target: { on: 'value', op: '<', value: category.target },
              detail: { urls, medians: each.map((m) => round(m, 2)) },
            }),
          );
        }
        const beside = await firstPageBesideScans(base, headers, options.seconds);
        options.log(`scale ${dialect} ${n}: first page alone median ${beside.alone.medianMs.toFixed(2)} ms; beside 1–2 letter searches median ${beside.during.medianMs.toFixed(2)}, p99 ${beside.during.p99Ms.toFixed(1)} ms (${beside.scans.count} searches, median ${beside.scans.medianMs.toFixed(0)} ms)`);
        figures.push(
          figure({
            id: `scale.${dialect}.${files}.besideScans`,
            label: `${label}, ${n} files: first page p99 while another client searches with 1–2 letters`,
            unit: 'ms',
            value: beside.during.p99Ms,
            baseline: beside.alone.p99Ms,
            baselineLabel: 'first page p99 alone',
            target: { on: 'value', op: '<', value: 50 },
            detail: beside,
          }),
        );
        const hello = await options.helloWorld();
        const listUrl = `${base}/api/files?limit=24`;
        const one = await requestRate(listUrl, { connections: CONNECTIONS, seconds: options.seconds, warmupSeconds: 2, headers, serverPid: hoard.server.pid });
        const baseline = await requestRate(`${hello.url}/`, { connections: CONNECTIONS, seconds: options.seconds, warmupSeconds: 2, serverPid: hello.pid });
        await hoard.server.stop();
        options.children.splice(options.children.indexOf(hoard.server), 1);
        const two = await startHoardProcess({ workDir, env: { ...hoard.env, LISTING_CACHE_MB: '0', WORKERS: '2' }, name: `hoard-${dialect}-workers` });
        options.children.push(two);
        const both = await requestRate(`${two.url}/api/files?limit=24`, { connections: CONNECTIONS, seconds: options.seconds, warmupSeconds: 2, headers });
        await two.stop();
        options.children.splice(options.children.indexOf(two), 1);
        options.log(`scale ${dialect} ${n}: listing ${one.requestsPerSecond.toFixed(0)} req/s, with WORKERS=2 ${both.requestsPerSecond.toFixed(0)} req/s, hello world ${baseline.requestsPerSecond.toFixed(0)} req/s`);
        figures.push(
          figure({
            id: `scale.${dialect}.${files}.rate`,
            label: `${label}, ${n} files: listing at ${CONNECTIONS} conn., cache off`,
            unit: 'req/s',
            value: one.requestsPerSecond,
            baseline: baseline.requestsPerSecond,
            baselineLabel: 'Fastify hello world',
            target: { on: 'ratio', op: '>=', value: dialect === 'sqlite' ? 0.08 : 0.05 },
            detail: { one, baseline },
          }),
          figure({
            id: `scale.${dialect}.${files}.workers`,
            label: `${label}, ${n} files: the same with WORKERS=2`,
            unit: 'req/s',
            value: both.requestsPerSecond,
            baseline: one.requestsPerSecond,
            baselineLabel: 'one process',
            target: { on: 'ratio', op: '>=', value: 1.6 },
            detail: { both },
          }),
        );
        measured.set(files, values);
      } finally {
        cluster?.stop();
      }
    }
    const sizes = [...measured.keys()].sort((a, b) => a - b);
    if (sizes.length >= 2) {
      const small = measured.get(sizes[0]!)!;
      const large = measured.get(sizes[sizes.length - 1]!)!;
      for (const category of categories.filter((c) => c.growth)) {
        figures.push(
          figure({
            id: `scale.${dialect}.growth.${category.id}`,
            label: `${label}: growth ${sizes[sizes.length - 1]!.toLocaleString('en')} ÷ ${sizes[0]!.toLocaleString('en')} files, ${category.label}`,
            unit: '×',
            value: large[category.id]! / small[category.id]!,
            baseline: null,
            baselineLabel: null,
            target: { on: 'value', op: '<', value: 1.5 },
          }),
        );
      }
    }
  }
  // Importing a library (npm run cli -- import) of 10 KiB files into SQLite, as a library is moved in.
  options.log('scale: importing 20,000 files of 10 KiB with npm run cli -- import (SQLite)');
  const imported = await benchImport({ files: 20_000, workDir: path.join(options.workDir, 'scale-import') });
  options.log(`scale: imported ${imported.files} files in ${imported.seconds.toFixed(1)} s: ${imported.filesPerSecond.toFixed(0)} files/s`);
  figures.push(
    figure({
      id: 'scale.import.sqlite',
      label: 'SQLite: npm run cli -- import, 20,000 files of 10 KiB',
      unit: 'files/s',
      value: imported.filesPerSecond,
      baseline: null,
      baselineLabel: null,
      target: { on: 'value', op: '>=', value: 1500 },
      detail: { ...imported },
    }),
  );
  return figures;
}

async function seededFolderAndTag(dialect: 'sqlite' | 'postgres', databaseUrl: string | undefined, workDir: string, userId: string): Promise<{ folder: string; tag: string }> {
  const folderSql = 'select id from folders where "userId" = $1 order by id limit 1';
  const tagSql = 'select id from tags where "userId" = $1 order by id limit 1';
  if (dialect === 'postgres') {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      return { folder: (await client.query(folderSql, [userId])).rows[0].id, tag: (await client.query(tagSql, [userId])).rows[0].id };
    } finally {
      await client.end();
    }
  }
  const { default: Sqlite } = await import('better-sqlite3');
  const file = new Sqlite(path.join(workDir, 'data', 'hoard.sqlite'), { readonly: true });
  try {
    const one = (text: string) => (file.prepare(text.replace('$1', '?')).get(userId) as { id: string }).id;
    return { folder: one(folderSql), tag: one(tagSql) };
  } finally {
    file.close();
  }
}
