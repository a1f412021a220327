import { useSession } from '../session.tsx';
import { TabbedPage } from '../ui.tsx';
import { ActivitySection } from './admin/Activity.tsx';
import { ChangesSection } from './admin/Changes.tsx';
import { InvitesSection } from './admin/Invites.tsx';
import { RolesSection } from './admin/Roles.tsx';
import { SettingsSection } from './admin/Settings.tsx';
import { TakedownSection } from './admin/Takedown.tsx';
import { UsersSection } from './admin/Users.tsx';

/** The administration page: one tab per section (web/src/pages/admin/), each shown to whoever holds its permission. */
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
        { id: 'takedown', label: 'Take down', allowed: can('users.manage'), render: () => <TakedownSection /> },
        { id: 'activity', label: 'Activity', allowed: can('audit.read'), render: () => <ActivitySection /> },
        { id: 'changes', label: 'Changes', allowed: can('audit.read'), render: () => <ChangesSection /> },
      ]}
    />
  );
}
