import { useEffect, useRef, useState } from 'react';
import { query, request } from '../api.ts';
import { formatBytes, formatDateTime, mibToBytes, pluralize } from '../format.ts';
import { useSession } from '../session.tsx';
import { CopyButton, Dialog, ErrorNote } from '../ui.tsx';
import type { FileRecord, Pagination } from '@api';
import { downloadPath, previewPath, shareUrl, thumbnailPath } from './file-links.ts';
import { VisibilityBadges } from './FileItems.tsx';

interface Neighbour {
  file: FileRecord | null;
  pagination: Pagination;
}

/** The image next to `anchor` in the current filter and sort (galleryAnchor + galleryDirection). */
async function neighbour(listParams: Record<string, string>, anchor: string, direction: 'next' | 'previous'): Promise<Neighbour> {
  const response = await request('GET', `/api/files${query({ ...listParams, galleryAnchor: anchor, galleryDirection: direction, limit: 1 })}`);
  const body = response.body as { data: FileRecord[]; pagination: Pagination };
  return { file: body.data[0] ?? null, pagination: body.pagination };
}

/**
 * The gallery viewer: one image at a time, with previous/next through the images the current filters
 * select (in the list's order, across pages), by keyboard (← →) or buttons.
 */
export function Gallery({ start, open, listParams, onClose, onEdit }: { start: FileRecord; open: boolean; listParams: Record<string, string>; onClose: () => void; onEdit: (file: FileRecord) => void }) {
  const { can } = useSession();
  const [current, setCurrent] = useState(start);
  const [previous, setPrevious] = useState<FileRecord | null>(null);
  const [next, setNext] = useState<FileRecord | null>(null);
  const [position, setPosition] = useState<{ index: number; total: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  /** The file whose original has loaded: until then its thumbnail stands in. */
  const [loaded, setLoaded] = useState<string | null>(null);
  const paramsKey = JSON.stringify(listParams);

  useEffect(() => {
    // Closed, it stays mounted (to animate and give focus back): it asks for nothing until opened
    // again, rather than two requests for neighbours nobody sees at every change of the filters.
    if (!open) return;
    let cancelled = false;
    setPrevious(null);
    setNext(null);
    setError(null);
    Promise.all([neighbour(listParams, current.id, 'previous'), neighbour(listParams, current.id, 'next')]).then(
      ([before, after]) => {
        if (cancelled) return;
        setPrevious(before.file);
        setNext(after.file);
        // An anchored page's offset is the position of its first item; for `next` that is anchor + 1.
        const offset = after.pagination.offset;
        setPosition(offset !== undefined ? { index: offset - 1, total: after.pagination.total } : null);
      },
      (caught) => {
        if (!cancelled) setError(caught);
      },
    );
    return () => {
      cancelled = true;
    };
  }, [current.id, paramsKey, open]);

  // ← and → anywhere while the viewer is open (focus may be on its close button or a link).
  useEffect(() => {
    if (!open) return;
    const onKeyDown = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement | null;
      if (target && (target.tagName === 'INPUT' || target.tagName === 'SELECT' || target.tagName === 'TEXTAREA')) return;
      if (event.key === 'ArrowLeft' && previous) {
        event.preventDefault();
        setCurrent(previous);
      } else if (event.key === 'ArrowRight' && next) {
        event.preventDefault();
        setCurrent(next);
      }
    };
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, [open, previous, next]);

  const placeholder = loaded === current.id ? null : thumbnailPath(current);
  const swipe = useRef<{ x: number; y: number } | null>(null);

  return (
    <Dialog open={open} wide title={current.name} onClose={onClose}>
      <div className="gallery" data-testid="gallery">
        <div className="gallery-stage">
          {/* Marked, not disabled, when there is no image that way (or while the neighbours load):
              a disabled button drops the focus it had to the page's body, at the first and last
              image and for a moment after every step. */}
          <button type="button" className="gallery-nav" onClick={() => previous && setCurrent(previous)} aria-disabled={!previous} aria-label="Previous image" aria-keyshortcuts="ArrowLeft">
            ‹
          </button>
          <figure>
            {/* The viewer shows the original; its small thumbnail, usually cached from the grid, fills the frame while the original loads. */}
            <div
              className="gallery-frame"
              // A swipe sideways on a touch screen steps as the arrow keys do.
              onTouchStart={(event) => {
                const touch = event.touches[0];
                swipe.current = touch ? { x: touch.clientX, y: touch.clientY } : null;
              }}
              onTouchEnd={(event) => {
                const start = swipe.current;
                const touch = event.changedTouches[0];
                swipe.current = null;
                if (!start || !touch) return;
                const dx = touch.clientX - start.x;
                if (Math.abs(dx) < 50 || Math.abs(dx) < Math.abs(touch.clientY - start.y)) return;
                const target = dx > 0 ? previous : next;
                if (target) setCurrent(target);
              }}
            >
              {placeholder && <img key={`${current.id}-thumbnail`} className="gallery-placeholder" src={placeholder} alt="" aria-hidden="true" />}
              <img key={current.id} className={loaded === current.id ? undefined : 'gallery-loading'} src={previewPath(current)} alt={current.name} onLoad={() => setLoaded(current.id)} />
            </div>
            <figcaption>
              {position && (
                <span aria-live="polite">
                  {/* The name is said too: ← and → change it, and the heading is not announced. */}
                  <span className="visually-hidden">{current.name}, </span>
                  Image {position.index + 1} of {position.total} ·{' '}
                </span>
              )}
              {formatBytes(mibToBytes(current.size))} · {formatDateTime(current.uploadedAt)} · {pluralize(current.views, 'view')}
            </figcaption>
          </figure>
          <button type="button" className="gallery-nav" onClick={() => next && setCurrent(next)} aria-disabled={!next} aria-label="Next image" aria-keyshortcuts="ArrowRight">
            ›
          </button>
        </div>
        <ErrorNote error={error} />
        <div className="gallery-actions">
          <VisibilityBadges file={current} />
          <span className="row-actions">
            <CopyButton text={shareUrl(current)} label="Copy link" />
            <a className="button" href={shareUrl(current)} target="_blank" rel="noopener noreferrer">
              Share page
            </a>
            <a className="button" href={downloadPath(current)} download>
              Download
            </a>
            {can('files.update') && (
              <button type="button" onClick={() => onEdit(current)}>
                Edit
              </button>
            )}
          </span>
        </div>
        <p className="muted small gallery-hint">
          <span className="for-keys">Use the ← and → keys to move between images.</span>
          <span className="for-touch">Swipe sideways, or use ‹ and ›, to move between images.</span>
        </p>
      </div>
    </Dialog>
  );
}
