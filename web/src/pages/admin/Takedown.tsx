import { useRef, useState } from 'react';
import { del, get, query } from '../../api.ts';
import { formatBytes, formatDateTime, pluralize } from '../../format.ts';
import { ErrorNote, SubmitButton, useAction, useConfirm, useSubmit } from '../../ui.tsx';
import type { ReportedContent } from '@api';

/**
 * Taking down one file or short link of any account from the address an abuse report gives
 * (docs/decisions.md, "Taking down content"): what it leads to and whose it is are shown first, and
 * the removal is asked again.
 */
export function TakedownSection() {
  const run = useAction();
  const confirm = useConfirm();
  const [address, setAddress] = useState('');
  const [found, setFound] = useState<ReportedContent | null>(null);
  const [reason, setReason] = useState('');
  const field = useRef<HTMLInputElement>(null);
  const { submit, error, busy } = useSubmit(async () => {
    setFound(null);
    setReason('');
    setFound(await get<ReportedContent>(`/api/moderation/lookup${query({ address })}`));
  });

  const takeDown = async (content: ReportedContent) => {
    const what = content.kind === 'file' ? `the file ${content.label}` : `the short link to ${content.label}`;
    if (!(await confirm(content.kind === 'file' ? 'Take down file' : 'Take down short link', `Delete ${what} of ${content.owner.email}? ${content.kind === 'file' ? 'Its bytes and every link to it are gone for good.' : 'Its address stops working.'} Its owner is told${reason.trim() ? ', with your reason' : ''}; the rest of the account stays as it is.`, 'Take down'))) return;
    const path = content.kind === 'file' ? `/api/moderation/files/${encodeURIComponent(content.id)}` : `/api/moderation/links/${encodeURIComponent(content.id)}`;
    if (await run(() => del(path, reason.trim() ? { reason } : undefined), content.kind === 'file' ? `File taken down: ${content.label}` : 'Short link taken down')) {
      setFound(null);
      setAddress('');
      setReason('');
      field.current?.focus();
    }
  };

  return (
    <div className="stack-lg">
      <form className="card stack" onSubmit={submit} aria-label="Find what an address leads to">
        <h2>Take down a file or short link</h2>
        <p className="hint">Paste the address from a report: a share page, a file link or a short link. You see what it leads to and whose it is before anything is removed. Only that file or link goes; to stop the account itself, suspend it under Users.</p>
        <div className="inline-form">
          <label>
            Address of the file or short link
            <input ref={field} type="text" name="address" inputMode="url" autoComplete="off" spellCheck={false} value={address} onChange={(e) => setAddress(e.target.value)} placeholder={`${window.location.origin}/u/AbC123`} required />
          </label>
          <SubmitButton busy={busy} busyLabel="Finding…">
            Find
          </SubmitButton>
        </div>
        <ErrorNote error={error} />
      </form>
      {found && (
        <section className="card stack" aria-labelledby="reported-heading" data-testid="reported-content">
          <h2 id="reported-heading">{found.kind === 'file' ? 'File' : 'Short link'}</h2>
          <dl className="facts">
            <dt>{found.kind === 'file' ? 'Name' : 'Leads to'}</dt>
            <dd>{found.label}</dd>
            <dt>Owner</dt>
            <dd>{found.owner.email}</dd>
            {found.kind === 'file' ? (
              <>
                <dt>Type and size</dt>
                <dd>
                  {found.mimeType}, {formatBytes(found.sizeBytes)}
                </dd>
                <dt>Shared</dt>
                <dd>
                  {found.visibility === 'PUBLIC' ? 'Public' : 'Private'}
                  {found.hasPassword ? ', with a password' : ''}; {pluralize(found.views, 'view')}
                </dd>
                <dt>Uploaded</dt>
                <dd>{formatDateTime(found.createdAt)}</dd>
              </>
            ) : (
              <>
                <dt>Short code</dt>
                <dd>
                  <code>{found.shortCode}</code>; {pluralize(found.clicks, 'click')}
                </dd>
                <dt>Made</dt>
                <dd>{formatDateTime(found.createdAt)}</dd>
              </>
            )}
          </dl>
          <label>
            Reason, shown to the owner (optional)
            <input type="text" name="reason" maxLength={500} autoComplete="off" value={reason} onChange={(e) => setReason(e.target.value)} placeholder="Reported as copyright infringement" />
          </label>
          <div>
            <button type="button" className="danger" onClick={() => void takeDown(found)}>
              Take down
            </button>
          </div>
        </section>
      )}
    </div>
  );
}
