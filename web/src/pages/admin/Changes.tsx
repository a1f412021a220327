import { query } from '../../api.ts';
import { ShowOlder, useOlderPages } from './older-pages.tsx';
import { formatBytes, formatDateTime } from '../../format.ts';
import { DataTable, Empty, ErrorNote, Loading } from '../../ui.tsx';
import { useQueryState } from '../../router.tsx';
import type { AdminActionKind, AdminActionPage, AdminChange } from '@api';

/** Each action in words (typed by the API's vocabulary, so a new kind cannot go unnamed here). */
const actionWords: Record<AdminActionKind, string> = {
  'account.create': 'Created account',
  'account.change': 'Changed account',
  'account.delete': 'Deleted account',
  'account.two-factor-reset': 'Turned off two-factor of',
  'role.create': 'Created role',
  'role.change': 'Changed role',
  'role.delete': 'Deleted role',
  'settings.change': 'Changed',
  'invite.create': 'Created invite',
  'invite.withdraw': 'Withdrew invite',
  'file.take-down': 'Took down file',
  'link.take-down': 'Took down short link',
};

const fieldWords: Record<string, string> = {
  email: 'Email',
  name: 'Name',
  roles: 'Roles',
  emailVerified: 'Email verified',
  quotaBytes: 'Quota',
  suspended: 'Suspended',
  password: 'Password',
  permissions: 'Permissions',
  files: 'Files',
  usedBytes: 'Storage used',
  size: 'Size',
  owner: 'Owner',
  targetUrl: 'Leading to',
  reason: 'Reason',
  expiresAt: 'Expires',
  note: 'Note',
  registration: 'Registration',
  requireEmailVerification: 'Email verification required',
  maxUploadSizeBytes: 'Maximum upload size',
  defaultQuotaBytes: 'Default quota',
  thumbnailsEnabled: 'Thumbnails',
  ocrEnabled: 'Text recognition',
};

const byteFields = new Set(['usedBytes', 'size', 'maxUploadSizeBytes']);

function valueText(field: string, value: AdminChange['from']): string {
  if (field === 'quotaBytes') return value === null ? 'instance default' : value === 0 ? 'no quota' : formatBytes(Number(value));
  if (field === 'defaultQuotaBytes') return value === 0 ? 'no quota' : formatBytes(Number(value));
  if (byteFields.has(field) && typeof value === 'number') return formatBytes(value);
  if (field === 'expiresAt' && typeof value === 'string') return formatDateTime(value);
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.join(', ');
  if (value === null || value === undefined) return '–';
  return String(value);
}

function changeText(change: AdminChange): string {
  const field = fieldWords[change.field] ?? change.field;
  // A new password is recorded as set, never as its value.
  if (change.field === 'password') return `${field}: set`;
  const from = 'from' in change ? valueText(change.field, change.from) : null;
  const to = 'to' in change ? valueText(change.field, change.to) : null;
  if (from !== null && to !== null) return `${field}: ${from} → ${to}`;
  return `${field}: ${from ?? to}`;
}

/** What administrators changed: accounts, roles, settings, invites and other accounts' content, newest first. */
export function ChangesSection() {
  // `target`: only the changes to one account, role, invite, file or link (Users → History).
  const [params, setParams] = useQueryState();
  const target = params.get('target');
  const pages = useOlderPages(
    (before) => `/api/admin/actions${query({ limit: 50, before, targetId: target })}`,
    (page: AdminActionPage) => page.actions,
    [target],
  );
  const { items: actions, error, loading } = pages;

  return (
    <div className="stack-lg">
      <p className="hint">Changes administrators made to accounts, roles, settings, invites and other accounts' files and links. Passwords and invite codes are never recorded.</p>
      {target && (
        <p className="inline-form">
          <span>
            Only the changes to <strong>{actions[0]?.target.label ?? 'one account'}</strong>.
          </span>
          <button type="button" className="link-button" onClick={() => setParams({ target: null }, { push: true })}>
            Show all changes
          </button>
        </p>
      )}
      <ErrorNote error={error} />
      {loading && actions.length === 0 && <Loading />}
      {!loading && actions.length === 0 && !error && <Empty>No changes recorded.</Empty>}
      {actions.length > 0 && (
        <DataTable columns={['When', 'By', 'Change', 'Details']} actions={false} caption="Changes made by administrators">
          {actions.map((action) => (
            <tr key={action.id} data-testid="admin-change-row">
              <td>{formatDateTime(action.at)}</td>
              <td>{action.actor.email}</td>
              <td>
                {actionWords[action.action]} <strong>{action.target.label}</strong>
              </td>
              <td>
                {action.changes.length === 0 ? (
                  '–'
                ) : (
                  <ul className="plain-list">
                    {action.changes.map((change) => (
                      <li key={change.field}>{changeText(change)}</li>
                    ))}
                  </ul>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <ShowOlder pages={pages} />
    </div>
  );
}
