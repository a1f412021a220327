import { Fragment, useMemo, useState } from 'react';
import { del, get, patch, post } from '../api.ts';
import { formatDateTime, fromLocalInput, withHiddenPassword } from '../format.ts';
import { useSession } from '../session.tsx';
import { Badge, CopyButton, DataTable, Empty, ErrorNote, Loading, SecretReveal, TabbedPage, useAction, useConfirm, useFocusAfterRemoval, useLoad, useSubmit, useToast } from '../ui.tsx';
import type { Delivery, Scope, TokenList, TokenRecord, UploadProfile, Webhook } from '@api';
import { scopes as allScopes } from '@api/vocabulary.ts';
import { UploadProfileOptions } from './FolderOptions.tsx';

const scopeHelp: Record<Scope, string> = {
  'files:read': 'list and search files',
  'files:upload': 'upload files',
  'urls:read': 'list short links',
  'urls:write': 'create and delete short links',
};

export function IntegrationsPage() {
  const { can } = useSession();
  return (
    <TabbedPage
      title="Integrations"
      tabs={[
        { id: 'tokens', label: 'API tokens', allowed: can('tokens.manage'), render: () => <TokensSection /> },
        { id: 'webhooks', label: 'Webhooks', allowed: can('webhooks.manage'), render: () => <WebhooksSection /> },
        { id: 'uploaders', label: 'Uploader apps', allowed: can('tokens.manage'), render: () => <UploadersSection /> },
      ]}
    />
  );
}

// ---------------------------------------------------------------------------------------------

function statusBadge(status: TokenRecord['status']) {
  return <Badge kind={status === 'active' ? 'ok' : status === 'expired' ? 'warn' : 'bad'}>{status[0]!.toUpperCase() + status.slice(1)}</Badge>;
}

/** A first command for a new token, one its scopes allow (a token for uploads only cannot list files). */
function tryIt(secret: string, scopes: readonly Scope[]): string {
  const call = `curl -H "Authorization: Bearer ${secret.slice(0, 8)}…"`;
  const origin = window.location.origin;
  if (scopes.includes('files:read')) return `${call} ${origin}/api/files`;
  if (scopes.includes('files:upload')) return `${call} -F file=@photo.png ${origin}/api/files`;
  if (scopes.includes('urls:read')) return `${call} ${origin}/api/urls`;
  return `${call} -H "Content-Type: application/json" -d '{"url":"https://example.com"}' ${origin}/api/urls`;
}

/**
 * What the buttons and questions call each active token. Names need not be unique (a ShareX token
 * per machine is often "ShareX"), and two buttons both named "Revoke ShareX" leave a screen reader's
 * user, and the question that follows, unable to say which one goes: a repeated name is told apart by
 * when its token was made, and by its place in the list if that is the same minute too.
 */
function tokenLabels(tokens: readonly TokenRecord[]): Map<string, string> {
  const active = tokens.filter((t) => t.status === 'active');
  const group = (key: (t: TokenRecord) => string) => {
    const groups = new Map<string, TokenRecord[]>();
    for (const t of active) groups.set(key(t), [...(groups.get(key(t)) ?? []), t]);
    return groups;
  };
  const byName = group((t) => t.name);
  const made = (t: TokenRecord) => `${t.name} ${formatDateTime(t.createdAt)}`;
  const byMinute = group(made);
  const labels = new Map<string, string>();
  for (const t of active) {
    const sameMinute = byMinute.get(made(t))!;
    const label =
      byName.get(t.name)!.length === 1
        ? t.name
        : sameMinute.length === 1
          ? `${t.name} (made ${formatDateTime(t.createdAt)})`
          : `${t.name} (made ${formatDateTime(t.createdAt)}, ${sameMinute.indexOf(t) + 1} of ${sameMinute.length})`;
    labels.set(t.id, label);
  }
  return labels;
}

