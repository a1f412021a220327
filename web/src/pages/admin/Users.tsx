import { useState } from 'react';
import { del, get, patch, post } from '../../api.ts';
import { formatBytes, formatDate } from '../../format.ts';
import { hasPermission, useMe, useSession } from '../../session.tsx';
import { Badge, DataTable, Empty, ErrorNote, FormDialog, Loading, useAction, useConfirm, useFocusAfterRemoval, useLoad, useToast } from '../../ui.tsx';
import type { AdminUser, Role, RoleSummary } from '@api';
import { Link } from '../../router.tsx';
import { fromMiB, toMiB } from './mib.ts';

/** Roles to offer in user forms: all roles with roles.manage, else those seen on accounts. */
function useAssignableRoles(users: AdminUser[] | undefined): RoleSummary[] {
  const { can } = useSession();
  const roles = useLoad(() => (can('roles.manage') ? get<{ roles: Role[] }>('/api/roles').then((d) => d.roles) : Promise.resolve(null)), []);
  if (roles.data) return roles.data.filter((r) => r.systemKey !== 'everyone');
  const seen = new Map<string, RoleSummary>();
  for (const user of users ?? []) for (const role of user.roles) if (role.systemKey !== 'everyone') seen.set(role.id, role);
  return [...seen.values()];
}

/**
 * The quota an account is held to, as the server applies it: its own, else the default, which an
 * account holding quotas.bypass is exempt from. "Default" alone read as held to the default for
 * administrators, whom it does not bind.
 */
const quotaText = (user: AdminUser) =>
  user.quotaBytes === 0 ? 'None' : user.quotaBytes !== null ? formatBytes(user.quotaBytes) : user.quotaAppliedBytes === null ? 'No quota' : `Default (${formatBytes(user.quotaAppliedBytes)})`;
const overQuota = (user: AdminUser) => user.quotaAppliedBytes !== null && user.usedBytes > user.quotaAppliedBytes;

