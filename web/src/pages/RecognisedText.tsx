import { useId } from 'react';
import { usePolled } from '../polled.ts';
import { CopyButton, ErrorNote } from '../ui.tsx';
import type { FileOcr, FileRecord } from '@api';

/** While the text is still being read, it is asked for again this often, for at most two minutes. */
const POLL_MS = 4000;
const GIVE_UP_MS = 120_000;

const statusLines: Record<FileOcr['status'], string> = {
  pending: 'Reading the text in this image…',
  disabled: 'Text recognition is turned off',
  failed: 'The text could not be read',
  unsupported: 'Text is not recognised in this type of image',
  done: 'No text found',
};

/**
 * The text recognised in an image (GET /api/files/{id}/ocr), read-only, with a Copy button; or a
 * line saying why there is none yet. The text is what makes the image findable by search, so the
 * owner can check here what the search sees.
 */
export function RecognisedText({ file }: { file: FileRecord }) {
  const legendId = useId();
  const { data: ocr, error } = usePolled<FileOcr>(`/api/files/${encodeURIComponent(file.id)}/ocr`, (answer) => answer.status === 'pending', POLL_MS, { forMs: GIVE_UP_MS });

  const text = ocr?.status === 'done' && ocr.text?.trim() ? ocr.text : null;
  return (
    <fieldset className="recognised-text" data-testid="recognised-text">
      <legend id={legendId}>Recognised text</legend>
      <ErrorNote error={error} />
      {text !== null ? (
        <>
          {/* Scrollable, so it takes keyboard focus; named by the legend. */}
          <pre className="ocr-text" tabIndex={0} role="region" aria-labelledby={legendId}>
            {text}
          </pre>
          <div>
            <CopyButton text={text} label="Copy" className="small" describedBy={legendId} />
          </div>
        </>
      ) : (
        !error && (
          <p className="muted small" aria-live="polite">
            {ocr ? statusLines[ocr.status] : 'Loading…'}
          </p>
        )
      )}
    </fieldset>
  );
}
