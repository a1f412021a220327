import { useState } from 'react';
import { del, get, post } from '../../api.ts';
import { formatDate, formatDateTime, fromLocalInput } from '../../format.ts';
import { Badge, CopyButton, DataTable, Empty, ErrorNote, useAction, useConfirm, useFocusAfterRemoval, useLoad, useSubmit, useToast } from '../../ui.tsx';
import type { Invite } from '@api';

function inviteLink(invite: Invite) {
  return `${window.location.origin}/app/signin?invite=${encodeURIComponent(invite.code)}`;
}

export function InvitesSection() {
  const run = useAction();
  const toast = useToast();
  const confirm = useConfirm();
  const invites = useLoad(() => get<{ invites: Invite[] }>('/api/invites').then((d) => d.invites), []);
  const [expires, setExpires] = useState('');
  const [note, setNote] = useState('');
  const keepFocus = useFocusAfterRemoval(invites.data);

  const { submit: create, error } = useSubmit(async () => {
    const expiresAt = fromLocalInput(expires, 'Expires');
    await post('/api/invites', { ...(expiresAt ? { expiresAt } : {}), ...(note.trim() ? { note } : {}) });
    toast('Invite created');
    setExpires('');
    setNote('');
    void invites.reload();
  });

  const now = Date.now();
  return (
    <div className="stack-lg">
      <form className="card stack" onSubmit={create} aria-label="New invite">
        <h2>New invite</h2>
        <p className="hint">An invite lets one person create an account, even when registration is closed. Valid for 7 days unless you choose otherwise.</p>
        <div className="inline-form">
          <label>
            Note <span className="muted">(optional)</span>
            <input type="text" name="note" maxLength={200} value={note} onChange={(e) => setNote(e.target.value)} placeholder="Who it is for" />
          </label>
          <label>
            Expires <span className="muted">(optional)</span>
            <input type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />
          </label>
          <button type="submit" className="primary">
            Create invite
          </button>
        </div>
        <ErrorNote error={error} />
      </form>
      <ErrorNote error={invites.error} />
      {invites.data && invites.data.length === 0 && <Empty>No invites.</Empty>}
      {invites.data && invites.data.length > 0 && (
        <DataTable columns={['Code', 'Note', 'Status', 'Made by', 'Created', 'Expires']} caption="Invites">
          {invites.data.map((invite) => {
            const status = invite.usedAt ? 'used' : Date.parse(invite.expiresAt) <= now ? 'expired' : 'open';
            return (
              <tr key={invite.id} data-item-key={invite.id}>
                <td>
                  <code>{invite.code}</code>
                </td>
                <td>{invite.note ?? <span className="muted">None</span>}</td>
                <td>
                  <Badge kind={status === 'open' ? 'ok' : status === 'used' ? 'neutral' : 'warn'}>{status === 'used' ? `Used ${formatDate(invite.usedAt)}` : status === 'open' ? 'Open' : 'Expired'}</Badge>
                  {invite.usedBy && <span className="muted small"> by {invite.usedBy.email}</span>}
                </td>
                <td>{invite.createdBy?.email ?? <span className="muted">A deleted account</span>}</td>
                <td>{formatDateTime(invite.createdAt)}</td>
                <td>{formatDateTime(invite.expiresAt)}</td>
                <td>
                  <span className="row-actions">
                    {status === 'open' && <CopyButton text={inviteLink(invite)} label="Copy invite link" ariaLabel={`Copy invite link ${invite.code}`} className="small" />}
                    {/* A used invite has no code left to stop: removing it only forgets how its account came in. */}
                    <button
                      type="button"
                      className="small danger"
                      aria-label={`${status === 'used' ? 'Remove' : 'Withdraw'} invite ${invite.code}`}
                      data-action="withdraw"
                      onClick={async () => {
                        const asked =
                          status === 'used'
                            ? await confirm('Remove invite', `Remove the record of the invite ${invite.code}? The account made with it stays.`, 'Remove')
                            : await confirm('Withdraw invite', `Withdraw the invite ${invite.code}? Its code stops working.`, 'Withdraw');
                        if (!asked) return;
                        if (await run(() => del(`/api/invites/${encodeURIComponent(invite.id)}`), status === 'used' ? 'Invite removed' : 'Invite withdrawn')) {
                          keepFocus();
                          void invites.reload();
                        }
                      }}
                    >
                      {status === 'used' ? 'Remove' : 'Withdraw'}
                    </button>
                  </span>
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}
    </div>
  );
}
