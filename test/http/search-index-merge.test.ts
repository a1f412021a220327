import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';
import { fileRow } from '../support/file-rows.ts';
import { createToken, uploadFile } from '../support/uploads.ts';
import { enqueueJob } from '../../src/jobs/queue.ts';
import { mergeSearchIndex, searchSegments, SEARCH_MERGE_JOB } from '../../src/listing/search-index.ts';

// SQLite's trigram index is merged into one segment by a daily job when it has grown in many
// (src/listing/search-index.ts); searches answer exactly as before. PostgreSQL has no such index.
let server: TestServer;
let owner: Awaited<ReturnType<typeof signUp>>;
let token: string;

beforeAll(async () => {
  server = await startTestServer({ UPLOAD_RATE_LIMIT: '0' });
  owner = await signUp(server.baseUrl);
  token = await createToken(owner, ['files:read']);
});
afterAll(() => server.close());

const get = async (path: string) => {
  const response = await new Client(server.baseUrl).get(path, { token });
  expect(response.status, response.text).toBe(200);
  return response.body;
};

/** Totals, pages in several orders and the timeline of a few searches: what merging must not change. */
async function searchAnswers(): Promise<unknown[]> {
  const answers: unknown[] = [];
  for (const term of ['harbour', 'ticket', 'receipt', 'zzzq']) {
    for (const sortBy of ['newest', 'oldest', 'name', 'largest']) {
      for (const page of [1, 2, 5]) {
        const body = await get(`/api/files?search=${term}&sortBy=${sortBy}&limit=10&page=${page}`);
        answers.push([term, sortBy, page, body.pagination, body.data.map((f: { id: string }) => f.id)]);
      }
    }
    const timeline = (await get(`/api/files/timeline?search=${term}&groupBy=month`)).data;
    answers.push([term, timeline.total, timeline.buckets]);
  }
  return answers;
}

/** FTS5's own check that the index holds exactly the files table's text (it throws otherwise). */
const expectIndexAgreesWithFiles = async () => {
  await sql`insert into filesSearch(filesSearch, rank) values ('integrity-check', 1)`.execute(server.ctx.db);
};

const mergeJob = () => server.ctx.db.selectFrom('jobs').select(['type', 'runAt']).where('dedupeKey', '=', 'search-merge').executeTakeFirst();

describe('the search index upkeep', () => {
  it('merges a SQLite index grown in many segments into one, and every search answers as before', async () => {
    const scheduled = await mergeJob();
    if (server.ctx.dialect === 'postgres') {
      // PostgreSQL's trigram indexes are PostgreSQL's to keep: no job is scheduled there.
      expect(scheduled).toBeUndefined();
      return;
    }
    // Scheduled by the start, away from it.
    expect(scheduled?.type).toBe(SEARCH_MERGE_JOB);
    expect(Number(scheduled!.runAt)).toBeGreaterThan(Date.now() + 5 * 60_000);

    // Files written in many small transactions, as uploads are: one segment each, merged by FTS5 only
    // as segments of similar size pile up.
    const words = ['harbour', 'ticket', 'receipt', 'boarding', 'invoice'];
    const start = Date.UTC(2024, 0, 1);
    for (let batch = 0; batch < 60; batch++) {
      const rows = Array.from({ length: 10 }, (_, i) => {
        const n = batch * 10 + i;
        const createdAt = start + n * 7 * 3_600_000;
        return fileRow(owner.userId, `mergefile${String(n).padStart(4, '0')}`, {
          name: `${words[n % 5]}-${words[(n * 3) % 5]}-${n}.txt`,
          size: (n * 7919) % 5000,
          ocrText: n % 4 === 0 ? `printed ${words[(n + 2) % 5]} total` : null,
          createdAt,
        });
      });
      await server.ctx.db.insertInto('files').values(rows).execute();
    }
    expect((await searchSegments(server.ctx.db)).size).toBeGreaterThan(3);
    const before = await searchAnswers();

    // The job runs when due: one segment is left, and the next check is a day away.
    await server.ctx.db.updateTable('jobs').set({ runAt: Date.now() - 1000 }).where('dedupeKey', '=', 'search-merge').execute();
    await server.jobs.runDueJobs();
    expect([...(await searchSegments(server.ctx.db)).keys()]).toHaveLength(1);
    await expectIndexAgreesWithFiles();
    expect(Number((await mergeJob())!.runAt)).toBeGreaterThan(Date.now() + 23 * 3_600_000);
    expect(await searchAnswers()).toEqual(before);

    // A merged index is left alone.
    expect(await mergeSearchIndex(server.ctx.db, { pause: false })).toEqual({ steps: 0, finished: true });
  });

  it('keeps files written while it merges', async () => {
    if (server.ctx.dialect === 'postgres') {
      // The job does nothing there, even when run.
      await enqueueJob(server.ctx.db, { type: SEARCH_MERGE_JOB, payload: {}, runAt: Date.now() - 1000, dedupeKey: 'search-merge' });
      await server.jobs.runDueJobs();
      expect(await mergeJob()).toBeUndefined();
      return;
    }
    const before = (await get('/api/files?search=lighthouse')).pagination.total as number;
    for (let batch = 0; batch < 30; batch++) {
      await server.ctx.db
        .insertInto('files')
        .values(Array.from({ length: 10 }, (_, i) => fileRow(owner.userId, `lightfile${batch}x${i}`, { name: `lighthouse-${batch}-${i}.txt` })))
        .execute();
    }
    expect((await searchSegments(server.ctx.db)).size).toBeGreaterThan(1);
    // Uploads through the API while the merge runs in steps.
    const [merged, uploads] = await Promise.all([
      mergeSearchIndex(server.ctx.db, { pause: true, stepPages: 1 }),
      (async () => {
        const statuses: number[] = [];
        for (let i = 0; i < 8; i++) statuses.push((await uploadFile(owner, `lighthouse-upload-${i}.txt`, `keeper ${i}`)).status);
        return statuses;
      })(),
    ]);
    expect(uploads).toEqual(Array(8).fill(200));
    expect(merged.finished).toBe(true);
    expect(merged.steps).toBeGreaterThan(1);
    await expectIndexAgreesWithFiles();
    const body = await get('/api/files?search=lighthouse&limit=8&sortBy=newest');
    expect(body.pagination.total).toBe(before + 308);
    expect(body.data.map((f: { name: string }) => f.name)).toEqual(Array.from({ length: 8 }, (_, i) => `lighthouse-upload-${7 - i}.txt`));
  });
});
