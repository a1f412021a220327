import { useState } from 'react';
import { del, get, post } from '../api.ts';
import { formatDateTime } from '../format.ts';
import { useSession } from '../session.tsx';
import { CopyButton, DataTable, Empty, ErrorNote, Loading, PageHeader, SubmitButton, useAction, useConfirm, useFocusAfterRemoval, useLoad, useSubmit } from '../ui.tsx';
import type { ShortLink } from '@api';

export const shortUrl = (link: ShortLink) => `${window.location.origin}/u/${link.shortCode}`;

/** Short links (/api/urls): create, copy, list with click counts, delete. */
export function LinksPage() {
  const { can } = useSession();
  const run = useAction();
  const confirm = useConfirm();
  const links = useLoad(() => (can('links.read') ? get<{ urls: ShortLink[] }>('/api/urls').then((d) => d.urls) : Promise.resolve([] as ShortLink[])), []);
  const [target, setTarget] = useState('');
  const [created, setCreated] = useState<ShortLink | null>(null);
  const keepFocus = useFocusAfterRemoval(links.data);

  const { submit: create, error, busy, clearError } = useSubmit(async () => {
    // A new attempt replaces the last answer: a refused address is not said beside the link made before.
    setCreated(null);
    const link = await post<ShortLink>('/api/urls', { url: target.trim() });
    setCreated(link);
    setTarget('');
    void links.reload();
  });

  return (
    <section className="stack-lg">
      <PageHeader title="Short links" />
      {can('links.create') && (
        <form onSubmit={create} className="card stack" aria-label="Shorten a URL">
          <h2>Shorten a URL</h2>
          <div className="inline-form">
            <label className="grow">
              Long URL
              <input type="url" required placeholder="https://example.com/a/very/long/address" value={target}
                onChange={(e) => {
                  setTarget(e.target.value);
                  // The last refusal was about the address as it was: it goes once the address changes.
                  clearError();
                }}
                name="url"
              />
            </label>
            <SubmitButton busy={busy} busyLabel="Shortening…">
              Shorten
            </SubmitButton>
          </div>
          <ErrorNote error={error} />
          {created && (
            <p className="created-link" role="status">
              Short link:{' '}
              <a href={shortUrl(created)} target="_blank" rel="noopener noreferrer" data-testid="created-short-link">
                {shortUrl(created)}
              </a>{' '}
              <CopyButton text={shortUrl(created)} />
            </p>
          )}
        </form>
      )}

      {can('links.read') ? (
        <div className="stack">
          <h2>Your links</h2>
          <ErrorNote error={links.error} />
          {links.loading && !links.data && <Loading />}
          {links.data && links.data.length === 0 && <Empty>No short links yet.</Empty>}
          {links.data && links.data.length > 0 && (
            <DataTable columns={['Short link', 'Target', { label: 'Clicks', className: 'num' }, 'Created']} caption="Short links">
              {links.data.map((link) => (
                <tr key={link.id} data-testid="short-link-row" data-item-key={link.id}>
                  <td>
                    <a href={shortUrl(link)} target="_blank" rel="noopener noreferrer">
                      /u/{link.shortCode}
                    </a>
                  </td>
                  <td className="truncate-cell" title={link.targetUrl}>
                    {link.targetUrl}
                  </td>
                  <td className="num" data-testid="clicks">
                    {link.clicks}
                  </td>
                  <td>{formatDateTime(link.createdAt)}</td>
                  <td>
                    <span className="row-actions">
                      <CopyButton text={shortUrl(link)} className="small" ariaLabel={`Copy /u/${link.shortCode}`} />
                      {can('links.delete') && (
                        <button
                          type="button"
                          className="small danger"
                          aria-label={`Delete /u/${link.shortCode}`}
                          data-action="delete"
                          onClick={async () => {
                            if (!(await confirm('Delete short link', `Delete /u/${link.shortCode}? Visitors will get “not found”.`))) return;
                            if (await run(() => del(`/api/urls/${encodeURIComponent(link.id)}`), 'Short link deleted')) {
                              // The panel of the link just made must not go on offering a deleted one.
                              if (created?.id === link.id) setCreated(null);
                              keepFocus();
                              void links.reload();
                            }
                          }}
                        >
                          Delete
                        </button>
                      )}
                    </span>
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
          <div>
            <button type="button" onClick={() => void links.reload()}>
              Refresh click counts
            </button>
          </div>
        </div>
      ) : (
        <p className="muted">Your account cannot list short links.</p>
      )}
    </section>
  );
}
