import { useEffect, useId, useState } from 'react';
import { bucketLabel, pluralize } from '../format.ts';
import { ErrorNote } from '../ui.tsx';
import type { Timeline, TimelineBucket } from '@api';

export type GroupBy = 'month' | 'week' | 'year';

/**
 * The timeline scrubber (GET /api/files/timeline): a bar per calendar bucket of the current filters,
 * in the list's order. Choosing a bucket (click, or the slider with the keyboard) makes the list a
 * window read: the same filters, the timeline's snapshot, and the date range cut to the bucket.
 */
export function TimelineBar({
  timeline,
  error,
  groupBy,
  onGroupBy,
  selected,
  onSelect,
}: {
  timeline: Timeline | undefined;
  error: unknown;
  groupBy: GroupBy;
  onGroupBy: (value: GroupBy) => void;
  selected: string | null;
  onSelect: (bucket: TimelineBucket | null) => void;
}) {
  const sliderId = useId();
  const buckets = timeline?.buckets ?? [];
  const selectedIndex = buckets.findIndex((b) => b.key === selected);
  const [scrub, setScrub] = useState<number | null>(null);
  const shown = scrub ?? (selectedIndex >= 0 ? selectedIndex : null);

  // The slider previews as it moves and reads the window once it rests.
  useEffect(() => {
    if (scrub === null) return;
    const timer = window.setTimeout(() => {
      const bucket = buckets[scrub];
      if (bucket && bucket.key !== selected) onSelect(bucket);
      setScrub(null);
    }, 350);
    return () => window.clearTimeout(timer);
  }, [scrub, buckets, selected, onSelect]);

  if (error) return <ErrorNote error={error} />;
  // Its place is kept while it loads, so the list below does not move when it arrives.
  if (!timeline) return <div className="timeline timeline-placeholder" aria-hidden="true" data-testid="timeline-placeholder" />;
  if (timeline.total === 0) return null;
  const max = Math.max(...buckets.map((b) => b.count), 1);
  const undated = buckets.length === 1 && buckets[0]!.key === 'all';

  return (
    <section className="timeline" aria-label="Timeline">
      <div className="timeline-head">
        <h2 className="small-heading">Timeline</h2>
        <span className="muted small">
          {pluralize(timeline.total, 'file')}, {timeline.order === 'newest' ? 'newest' : 'oldest'} first
        </span>
        {!undated && (
          <label className="inline">
            Group by
            <select value={groupBy} onChange={(e) => onGroupBy(e.target.value as GroupBy)}>
              <option value="month">Month</option>
              <option value="week">Week</option>
              <option value="year">Year</option>
            </select>
          </label>
        )}
        {selected && (
          <button
            type="button"
            className="link-button"
            onClick={(event) => {
              // This button goes once no period is chosen: the focus stays with the period's own bar.
              const bars = event.currentTarget.closest('.timeline');
              const bar = bars?.querySelector<HTMLElement>('.timeline-bars [aria-pressed="true"]') ?? bars?.querySelector<HTMLElement>('.timeline-bars button');
              onSelect(null);
              bar?.focus();
            }}
          >
            Show all periods
          </button>
        )}
      </div>
      {undated ? (
        <p className="muted small">This sort order is not by date, so the timeline has one bucket: all {pluralize(timeline.total, 'file')}.</p>
      ) : (
        <>
          <div className="timeline-bars" role="group" aria-label="Periods">
            {buckets.map((bucket, index) => (
              <button
                key={bucket.key}
                type="button"
                className={index === shown ? 'timeline-bar active' : 'timeline-bar'}
                aria-pressed={bucket.key === selected}
                aria-label={`${bucketLabel(bucket.key)}: ${pluralize(bucket.count, 'file')}`}
                title={`${bucketLabel(bucket.key)}: ${pluralize(bucket.count, 'file')}`}
                onClick={() => onSelect(bucket.key === selected ? null : bucket)}
              >
                <span className="timeline-fill" style={{ height: `${Math.max(8, (bucket.count / max) * 100)}%` }} />
              </button>
            ))}
          </div>
          {buckets.length === 1 && (
            // One period has nothing to scrub through, but its bar alone would not say which it is.
            <p className="timeline-scrubber small muted" data-testid="timeline-period">
              {bucketLabel(buckets[0]!.key)} · {pluralize(buckets[0]!.count, 'file')}
            </p>
          )}
          {buckets.length > 1 && (
          <div className="timeline-scrubber">
            <label htmlFor={sliderId} className="visually-hidden">
              Scrub through periods
            </label>
            <input
              id={sliderId}
              type="range"
              min={0}
              max={Math.max(0, buckets.length - 1)}
              step={1}
              value={shown ?? 0}
              aria-valuetext={shown !== null && buckets[shown] ? `${bucketLabel(buckets[shown]!.key)}, ${pluralize(buckets[shown]!.count, 'file')}` : 'All periods'}
              onChange={(e) => setScrub(Number(e.target.value))}
              onKeyDown={(event) => {
                // With no period chosen the slider's thumb rests on the first bar but stands for all
                // of them: the first step chooses the bar under it (End the last one). Left to the
                // browser, → would step past the first bar to the second, and ← would do nothing.
                if (shown !== null) return;
                const steps = ['ArrowRight', 'ArrowUp', 'ArrowLeft', 'ArrowDown', 'PageUp', 'PageDown', 'Home'];
                const to = event.key === 'End' ? buckets.length - 1 : steps.includes(event.key) ? 0 : undefined;
                if (to === undefined) return;
                event.preventDefault();
                setScrub(to);
              }}
              data-testid="timeline-scrubber"
            />
            <output htmlFor={sliderId} className="small">
              {shown !== null && buckets[shown] ? `${bucketLabel(buckets[shown]!.key)} · ${pluralize(buckets[shown]!.count, 'file')}` : `${bucketLabel(buckets[0]!.key)} – ${bucketLabel(buckets[buckets.length - 1]!.key)}`}
            </output>
          </div>
          )}
        </>
      )}
    </section>
  );
}
