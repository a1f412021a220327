import { useState } from 'react';
import { get, query } from '../../api.ts';
import { ShowOlder, useOlderPages } from './older-pages.tsx';
import { formatDateTime } from '../../format.ts';
import { useSession } from '../../session.tsx';
import { Badge, DataTable, Empty, ErrorNote, Loading, useLoad } from '../../ui.tsx';
import type { AdminUser, AuditPage } from '@api';

/** What scripts did: the records of token- and legacy-authorized requests, newest first. */
export function ActivitySection() {
  const { can } = useSession();
  const users = useLoad(() => (can('users.manage') ? get<{ users: AdminUser[] }>('/api/users').then((d) => d.users) : Promise.resolve([])), []);
  const [userId, setUserId] = useState('');
  const pages = useOlderPages(
    (before) => `/api/audit${query({ limit: 50, userId, before })}`,
    (page: AuditPage) => page.records,
    [userId],
  );
  const { items: records, error, loading } = pages;

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
      <ShowOlder pages={pages} />
    </div>
  );
}
