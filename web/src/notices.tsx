import { useEffect, useRef, useState } from 'react';
import { ApiError, del, get } from './api.ts';
import { formatDateTime } from './format.ts';
import { useToast } from './ui.tsx';
import type { AccountNotice } from '@api';

/**
 * What the account is told until it dismisses it, above every page: that an administrator took
 * down one of its files or short links, and why where they said (docs/decisions.md, "Taking down
 * content"). Asked for once a sign-in; a notice that cannot be read leaves the page as it is.
 */
export function AccountNotices() {
  const toast = useToast();
  const [notices, setNotices] = useState<AccountNotice[]>([]);
  useEffect(() => {
    get<{ notices: AccountNotice[] }>('/api/account/notices').then(
      (data) => setNotices(data.notices),
      () => undefined,
    );
  }, []);
  // After a dismissal, once the notice is gone from the page: the next notice's Dismiss keeps the
  // keyboard's place; with none left, the page's main area (not the page's body).
  const refocus = useRef(false);
  useEffect(() => {
    if (!refocus.current) return;
    refocus.current = false;
    (document.querySelector<HTMLElement>('.account-notices button') ?? document.getElementById('main'))?.focus();
  }, [notices]);
  if (notices.length === 0) return null;

  const dismiss = async (notice: AccountNotice) => {
    try {
      await del(`/api/account/notices/${encodeURIComponent(notice.id)}`);
    } catch (error) {
      // Gone already (dismissed in another tab): dismissed here too.
      if (!(error instanceof ApiError && error.status === 404)) {
        toast(`Could not dismiss the notice: ${error instanceof Error ? error.message : 'failed'}`, 'error');
        return;
      }
    }
    refocus.current = true;
    setNotices((shown) => shown.filter((n) => n.id !== notice.id));
  };

  return (
    <section className="account-notices stack" aria-label="Notices">
      {notices.map((notice) => (
        <div className="note account-notice" role="note" key={notice.id} data-testid="account-notice">
          <p>
            An administrator took down your {notice.kind === 'file.take-down' ? 'file' : 'short link'} <strong>{notice.subject}</strong> on {formatDateTime(notice.createdAt)}.
            {notice.reason !== null && <> Reason: {notice.reason}</>}
          </p>
          <button type="button" className="link-button" onClick={() => void dismiss(notice)} aria-label={`Dismiss the notice about ${notice.subject}`}>
            Dismiss
          </button>
        </div>
      ))}
    </section>
  );
}
