import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Db, Dialect } from '../db/database.ts';
import type { Executor } from '../db/account-scope.ts';
import { addJobIfAbsent, enqueueJob, type JobHandler } from '../jobs/queue.ts';

/**
 * Upkeep of SQLite's trigram index (docs/decisions.md, "Search index"). FTS5 writes every
 * transaction's changes as a new segment and merges segments of similar size as they pile up, so an
 * index that grew over time is a dozen or more large segments, and every search reads each of them:
 * with a million files in 12 segments, a name word with 66,000 matches took 35 ms newest first and
 * its timeline by month 61 ms; the same index merged into one segment, 23 and 32 ms. Small segments
 * added later cost nothing noticeable (a thousand single-file commits after the merge: the same
 * times), so the index is merged again only when the segments besides the largest hold a good share
 * of it, once a day at most.
 */
export const SEARCH_MERGE_JOB = 'search.merge';
const MERGE_KEY = 'search-merge';
const MERGE_INTERVAL_MS = 24 * 3600 * 1000;
/** The first check after a start that found none scheduled, away from the start's own work. */
const FIRST_CHECK_MS = 10 * 60 * 1000;
/** The segments besides the largest must hold more than this share of the index to merge it. */
const MERGE_SHARE = 0.1;
/**
 * Leaf pages written per step. SQLite's statements block this process while they run; a step of
 * this many pages took 5.6 ms (median; 21 ms at most) in merging 100,000 files' index from 14
 * segments (235 steps). The job then waits as long again, so requests keep at least half of the
 * process.
 */
const STEP_PAGES = 100;

/** Schedules the daily check unless one is scheduled (SQLite only: PostgreSQL has no such index). */
export async function scheduleSearchMerge(executor: Executor, dialect: Dialect, runAt = Date.now() + FIRST_CHECK_MS): Promise<void> {
  if (dialect === 'sqlite') await addJobIfAbsent(executor, { type: SEARCH_MERGE_JOB, payload: {}, runAt, dedupeKey: MERGE_KEY });
}

/**
 * The index's segments and their sizes in leaf pages. FTS5 keeps a segment's leaf pages in its
 * `filesSearch_data` table under consecutive row IDs, segment number × 2^37 + page number (its file
 * format, which SQLite keeps compatible), so a segment's size is two look-ups: counting the pages
 * instead reads the whole index (6 s for a million files' 1.3 GB), and the number of entries per
 * segment in `filesSearch_idx` follows the terms, not the size.
 */
export async function searchSegments(db: Executor): Promise<Map<number, number>> {
  const { rows } = await sql<{ segid: number; pages: number }>`
    select s.segid as segid,
      (select id from filesSearch_data where id >= s.lo and id < s.hi order by id desc limit 1)
      - (select id from filesSearch_data where id >= s.lo and id < s.hi order by id limit 1) + 1 as pages
    from (select segid, segid * 137438953472 as lo, segid * 137438953472 + 2147483648 as hi from filesSearch_idx group by segid) s`.execute(db);
  return new Map(rows.map((r) => [Number(r.segid), Number(r.pages ?? 0)]));
}

/** Whether the segments besides the largest hold more than MERGE_SHARE of the index's pages. */
export function mergeWanted(segments: Map<number, number>): boolean {
  const sizes = [...segments.values()];
  const total = sizes.reduce((sum, n) => sum + n, 0);
  return sizes.length > 1 && total - Math.max(...sizes) > MERGE_SHARE * total;
}

/**
 * Merges the index's present segments into one, in steps of `stepPages` (default STEP_PAGES) pages:
 * FTS5's 'merge' command with a negative page count merges every segment, whatever its level, as
 * 'optimize' would, but a bounded amount of work per statement. With `pause`, it waits as long as
 * each step took before the next. Done when none of the segments it started with is left, or when
 * a step finds nothing to do; segments written meanwhile may join the merge, so it also stops after
 * twice the steps the index's size calls for, and a steady stream of uploads cannot keep it going.
 * Returns the steps taken and whether it finished.
 */
export async function mergeSearchIndex(db: Db, options: { pause: boolean; stepPages?: number }): Promise<{ steps: number; finished: boolean }> {
  const stepPages = options.stepPages ?? STEP_PAGES;
  const initial = await searchSegments(db);
  if (initial.size <= 1) return { steps: 0, finished: true };
  const pages = [...initial.values()].reduce((sum, n) => sum + n, 0);
  const budget = 2 * Math.ceil(pages / stepPages) + 16;
  for (let steps = 1; steps <= budget; steps++) {
    const started = performance.now();
    // A step that writes nothing changes at most the structure record: fewer than two rows.
    const before = await totalChanges(db);
    await sql`insert into filesSearch(filesSearch, rank) values ('merge', ${-stepPages})`.execute(db);
    const worked = (await totalChanges(db)) - before >= 2;
    if (!worked || !(await anySegmentLeft(db, [...initial.keys()]))) return { steps, finished: true };
    if (options.pause) await sleep(performance.now() - started);
  }
  return { steps: budget, finished: false };
}

/**
 * Whether any of `segids` is still in the index: a look-up per segment in `filesSearch_idx`, keyed by
 * (segment, term), where reading every segment's size would group the whole table at every step.
 */
async function anySegmentLeft(db: Db, segids: number[]): Promise<boolean> {
  const { rows } = await sql<{ left: number }>`select exists (select 1 from filesSearch_idx where segid in (${sql.join(segids)})) as "left"`.execute(db);
  return Number(rows[0]!.left) === 1;
}

async function totalChanges(db: Db): Promise<number> {
  const { rows } = await sql<{ n: number }>`select total_changes() as n`.execute(db);
  return Number(rows[0]!.n);
}

/** Merges when worthwhile; runs again in a day, or in a minute when a merge was left unfinished. */
export function searchMergeHandler(ctx: { db: Db; dialect: Dialect; log: { info(o: object, m: string): void } }): JobHandler {
  return async () => {
    if (ctx.dialect !== 'sqlite') return;
    const segments = await searchSegments(ctx.db);
    let finished = true;
    if (mergeWanted(segments)) {
      const started = performance.now();
      const merged = await mergeSearchIndex(ctx.db, { pause: true });
      finished = merged.finished;
      ctx.log.info({ segments: segments.size, steps: merged.steps, finished, ms: Math.round(performance.now() - started) }, 'merged the search index');
    }
    await enqueueJob(ctx.db, { type: SEARCH_MERGE_JOB, payload: {}, runAt: Date.now() + (finished ? MERGE_INTERVAL_MS : 60_000), dedupeKey: MERGE_KEY });
  };
}
