import { useId } from 'react';
import { usePolled } from '../../polled.ts';
import { ErrorNote, Loading } from '../../ui.tsx';
import type { MediaProgress } from '@api';

/** How often the progress is read again while files made before a setting was on are being caught up. */
const POLL_MS = 3000;

type Counts = MediaProgress['thumbnails'];

/** "1,234 done · 56 waiting · 3 failed", and the files left out while the setting was off, if any. */
function summary(counts: Counts): string {
  const parts = [`${counts.done.toLocaleString()} done`, `${counts.pending.toLocaleString()} waiting`, `${counts.failed.toLocaleString()} failed`];
  if (counts.disabled > 0) parts.push(`${counts.disabled.toLocaleString()} left out while turned off`);
  return parts.join(' · ');
}

function ProgressRow({ label, counts, backfilling }: { label: string; counts: Counts; backfilling: boolean }) {
  const id = useId();
  // Files the backfill still has to reach count as not done, so the bar reaches its end with the backfill.
  const total = counts.done + counts.pending + counts.disabled;
  return (
    <>
      <dt id={id}>{label}</dt>
      <dd>
        <span data-testid="media-counts">{summary(counts)}</span>
        {backfilling && total > 0 && <progress className="quota" value={counts.done} max={total} aria-labelledby={id} />}
      </dd>
    </>
  );
}

/**
 * How far thumbnails and text recognition have come across the instance (GET /api/settings/media).
 * While a backfill runs it is read again every few seconds, until the backfill ends. `reloadKey`
 * changes after the settings are saved, which may have started one.
 */
export function MediaProgressPanel({ reloadKey }: { reloadKey: number }) {
  const { data: progress, error } = usePolled<MediaProgress>('/api/settings/media', (answer) => answer.backfilling, POLL_MS, { key: reloadKey });

  if (!progress) return error ? <ErrorNote error={error} /> : <Loading label="Loading progress…" />;
  return (
    <div className="media-progress" data-testid="media-progress">
      <dl className="facts">
        <ProgressRow label="Thumbnails" counts={progress.thumbnails} backfilling={progress.backfilling} />
        <ProgressRow label="Text" counts={progress.ocr} backfilling={progress.backfilling} />
      </dl>
      {progress.backfilling && <p className="hint">Catching up on files uploaded before these were turned on…</p>}
      <ErrorNote error={error} />
    </div>
  );
}