function TokensSection() {
  const { can } = useSession();
  const run = useAction();
  const confirm = useConfirm();
  const tokens = useLoad(() => get<TokenList>('/api/tokens'), []);
  // The latest 100 records, then any older token that still works (listed apart by the API).
  const listed = useMemo(() => (tokens.data ? [...tokens.data.tokens, ...tokens.data.olderActive] : []), [tokens.data]);
  // A revoked token stays listed without its buttons: focus goes on to the next row's Revoke.
  const keepFocus = useFocusAfterRemoval(tokens.data);
  const labels = useMemo(() => tokenLabels(listed), [listed]);
  const profiles = useLoad(() => (can('uploadProfiles.manage') ? get<{ profiles: UploadProfile[] }>('/api/upload-profiles').then((d) => d.profiles) : Promise.resolve([] as UploadProfile[])), []);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['files:upload']);
  const [expires, setExpires] = useState('');
  const [profileId, setProfileId] = useState('');
  const [secret, setSecret] = useState<{ title: string; value: string; scopes: readonly Scope[] } | null>(null);

  const { submit: create, error, busy } = useSubmit(async () => {
    const body: Record<string, unknown> = { name: name.trim(), scopes };
    const expiresAt = fromLocalInput(expires, 'Expires');
    if (expiresAt) body.expiresAt = expiresAt;
    if (profileId && scopes.includes('files:upload')) body.profileId = profileId;
    const created = await post<{ token: TokenRecord; secret: string }>('/api/tokens', body);
    setSecret({ title: `Secret of “${created.token.name}”`, value: created.secret, scopes: created.token.scopes });
    setName('');
    setExpires('');
    setProfileId('');
    void tokens.reload();
  });

  const profileName = (id: string | null) => (id === null ? '–' : (profiles.data?.find((p) => p.id === id)?.name ?? 'Deleted profile'));
  const minExpiry = new Date(Date.now() + 60_000);
  const pad = (n: number) => String(n).padStart(2, '0');
  const minLocal = `${minExpiry.getFullYear()}-${pad(minExpiry.getMonth() + 1)}-${pad(minExpiry.getDate())}T${pad(minExpiry.getHours())}:${pad(minExpiry.getMinutes())}`;

  return (
    <div className="stack-lg">
      <p className="muted">Named tokens let scripts use the API with only the scopes you give them, and never more than your own permissions. Send one as <code>Authorization: Bearer svc_…</code>. The <a href="/api/docs">API reference</a> describes every operation.</p>
      {secret && (
        <SecretReveal title={secret.title} secret={secret.value} onDone={() => setSecret(null)}>
          <p className="small">
            Try it: <code>{tryIt(secret.value, secret.scopes)}</code>
          </p>
        </SecretReveal>
      )}
      <form className="card stack" onSubmit={create} aria-label="Create a token">
        <h2>Create a token</h2>
        <label>
          Name
          <input type="text" value={name} onChange={(e) => setName(e.target.value)} required maxLength={80} name="token-name" data-field="name" placeholder="e.g. backup script" />
        </label>
        <fieldset>
          <legend>Scopes</legend>
          <div className="checkbox-grid">
            {allScopes.map((scope) => (
              <label key={scope} className="checkbox">
                <input type="checkbox" checked={scopes.includes(scope)} onChange={(e) => setScopes((list) => (e.target.checked ? [...list, scope] : list.filter((s) => s !== scope)))} />
                <span>
                  <code>{scope}</code> <span className="muted small">{scopeHelp[scope]}</span>
                </span>
              </label>
            ))}
          </div>
        </fieldset>
        <div className="inline-form">
          <label>
            Expires <span className="muted">(optional)</span>
            <input type="datetime-local" value={expires} min={minLocal} onChange={(e) => setExpires(e.target.value)} />
          </label>
          {can('uploadProfiles.manage') && (
            <label>
              Upload profile <span className="muted">(optional)</span>
              <select value={profileId} onChange={(e) => setProfileId(e.target.value)} disabled={!scopes.includes('files:upload')} aria-describedby="profile-hint">
                <option value="">Not bound</option>
                <UploadProfileOptions profiles={profiles.data} />
              </select>
            </label>
          )}
        </div>
        {can('uploadProfiles.manage') && (
          <p id="profile-hint" className="hint">
            A token bound to a profile always uploads with that profile’s options and cannot override them (needs <code>files:upload</code>).
          </p>
        )}
        <ErrorNote error={error} />
        <div>
          <button type="submit" className="primary" disabled={scopes.length === 0} aria-disabled={busy || undefined}>
            {busy ? 'Creating…' : 'Create token'}
          </button>
        </div>
      </form>

      <div>
        <h2>Tokens</h2>
        {tokens.data && (
          <p className="muted">
            {tokens.data.activeCount} of {tokens.data.limit} active tokens in use. The latest 100 records are listed, revoked and expired ones included, then any older token that still works.
          </p>
        )}
        <ErrorNote error={tokens.error} />
        {tokens.loading && !tokens.data && <Loading />}
        {tokens.data && listed.length === 0 && <Empty>No tokens yet.</Empty>}
        {tokens.data && listed.length > 0 && (
          <DataTable columns={['Name', 'Scopes', 'Status', 'Profile', 'Created', 'Expires', 'Last used']} caption="Tokens">
            {listed.map((token) => (
              <tr key={token.id} data-testid="token-row" data-item-key={token.id}>
                <td>{token.name}</td>
                <td>
                  {token.scopes.map((s) => (
                    <code key={s} className="scope">
                      {s}
                    </code>
                  ))}
                </td>
                <td>{statusBadge(token.status)}</td>
                <td>{profileName(token.profileId)}</td>
                <td>{formatDateTime(token.createdAt)}</td>
                <td>{token.revokedAt ? `Revoked ${formatDateTime(token.revokedAt)}` : token.expiresAt ? formatDateTime(token.expiresAt) : 'Never'}</td>
                <td>{token.lastUsedAt ? formatDateTime(token.lastUsedAt) : 'Never'}</td>
                <td>
                  {token.status === 'active' && (
                    <span className="row-actions">
                      <button
                        type="button"
                        className="small"
                        aria-label={`Rotate ${labels.get(token.id)}`}
                        data-action="rotate"
                        onClick={async () => {
                          if (!(await confirm('Rotate token', `Replace “${labels.get(token.id)}” with a new secret? The current secret stops working at once.`, 'Rotate'))) return;
                          await run(async () => {
                            const rotated = await post<{ token: TokenRecord; secret: string }>(`/api/tokens/${encodeURIComponent(token.id)}/rotate`);
                            setSecret({ title: `New secret of “${rotated.token.name}”`, value: rotated.secret, scopes: rotated.token.scopes });
                            await tokens.reload();
                          });
                        }}
                      >
                        Rotate
                      </button>
                      <button
                        type="button"
                        className="small danger"
                        aria-label={`Revoke ${labels.get(token.id)}`}
                        data-action="revoke"
                        onClick={async () => {
                          if (!(await confirm('Revoke token', `Revoke “${labels.get(token.id)}”? Scripts using it stop working at once. It stays listed as revoked.`, 'Revoke'))) return;
                          if (await run(() => del(`/api/tokens/${encodeURIComponent(token.id)}`), 'Token revoked')) {
                            keepFocus();
                            void tokens.reload();
                          }
                        }}
                      >
                        Revoke
                      </button>
                    </span>
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </div>
    </div>
  );
}

// ---------------------------------------------------------------------------------------------

function WebhooksSection() {
  const run = useAction();
  const toast = useToast();
  const confirm = useConfirm();
  const webhooks = useLoad(() => get<{ webhooks: Webhook[] }>('/api/webhooks').then((d) => d.webhooks), []);
  const keepWebhookFocus = useFocusAfterRemoval(webhooks.data);
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState<{ title: string; value: string } | null>(null);
  const [open, setOpen] = useState<string | null>(null);

  const { submit: create, error } = useSubmit(async () => {
    const created = await post<{ webhook: Webhook; secret: string }>('/api/webhooks', { name: name.trim(), url: url.trim() });
    setSecret({ title: `Signing secret of “${created.webhook.name}”`, value: created.secret });
    setName('');
    setUrl('');
    void webhooks.reload();
  });

  return (
    <div className="stack-lg">
      <p className="muted">
        A webhook receives a signed <code>file.ready</code> event (Standard Webhooks) each time an upload finishes. Verify the <code>webhook-signature</code> header with the signing secret.
      </p>
      {secret && <SecretReveal title={secret.title} secret={secret.value} onDone={() => setSecret(null)} />}
      <form className="card stack" onSubmit={create} aria-label="Add a webhook">
        <h2>Add a webhook</h2>
        <div className="inline-form">
          <label>
            Name
            <input type="text" value={name} onChange={(e) => setName(e.target.value)} required maxLength={80} name="webhook-name" data-field="name" />
          </label>
          <label className="grow">
            Receiver URL
            <input type="url" value={url} onChange={(e) => setUrl(e.target.value)} required placeholder="https://example.com/hooks/hoard" name="url" />
          </label>
          <button type="submit" className="primary">
            Add webhook
          </button>
        </div>
        <ErrorNote error={error} />
      </form>

      <div>
        <h2>Webhooks</h2>
        <ErrorNote error={webhooks.error} />
        {webhooks.loading && !webhooks.data && <Loading />}
        {webhooks.data && webhooks.data.length === 0 && <Empty>No webhooks yet.</Empty>}
        {webhooks.data && webhooks.data.length > 0 && (
          <DataTable columns={['Name', 'Receiver', 'Enabled']} caption="Webhooks">
            {webhooks.data.map((hook) => (
              <Fragment key={hook.id}>
                <tr data-testid="webhook-row" data-item-key={hook.id}>
                  <td>{hook.name}</td>
                  <td className="truncate-cell" title={withHiddenPassword(hook.url)}>
                    {withHiddenPassword(hook.url)}
                  </td>
                  <td>
                    <label className="switch">
                      <input
                        type="checkbox"
                        role="switch"
                        checked={hook.enabled}
                        onChange={async (e) => {
                          const enabled = e.target.checked;
                          // Shown at once; put back if the server refuses.
                          webhooks.setData(webhooks.data!.map((w) => (w.id === hook.id ? { ...w, enabled } : w)));
                          await run(() => patch(`/api/webhooks/${encodeURIComponent(hook.id)}`, { enabled }), enabled ? 'Webhook enabled' : 'Webhook disabled');
                          void webhooks.reload();
                        }}
                      />
                      <span className="visually-hidden">Enabled: {hook.name}</span>
                    </label>
                  </td>
                  <td>
                    <span className="row-actions">
                      <button
                        type="button"
                        className="small"
                        aria-label={`Send test to ${hook.name}`}
                        onClick={async () => {
                          if (await run(() => post(`/api/webhooks/${encodeURIComponent(hook.id)}/test`))) {
                            toast('Test event queued');
                            setOpen(hook.id);
                          }
                        }}
                      >
                        Send test
                      </button>
                      <button type="button" className="small" aria-expanded={open === hook.id} aria-label={`Deliveries of ${hook.name}`} onClick={() => setOpen(open === hook.id ? null : hook.id)}>
                        Deliveries
                      </button>
                      <button
                        type="button"
                        className="small"
                        aria-label={`Rotate secret of ${hook.name}`}
                        onClick={async () => {
                          if (!(await confirm('Rotate signing secret', `Make a new signing secret for “${hook.name}”? It is shown once. The current secret keeps signing beside it for 24 hours: give your receiver the new one within a day.`, 'Rotate'))) return;
                          await run(async () => {
                            const rotated = await post<{ webhook: Webhook; secret: string }>(`/api/webhooks/${encodeURIComponent(hook.id)}/rotate-secret`);
                            setSecret({ title: `New signing secret of “${rotated.webhook.name}” (the old one works for 24 more hours)`, value: rotated.secret });
                          });
                        }}
                      >
                        Rotate secret
                      </button>
                      <button
                        type="button"
                        className="small danger"
                        aria-label={`Delete webhook ${hook.name}`}
                        data-action="delete"
                        onClick={async () => {
                          if (!(await confirm('Delete webhook', `Delete “${hook.name}” and its delivery log? Unsent deliveries are dropped.`))) return;
                          if (await run(() => del(`/api/webhooks/${encodeURIComponent(hook.id)}`), 'Webhook deleted')) {
                            // The focus goes to the next webhook's Delete (or the page's heading), not the body.
                            keepWebhookFocus();
                            void webhooks.reload();
                          }
                        }}
                      >
                        Delete
                      </button>
                    </span>
                  </td>
                </tr>
                {open === hook.id && (
                  <tr className="subrow">
                    <td colSpan={4}>
                      <Deliveries webhookId={hook.id} />
                    </td>
                  </tr>
                )}
              </Fragment>
            ))}
          </DataTable>
        )}
      </div>
    </div>
  );
}

function Deliveries({ webhookId }: { webhookId: string }) {
  const run = useAction();
  const deliveries = useLoad(() => get<{ deliveries: Delivery[] }>(`/api/webhooks/${encodeURIComponent(webhookId)}/deliveries`).then((d) => d.deliveries), [webhookId]);
  // A second click while a resend is on its way sends nothing more (marked busy, not disabled, so the focus stays).
  const [resending, setResending] = useState<string | null>(null);
  return (
    <div className="deliveries">
      <div className="inline-form">
        <h3 className="small-heading">Delivery log (latest 100)</h3>
        <button type="button" className="small" onClick={() => void deliveries.reload()}>
          Refresh
        </button>
      </div>
      <ErrorNote error={deliveries.error} />
      {deliveries.data && deliveries.data.length === 0 && <Empty>No deliveries yet.</Empty>}
      {deliveries.data && deliveries.data.length > 0 && (
        <DataTable columns={['Created', 'Status', { label: 'Attempts', className: 'num' }, 'Last response', 'Delivered']} wrap={false}>
          {deliveries.data.map((d) => (
            <tr key={d.id}>
              <td>{formatDateTime(d.createdAt)}</td>
              <td>
                <Badge kind={d.status === 'delivered' ? 'ok' : d.status === 'pending' ? 'neutral' : 'bad'}>{d.status}</Badge>
              </td>
              <td className="num">{d.attempts}</td>
              <td className="small">{d.lastStatus !== null ? `HTTP ${d.lastStatus}` : ''} {d.lastError ?? ''}</td>
              <td>{formatDateTime(d.deliveredAt)}</td>
              <td>
                {/* The same event again, as a new delivery at the top: for one that failed while the receiver was down or misconfigured. */}
                {d.status !== 'pending' && (
                  <button
                    type="button"
                    className="small"
                    // Named by the event (its webhook-id): deliveries made in one minute read alike by their times.
                    aria-label={`Resend event ${d.eventId}`}
                    aria-disabled={resending !== null}
                    onClick={async () => {
                      if (resending !== null) return;
                      setResending(d.id);
                      try {
                        if (await run(() => post(`/api/webhooks/${encodeURIComponent(webhookId)}/deliveries/${encodeURIComponent(d.id)}/resend`), 'Event queued again')) await deliveries.reload();
                      } finally {
                        setResending(null);
                      }
                    }}
                  >
                    Resend
                  </button>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </div>
  );
}

// ---------------------------------------------------------------------------------------------

function UploadersSection() {
  const run = useAction();
  const confirm = useConfirm();
  const token = useLoad(() => get<{ uploadToken: string }>('/api/profile/upload-token').then((d) => d.uploadToken), []);
  const [shown, setShown] = useState(false);
  const origin = window.location.origin;
  return (
    <div className="stack-lg">
      <p className="muted">
        ShareX, Flameshot and shell scripts upload with your account’s upload token. Like a token with every scope, it can do what the API allows with your permissions: upload, list and read your files (private ones too), and make and delete short links; it cannot manage your account. Give a configuration only to what you would give your files, or use a named token with the upload scope alone. Regenerating it stops every configuration downloaded before.
      </p>
      <div className="card stack">
        <h2>Upload token</h2>
        <ErrorNote error={token.error} />
        {token.data && (
          <div className="secret-row">
            <code className="secret-value" data-testid="upload-token">
              {shown ? token.data : '•'.repeat(Math.min(32, token.data.length))}
            </code>
            <button type="button" onClick={() => setShown((s) => !s)} aria-pressed={shown}>
              {shown ? 'Hide' : 'Show'}
            </button>
            <CopyButton text={token.data} />
          </div>
        )}
        <div>
          <button
            type="button"
            className="danger"
            onClick={async () => {
              if (!(await confirm('Regenerate upload token', 'Make a new upload token? Configurations downloaded before stop working.', 'Regenerate'))) return;
              if (await run(() => post('/api/profile/upload-token'), 'Upload token regenerated')) void token.reload();
            }}
          >
            Regenerate
          </button>
        </div>
      </div>
      <div className="card stack">
        <h2>Downloads</h2>
        <ul className="download-list">
          <li>
            <a className="button" href="/api/profile/sharex" download>
              ShareX uploader (.sxcu)
            </a>{' '}
            <span className="muted small">Open the file to add Hoard as a custom uploader.</span>
          </li>
          <li>
            <a className="button" href="/api/profile/sharex-shortener" download>
              ShareX URL shortener (.sxcu)
            </a>{' '}
            <span className="muted small">Shortens links with your short links here.</span>
          </li>
          <li>
            <a className="button" href="/api/profile/flameshot" download>
              Flameshot script
            </a>{' '}
            <span className="muted small">Takes a screenshot with Flameshot and uploads it.</span>
          </li>
          <li>
            <a className="button" href="/api/profile/bash" download>
              Bash script
            </a>{' '}
            <span className="muted small">
              <code>hoard-upload.sh file…</code> uploads files and prints their links.
            </span>
          </li>
        </ul>
        <p className="small">
          Or with curl: <code>curl -H "Authorization: Bearer $HOARD_TOKEN" -F file=@photo.png {origin}/api/files</code>
        </p>
      </div>
    </div>
  );
}
