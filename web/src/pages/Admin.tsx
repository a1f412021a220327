import { useEffect, useState } from 'react';
import { del, get, patch, post } from '../api.ts';
import { formatBytes, formatDate, formatDateTime, fromLocalInput } from '../format.ts';
import { useMe, useSession } from '../session.tsx';
import { Badge, CopyButton, DataTable, Empty, ErrorNote, FormDialog, Loading, TabbedPage, useAction, useConfirm, useLoad, useSubmit, useToast } from '../ui.tsx';
import { permissionGroups, type AdminUser, type AuditRecord, type InstanceSettings, type Invite, type Permission, type Role, type RoleSummary } from '../types.ts';

export function AdminPage() {
  const { can } = useSession();
  return (
    <TabbedPage
      title="Administration"
      tabs={[
        { id: 'users', label: 'Users', allowed: can('users.manage'), render: () => <UsersSection /> },
        { id: 'roles', label: 'Roles', allowed: can('roles.manage'), render: () => <RolesSection /> },
        { id: 'settings', label: 'Instance settings', allowed: can('settings.manage'), render: () => <SettingsSection /> },
        { id: 'invites', label: 'Invites', allowed: can('users.manage'), render: () => <InvitesSection /> },
        { id: 'activity', label: 'Activity', allowed: can('audit.read'), render: () => <ActivitySection /> },
      ]}
    />
  );
}

const MiB = 1024 * 1024;
const toMiB = (bytes: number | null) => (bytes === null ? '' : String(Math.round((bytes / MiB) * 100) / 100));
const fromMiB = (text: string) => Math.round(Number(text) * MiB);

/** Roles to offer in user forms: all roles with roles.manage, else those seen on accounts. */
function useAssignableRoles(users: AdminUser[] | undefined): RoleSummary[] {
  const { can } = useSession();
  const roles = useLoad(() => (can('roles.manage') ? get<{ roles: Role[] }>('/api/roles').then((d) => d.roles) : Promise.resolve(null)), []);
  if (roles.data) return roles.data.filter((r) => r.systemKey !== 'everyone');
  const seen = new Map<string, RoleSummary>();
  for (const user of users ?? []) for (const role of user.roles) if (role.systemKey !== 'everyone') seen.set(role.id, role);
  return [...seen.values()];
}

// ---------------------------------------------------------------------------------------------