export function UsersSection() {
  const me = useMe();
  const run = useAction();
  const toast = useToast();
  const confirm = useConfirm();
  const { refresh, can } = useSession();
  const users = useLoad(() => get<{ users: AdminUser[] }>('/api/users').then((d) => d.users), []);
  const roles = useAssignableRoles(users.data);
  const [editing, setEditing] = useState<AdminUser | 'new' | null>(null);
  const keepFocus = useFocusAfterRemoval(users.data);

  return (
    <div className="stack-lg">
      <div>
        <button type="button" className="primary" onClick={() => setEditing('new')}>
          Create account
        </button>
      </div>
      <ErrorNote error={users.error} />
      {users.loading && !users.data && <Loading />}
      {users.data && users.data.length === 0 && <Empty>No accounts.</Empty>}
      {users.data && users.data.length > 0 && (
        <DataTable columns={['Name', 'Email', 'Roles', 'Verified', 'Two-factor', 'Stored', 'Quota', 'Created']} caption="Users">
          {users.data.map((user) => (
            <tr key={user.id} data-testid="user-row" data-item-key={user.id}>
              <td>
                {user.name} {user.id === me.id && <Badge kind="neutral">You</Badge>} {user.suspendedAt && <Badge kind="warn">Suspended</Badge>}
              </td>
              <td>{user.email}</td>
              <td>{user.roles.map((r) => r.name).join(', ') || '–'}</td>
              <td>{user.emailVerified ? <Badge kind="ok">Verified</Badge> : <Badge kind="warn">No</Badge>}</td>
              <td>{user.twoFactorEnabled ? <Badge kind="ok">On</Badge> : <Badge kind="neutral">Off</Badge>}</td>
              <td>
                {formatBytes(user.usedBytes)} <span className="muted">({user.fileCount === 1 ? '1 file' : `${user.fileCount} files`})</span> {overQuota(user) && <Badge kind="warn">Over quota: uploads refused</Badge>}
              </td>
              <td>{quotaText(user)}</td>
              <td>{formatDate(user.createdAt)}</td>
              <td>
                <span className="row-actions">
                  <button type="button" className="small" onClick={() => setEditing(user)} aria-label={`Edit ${user.email}`} data-action="edit">
                    Edit
                  </button>
                  {can('audit.read') && (
                    <Link className="button small" to={`/app/admin?tab=changes&target=${encodeURIComponent(user.id)}`} aria-label={`History of ${user.email}`}>
                      History
                    </Link>
                  )}
                  {user.id !== me.id && user.twoFactorEnabled && (
                    <button
                      type="button"
                      className="small"
                      aria-label={`Reset two-factor of ${user.email}`}
                      data-action="reset-two-factor"
                      onClick={async () => {
                        if (!(await confirm('Reset two-factor', `Turn two-factor off for ${user.email}? They sign in with their password alone until they set it up again. Use this for someone who lost their authenticator and recovery codes.`, 'Reset two-factor'))) return;
                        if (await run(() => del(`/api/users/${encodeURIComponent(user.id)}/two-factor`), `Two-factor is off for ${user.email}`)) void users.reload();
                      }}
                    >
                      Reset two-factor
                    </button>
                  )}
                  {user.id !== me.id && (
                    <button
                      type="button"
                      className="small"
                      aria-label={`${user.suspendedAt ? 'Resume' : 'Suspend'} ${user.email}`}
                      data-action="suspend"
                      onClick={async () => {
                        const suspending = !user.suspendedAt;
                        if (suspending && !(await confirm('Suspend account', `Suspend ${user.email}? It is signed out everywhere and cannot sign in; its API tokens and upload credential stop working. Nothing is deleted, its shared links keep working, and you can resume it at any time.`, 'Suspend'))) return;
                        const done = await run(() => patch(`/api/users/${encodeURIComponent(user.id)}`, { suspended: suspending }), suspending ? `${user.email} is suspended` : `${user.email} is resumed`);
                        if (done) void users.reload();
                      }}
                    >
                      {user.suspendedAt ? 'Resume' : 'Suspend'}
                    </button>
                  )}
                  {user.id !== me.id && (
                    <button
                      type="button"
                      className="small danger"
                      aria-label={`Delete ${user.email}`}
                      data-action="delete"
                      onClick={async () => {
                        if (!(await confirm('Delete account', `Delete ${user.email} and everything it owns: files, links, tokens, webhooks?`))) return;
                        if (await run(() => del(`/api/users/${encodeURIComponent(user.id)}`), 'Account deleted')) {
                          keepFocus();
                          void users.reload();
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
      {editing && (
        <UserDialog
          user={editing === 'new' ? null : editing}
          roles={roles}
          onClose={() => setEditing(null)}
          onSaved={async () => {
            toast(editing === 'new' ? 'Account created' : `Saved ${editing.email}`);
            setEditing(null);
            // One's own roles changed (an administrator giving up the role): the app's permissions
            // follow first, so a page no longer allowed says so instead of an error over old rows,
            // and the list is not asked for again.
            if (editing !== 'new' && editing.id === me.id && !hasPermission(await refresh(), 'users.manage')) return;
            void users.reload();
          }}
        />
      )}
    </div>
  );
}

function UserDialog({ user, roles, onClose, onSaved }: { user: AdminUser | null; roles: RoleSummary[]; onClose: () => void; onSaved: () => Promise<void> }) {
  const me = useMe();
  const { can } = useSession();
  // The server refuses any change of one's own quota without quotas.bypass, and a quota of 0 (none)
  // for anyone: the field is not offered where it can only fail, and its hint says what 0 needs.
  const canLiftQuota = can('quotas.bypass');
  const quotaLocked = user?.id === me.id && !canLiftQuota;
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [name, setName] = useState(user?.name ?? '');
  const [roleIds, setRoleIds] = useState<string[]>(user?.roleIds ?? []);
  const [verified, setVerified] = useState(user?.emailVerified ?? true);
  const [quota, setQuota] = useState(user ? toMiB(user.quotaBytes) : '');
  const [newPassword, setNewPassword] = useState('');
  const [changedEmail, setChangedEmail] = useState(user?.email ?? '');
  // One's own address and password change under Account, with the password; the server refuses them here.
  const otherAccount = user !== null && user.id !== me.id;
  // Roles the account has that this list does not show stay assigned.
  const shownRoles = [...roles, ...(user?.roles.filter((r) => r.systemKey !== 'everyone' && !roles.some((x) => x.id === r.id)) ?? [])];

  const submit = async () => {
    if (user) {
      // Only what was changed is sent: the server checks each field sent (a quota of one's own, a
      // quota of none) even when it is the value the account already has, and a size in MiB sent
      // back unchanged must not move by a byte.
      const body: Record<string, unknown> = {};
      if (name.trim() && name.trim() !== user.name) body.name = name.trim();
      if ([...roleIds].sort().join() !== [...user.roleIds].sort().join()) body.roleIds = roleIds;
      if (verified !== user.emailVerified) body.emailVerified = verified;
      if (!quotaLocked && quota.trim() !== toMiB(user.quotaBytes)) body.quotaBytes = quota.trim() === '' ? null : fromMiB(quota);
      if (otherAccount && newPassword !== '') body.password = newPassword;
      if (otherAccount && changedEmail.trim().toLowerCase() !== user.email) body.email = changedEmail.trim();
      if (Object.keys(body).length > 0) await patch(`/api/users/${encodeURIComponent(user.id)}`, body);
    } else {
      const body: Record<string, unknown> = { email, password, roleIds, emailVerified: verified };
      if (name.trim()) body.name = name.trim();
      await post('/api/users', body);
    }
    await onSaved();
  };

  return (
    <FormDialog title={user ? `Edit ${user.email}` : 'Create account'} onClose={onClose} onSubmit={submit} submitLabel={user ? 'Save' : 'Create account'}>
      {!user && (
        <>
          <label>
            Email
            <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} required autoComplete="off" />
          </label>
          <label>
            Password
            <input type="password" value={password} onChange={(e) => setPassword(e.target.value)} required minLength={8} autoComplete="new-password" />
          </label>
        </>
      )}
      <label>
        Name {!user && <span className="muted">(optional)</span>}
        <input type="text" value={name} onChange={(e) => setName(e.target.value)} maxLength={100} />
      </label>
      {otherAccount && (
        <label>
          Email <span className="muted">(they sign in with it)</span>
          <input type="email" value={changedEmail} onChange={(e) => setChangedEmail(e.target.value)} required autoComplete="off" />
        </label>
      )}
      <fieldset>
        <legend>Roles</legend>
        <p className="hint">Everyone’s permissions apply to every account in addition to these.</p>
        {shownRoles.length === 0 && <p className="muted">No other roles.</p>}
        <div className="checkbox-grid">
          {shownRoles.map((role) => (
            <label key={role.id} className="checkbox">
              <input type="checkbox" checked={roleIds.includes(role.id)} onChange={(e) => setRoleIds((ids) => (e.target.checked ? [...ids, role.id] : ids.filter((id) => id !== role.id)))} />
              {role.name}
            </label>
          ))}
        </div>
      </fieldset>
      <label className="checkbox">
        <input type="checkbox" checked={verified} onChange={(e) => setVerified(e.target.checked)} />
        Email address verified
      </label>
      {user && quotaLocked && (
        <p>
          Quota: {quotaText(user)} <span className="muted">(changing your own quota needs the permission quotas.bypass)</span>
        </p>
      )}
      {user && !quotaLocked && (
        <label>
          Quota in MiB{' '}
          <span className="muted">
            {canLiftQuota ? '(empty: the instance default; 0: no quota)' : '(empty: the instance default; 0, no quota, or more than the default needs the permission quotas.bypass)'}
          </span>
          <input type="number" min={0} step="any" value={quota} onChange={(e) => setQuota(e.target.value)} />
        </label>
      )}
      {otherAccount && (
        <label>
          New password <span className="muted">(optional; for someone who forgot theirs: it ends their browser sessions, their API tokens keep working)</span>
          <input type="password" value={newPassword} onChange={(e) => setNewPassword(e.target.value)} minLength={8} autoComplete="new-password" data-testid="new-password" />
        </label>
      )}
    </FormDialog>
  );
}
