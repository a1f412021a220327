import { useEffect, useRef, useState } from 'react';
import { del, get, patch, post } from '../../api.ts';
import { useSession } from '../../session.tsx';
import { Badge, ErrorNote, Loading, useAction, useConfirm, useFocusAfterRemoval, useLoad, useSubmit, useToast } from '../../ui.tsx';
import type { Permission, Role } from '@api';
import { permissionGroups } from '@api/vocabulary.ts';

/** The headings of the permission groups (the groups themselves are the server's, src/api/permissions.ts). */
const groupLabels: Record<keyof typeof permissionGroups, string> = { files: 'Files', organisation: 'Organisation', links: 'Links', account: 'Account', instance: 'Instance' };

function PermissionBoxes({ selected, onChange, vocabulary, idPrefix }: { selected: Permission[]; onChange: (value: Permission[]) => void; vocabulary: Permission[]; idPrefix: string }) {
  const { can } = useSession();
  const known = new Set(vocabulary);
  return (
    <div className="permission-groups">
      {(Object.keys(permissionGroups) as Array<keyof typeof permissionGroups>).map((group) => (
        <fieldset key={group}>
          <legend>{groupLabels[group]}</legend>
          {(permissionGroups[group] as readonly Permission[])
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

export function RolesSection() {
  const run = useAction();
  const toast = useToast();
  const confirm = useConfirm();
  const { refresh } = useSession();
  const roles = useLoad(() => get<{ roles: Role[]; permissions: Permission[] }>('/api/roles'), []);
  const [name, setName] = useState('');
  const [permissions, setPermissions] = useState<Permission[]>([]);
  const keepFocus = useFocusAfterRemoval(roles.data);

  const { submit: create, error, clearError } = useSubmit(async () => {
    await post('/api/roles', { name: name.trim(), permissions });
    toast(`Role ${name.trim()} created`);
    setName('');
    setPermissions([]);
    void roles.reload();
  });
  // The last attempt's refusal ("A role with this name already exists") is stale once the form or
  // the roles change: that role may be gone.
  useEffect(clearError, [name, permissions, roles.data, clearError]);

  return (
    <div className="stack-lg">
      <p className="muted">Everyone applies to every account; the others add their permissions to the accounts they are assigned to. Changes apply on each account’s next request.</p>
      <ErrorNote error={roles.error} />
      {roles.loading && !roles.data && <Loading />}
      {roles.data?.roles.map((role) => (
        <RoleEditor
          key={role.id}
          role={role}
          vocabulary={roles.data!.permissions}
          onSaved={() => {
            void roles.reload();
            void refresh();
          }}
          onDelete={async () => {
            if (!(await confirm('Delete role', `Delete the role “${role.name}”? Accounts lose its permissions.`))) return;
            if (await run(() => del(`/api/roles/${encodeURIComponent(role.id)}`), 'Role deleted')) {
              keepFocus();
              void roles.reload();
            }
          }}
        />
      ))}
      <form className="card stack" onSubmit={create} aria-label="New role">
        <h2>New role</h2>
        <label>
          Name
          <input type="text" value={name} onChange={(e) => setName(e.target.value)} required maxLength={64} name="role-name" data-field="name" />
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
  const heading = useRef<HTMLHeadingElement>(null);
  // The form is kept (keyed by the role alone) and takes the saved role's values when they arrive.
  useEffect(() => {
    setName(role.name);
    setPermissions(role.permissions);
  }, [role.updatedAt]);
  const dirty = name !== role.name || [...permissions].sort().join() !== [...role.permissions].sort().join();
  // Save is disabled, and Undo gone, once nothing is left to save: the keyboard's focus, which was on
  // one of them, goes to the role's heading rather than the page's body (a field keeps it).
  // Not when the form first shows: the page opened is the browser's to start from.
  const shown = useRef(false);
  useEffect(() => {
    if (!shown.current) {
      shown.current = true;
      return;
    }
    if (!dirty && (document.activeElement === document.body || (document.activeElement as HTMLButtonElement | null)?.disabled)) heading.current?.focus();
  }, [dirty]);
  const { submit: save, error } = useSubmit(async () => {
    await patch(`/api/roles/${encodeURIComponent(role.id)}`, { name: name.trim(), permissions });
    toast(`Saved role ${name.trim()}`);
    onSaved();
  });
  return (
    <form className="card stack" onSubmit={save} aria-label={`Role ${role.name}`} data-testid="role-editor" data-item-key={role.id}>
      <div className="card-row">
        <h2 ref={heading} tabIndex={-1}>
          {role.name} {role.builtin && <Badge kind="neutral">Built-in</Badge>}
        </h2>
        {!role.builtin && (
          <button type="button" className="small danger" onClick={onDelete} aria-label={`Delete role ${role.name}`} data-action="delete">
            Delete
          </button>
        )}
      </div>
      <label>
        Name
        <input type="text" value={name} onChange={(e) => setName(e.target.value)} required maxLength={64} data-field="name" />
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