function UsersSection() {
  const me = useMe();
  const run = useAction();
  const confirm = useConfirm();
  const users = useLoad(() => get<{ users: AdminUser[] }>('/api/users').then((d) => d.users), []);
  const roles = useAssignableRoles(users.data);
  const [editing, setEditing] = useState<AdminUser | 'new' | null>(null);

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
        <DataTable columns={['Name', 'Email', 'Roles', 'Verified', 'Quota', 'Created']}>
          {users.data.map((user) => (
            <tr key={user.id} data-testid="user-row">
              <td>
                {user.name} {user.id === me.id && <Badge kind="neutral">You</Badge>}
              </td>
              <td>{user.email}</td>
              <td>{user.roles.map((r) => r.name).join(', ') || '–'}</td>
              <td>{user.emailVerified ? <Badge kind="ok">Verified</Badge> : <Badge kind="warn">No</Badge>}</td>
              <td>{user.quotaBytes === null ? 'Default' : user.quotaBytes === 0 ? 'None' : formatBytes(user.quotaBytes)}</td>
              <td>{formatDate(user.createdAt)}</td>
              <td>
                <span className="row-actions">
                  <button type="button" className="small" onClick={() => setEditing(user)} aria-label={`Edit ${user.email}`}>
                    Edit
                  </button>
                  {user.id !== me.id && (
                    <button
                      type="button"
                      className="small danger"
                      aria-label={`Delete ${user.email}`}
                      onClick={async () => {
                        if (!(await confirm('Delete account', `Delete ${user.email} and everything it owns: files, links, tokens, webhooks?`))) return;
                        if (await run(() => del(`/api/users/${encodeURIComponent(user.id)}`), 'Account deleted')) void users.reload();
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
          onSaved={() => {
            setEditing(null);
            void users.reload();
          }}
        />
      )}
    </div>
  );
}

function UserDialog({ user, roles, onClose, onSaved }: { user: AdminUser | null; roles: RoleSummary[]; onClose: () => void; onSaved: () => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [name, setName] = useState(user?.name ?? '');
  const [roleIds, setRoleIds] = useState<string[]>(user?.roleIds ?? []);
  const [verified, setVerified] = useState(user?.emailVerified ?? true);
  const [quota, setQuota] = useState(user ? toMiB(user.quotaBytes) : '');
  // Roles the account has that this list does not show stay assigned.
  const shownRoles = [...roles, ...(user?.roles.filter((r) => r.systemKey !== 'everyone' && !roles.some((x) => x.id === r.id)) ?? [])];

  const submit = async () => {
    if (user) {
      const body: Record<string, unknown> = { roleIds, emailVerified: verified, quotaBytes: quota.trim() === '' ? null : fromMiB(quota) };
      if (name.trim()) body.name = name.trim();
      await patch(`/api/users/${encodeURIComponent(user.id)}`, body);
    } else {
      const body: Record<string, unknown> = { email, password, roleIds, emailVerified: verified };
      if (name.trim()) body.name = name.trim();
      await post('/api/users', body);
    }
    onSaved();
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
      {user && (
        <label>
          Quota in MiB <span className="muted">(empty: the instance default; 0: no quota)</span>
          <input type="number" min={0} step="any" value={quota} onChange={(e) => setQuota(e.target.value)} />
        </label>
      )}
    </FormDialog>
  );
}

// ---------------------------------------------------------------------------------------------

function PermissionBoxes({ selected, onChange, vocabulary, idPrefix }: { selected: Permission[]; onChange: (value: Permission[]) => void; vocabulary: Permission[]; idPrefix: string }) {
  const { can } = useSession();
  const known = new Set(vocabulary);
  return (
    <div className="permission-groups">
      {Object.entries(permissionGroups).map(([group, permissions]) => (
        <fieldset key={group}>
          <legend>{group}</legend>
          {permissions
            .filter((p) => known.size === 0 || known.has(p))
            .map((permission) => (
              <label key={permission} className="checkbox" htmlFor={`${idPrefix}-${permission}`}>
                <input
                  id={`${idPrefix}-${permission}`}
                  type="checkbox"
                  checked={selected.includes(permission)}
                  // Nobody can grant or take away a permission they do not hold themselves.
                  disabled={!can(permission)}
                  onChange={(e) => onChange(e.target.checked ? [...selected, permission] : selected.filter((p) => p !== permission))}
                />
                <code>{permission}</code>
              </label>
            ))}
        </fieldset>
      ))}
    </div>
  );
}

function RolesSection() {
  const run = useAction();
  const confirm = useConfirm();
  const { refresh } = useSession();
  const roles = useLoad(() => get<{ roles: Role[]; permissions: Permission[] }>('/api/roles'), []);
  const [name, setName] = useState('');
  const [permissions, setPermissions] = useState<Permission[]>([]);

  const { submit: create, error } = useSubmit(async () => {
    await post('/api/roles', { name: name.trim(), permissions });
    setName('');
    setPermissions([]);
    void roles.reload();
  });

  return (
    <div className="stack-lg">
      <p className="muted">Everyone applies to every account; the others add their permissions to the accounts they are assigned to. Changes apply on each account’s next request.</p>
      <ErrorNote error={roles.error} />
      {roles.loading && !roles.data && <Loading />}
      {roles.data?.roles.map((role) => (
        <RoleEditor
          key={`${role.id}-${role.updatedAt}`}
          role={role}
          vocabulary={roles.data!.permissions}
          onSaved={() => {
            void roles.reload();
            void refresh();
          }}
          onDelete={async () => {
            if (!(await confirm('Delete role', `Delete the role “${role.name}”? Accounts lose its permissions.`))) return;
            if (await run(() => del(`/api/roles/${encodeURIComponent(role.id)}`), 'Role deleted')) void roles.reload();
          }}
        />
      ))}
      <form className="card stack" onSubmit={create} aria-label="New role">
        <h2>New role</h2>
        <label>
          Name
          <input type="text" value={name} onChange={(e) => setName(e.target.value)} required maxLength={64} name="role-name" />
        </label>
        <PermissionBoxes selected={permissions} onChange={setPermissions} vocabulary={roles.data?.permissions ?? []} idPrefix="new-role" />
        <ErrorNote error={error} />
        <div>
          <button type="submit" className="primary">
            Create role
          </button>
        </div>
      </form>
    </div>
  );
}

function RoleEditor({ role, vocabulary, onSaved, onDelete }: { role: Role; vocabulary: Permission[]; onSaved: () => void; onDelete: () => void }) {
  const toast = useToast();
  const [name, setName] = useState(role.name);
  const [permissions, setPermissions] = useState<Permission[]>(role.permissions);
  const dirty = name !== role.name || [...permissions].sort().join() !== [...role.permissions].sort().join();
  const { submit: save, error } = useSubmit(async () => {
    await patch(`/api/roles/${encodeURIComponent(role.id)}`, { name: name.trim(), permissions });
    toast(`Saved role ${name.trim()}`);
    onSaved();
  });
  return (
    <form className="card stack" onSubmit={save} aria-label={`Role ${role.name}`} data-testid="role-editor">
      <div className="card-row">
        <h2>
          {role.name} {role.builtin && <Badge kind="neutral">Built-in</Badge>}
        </h2>
        {!role.builtin && (
          <button type="button" className="small danger" onClick={onDelete} aria-label={`Delete role ${role.name}`}>
            Delete
          </button>
        )}
      </div>
      <label>
        Name
        <input type="text" value={name} onChange={(e) => setName(e.target.value)} required maxLength={64} />
      </label>
      <PermissionBoxes selected={permissions} onChange={setPermissions} vocabulary={vocabulary} idPrefix={`role-${role.id}`} />
      <ErrorNote error={error} />
      <div className="actions-left">
        <button type="submit" className="primary" disabled={!dirty}>
          Save {role.name}
        </button>
        {dirty && (
          <button
            type="button"
            onClick={() => {
              setName(role.name);
              setPermissions(role.permissions);
            }}
          >
            Undo changes
          </button>
        )}
      </div>
    </form>
  );
}

// ---------------------------------------------------------------------------------------------

function SettingsSection() {
  const toast = useToast();
  const settings = useLoad(() => get<InstanceSettings>('/api/settings'), []);
  const [registration, setRegistration] = useState<InstanceSettings['registration']>('closed');
  const [requireVerification, setRequireVerification] = useState(false);
  const [maxUpload, setMaxUpload] = useState('');
  const [quota, setQuota] = useState('');
  useEffect(() => {
    const s = settings.data;
    if (!s) return;
    setRegistration(s.registration);
    setRequireVerification(s.requireEmailVerification);
    setMaxUpload(toMiB(s.maxUploadSizeBytes));
    setQuota(toMiB(s.defaultQuotaBytes));
  }, [settings.data]);

  const { submit: save, error } = useSubmit(async () => {
    const data = await patch<InstanceSettings>('/api/settings', {
      registration,
      requireEmailVerification: requireVerification,
      maxUploadSizeBytes: fromMiB(maxUpload),
      defaultQuotaBytes: fromMiB(quota || '0'),
    });
    settings.setData(data);
    toast('Settings saved');
  });

  if (!settings.data) return settings.error ? <ErrorNote error={settings.error} /> : <Loading />;
  return (
    <form className="card stack" onSubmit={save} aria-label="Instance settings">
      <label>
        Registration
        <select value={registration} onChange={(e) => setRegistration(e.target.value as InstanceSettings['registration'])}>
          <option value="closed">Closed: administrators create accounts</option>
          <option value="invite">Invite only</option>
          <option value="open">Open: anyone can sign up</option>
        </select>
      </label>
      <label className="checkbox">
        <input type="checkbox" checked={requireVerification} onChange={(e) => setRequireVerification(e.target.checked)} />
        Require a verified email address for API tokens and uploader apps
      </label>
      <label>
        Maximum file size (MiB)
        <input type="number" min={0.01} step="any" value={maxUpload} onChange={(e) => setMaxUpload(e.target.value)} required />
      </label>
      <label>
        Default quota per account (MiB, 0 = none)
        <input type="number" min={0} step="any" value={quota} onChange={(e) => setQuota(e.target.value)} required />
      </label>
      <ErrorNote error={error} />
      <div>
        <button type="submit" className="primary">
          Save settings
        </button>
      </div>
    </form>
  );
}

// ---------------------------------------------------------------------------------------------

function inviteLink(invite: Invite) {
  return `${window.location.origin}/app/signin?invite=${encodeURIComponent(invite.code)}`;
}

function InvitesSection() {
  const run = useAction();
  const confirm = useConfirm();
  const invites = useLoad(() => get<{ invites: Invite[] }>('/api/invites').then((d) => d.invites), []);
  const [expires, setExpires] = useState('');

  const { submit: create, error } = useSubmit(async () => {
    const expiresAt = fromLocalInput(expires);
    await post('/api/invites', expiresAt ? { expiresAt } : {});
    setExpires('');
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
        <DataTable columns={['Code', 'Status', 'Created', 'Expires']}>
          {invites.data.map((invite) => {
            const status = invite.usedAt ? 'used' : Date.parse(invite.expiresAt) <= now ? 'expired' : 'open';
            return (
              <tr key={invite.id}>
                <td>
                  <code>{invite.code}</code>
                </td>
                <td>
                  <Badge kind={status === 'open' ? 'ok' : status === 'used' ? 'neutral' : 'warn'}>{status === 'used' ? `Used ${formatDate(invite.usedAt)}` : status === 'open' ? 'Open' : 'Expired'}</Badge>
                </td>
                <td>{formatDateTime(invite.createdAt)}</td>
                <td>{formatDateTime(invite.expiresAt)}</td>
                <td>
                  <span className="row-actions">
                    {status === 'open' && <CopyButton text={inviteLink(invite)} label="Copy invite link" className="small" />}
                    <button
                      type="button"
                      className="small danger"
                      onClick={async () => {
                        if (!(await confirm('Withdraw invite', 'Withdraw this invite? Its code stops working.', 'Withdraw'))) return;
                        if (await run(() => del(`/api/invites/${encodeURIComponent(invite.id)}`), 'Invite withdrawn')) void invites.reload();
                      }}
                    >
                      Withdraw
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

// ---------------------------------------------------------------------------------------------

/** What scripts did: the records of token- and legacy-authorized requests, newest first. */
function ActivitySection() {
  const { can } = useSession();
  const users = useLoad(() => (can('users.manage') ? get<{ users: AdminUser[] }>('/api/users').then((d) => d.users) : Promise.resolve([])), []);
  const [userId, setUserId] = useState('');
  const [records, setRecords] = useState<AuditRecord[]>([]);
  const [nextBefore, setNextBefore] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);

  const load = async (before: string | null) => {
    setLoading(true);
    setError(null);
    try {
      const query = new URLSearchParams({ limit: '50' });
      if (userId) query.set('userId', userId);
      if (before) query.set('before', before);
      const page = await get<{ records: AuditRecord[]; nextBefore: string | null }>(`/api/audit?${query}`);
      setRecords((shown) => (before ? [...shown, ...page.records] : page.records));
      setNextBefore(page.nextBefore);
    } catch (caught) {
      setError(caught);
    } finally {
      setLoading(false);
    }
  };
  // The first page again whenever the account filter changes.
  useEffect(() => {
    void load(null);
  }, [userId]);

  return (
    <div className="stack-lg">
      <p className="hint">Requests made with API tokens and upload credentials. Browser sessions are not recorded.</p>
      {(users.data?.length ?? 0) > 0 && (
        <label className="inline">
          Account
          <select value={userId} onChange={(e) => setUserId(e.target.value)}>
            <option value="">All accounts</option>
            {users.data!.map((user) => (
              <option key={user.id} value={user.id}>
                {user.email}
              </option>
            ))}
          </select>
        </label>
      )}
      <ErrorNote error={error} />
      {loading && records.length === 0 && <Loading />}
      {!loading && records.length === 0 && !error && <Empty>No recorded requests.</Empty>}
      {records.length > 0 && (
        <DataTable columns={['When', 'Account', 'Credential', 'Request', 'Status', 'From']} actions={false} caption="Recorded requests">
          {records.map((record) => (
            <tr key={record.id} data-testid="audit-row">
              <td>{formatDateTime(record.at)}</td>
              <td>{record.user.email}</td>
              <td>{record.credential === 'legacy' ? 'Upload credential' : (record.token?.name ?? 'Token')}</td>
              <td>
                <code>{record.route}</code>
              </td>
              <td>{record.status < 400 ? <Badge kind="ok">{String(record.status)}</Badge> : <Badge kind="bad">{String(record.status)}</Badge>}</td>
              <td>{record.ip ?? '–'}</td>
            </tr>
          ))}
        </DataTable>
      )}
      {nextBefore && (
        <div>
          <button type="button" onClick={() => void load(nextBefore)} disabled={loading}>
            {loading ? 'Loading…' : 'Show older'}
          </button>
        </div>
      )}
    </div>
  );
}
