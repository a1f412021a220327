import { useEffect, useState } from 'react';
import { del, get, patch } from '../api.ts';
import { formatBytes } from '../format.ts';
import { useSession } from '../session.tsx';
import { ErrorNote, Loading, PageHeader, useConfirm, useLoad, useSubmit, useToast } from '../ui.tsx';
import type { Account, ProfileOptions, Tag, UploadProfile } from '@api';
import { OptionsEditor } from './UploadOptions.tsx';
import { UploadProfileOptions } from './FolderOptions.tsx';

/** GET/PATCH /api/account: name, default profile, upload defaults, email, password. */
export function AccountPage() {
  const { can, me, refresh } = useSession();
  const toast = useToast();
  const account = useLoad(() => get<{ account: Account }>('/api/account').then((d) => d.account), []);
  const profiles = useLoad(() => (can('uploadProfiles.manage') ? get<{ profiles: UploadProfile[] }>('/api/upload-profiles').then((d) => d.profiles) : Promise.resolve([] as UploadProfile[])), []);
  const tags = useLoad(() => (can('files.read') ? get<{ tags: Tag[] }>('/api/files/tags').then((d) => d.tags) : Promise.resolve([] as Tag[])), []);
  const editable = can('profile.update');

  const [name, setName] = useState('');
  const [defaultProfileId, setDefaultProfileId] = useState('');
  const [defaults, setDefaults] = useState<ProfileOptions>({});
  useEffect(() => {
    if (!account.data) return;
    setName(account.data.name);
    setDefaultProfileId(account.data.defaultProfileId ?? '');
    setDefaults(account.data.uploadDefaults);
  }, [account.data]);

  const [newEmail, setNewEmail] = useState('');
  const [emailPassword, setEmailPassword] = useState('');
  const { submit: changeEmail, error: emailError } = useSubmit(async () => {
    const data = await patch<{ account: Account }>('/api/account', { email: newEmail, currentPassword: emailPassword });
    account.setData(data.account);
    setNewEmail('');
    setEmailPassword('');
    toast('Email changed; sign in with the new address from now on');
    void refresh();
  });

  const [currentPassword, setCurrentPassword] = useState('');
  const [newPassword, setNewPassword] = useState('');
  const [repeat, setRepeat] = useState('');

  const { submit: saveSettings, error: settingsError } = useSubmit(async () => {
    const body: Record<string, unknown> = { name: name.trim(), uploadDefaults: defaults };
    if (can('uploadProfiles.manage')) body.defaultProfileId = defaultProfileId || null;
    const data = await patch<{ account: Account }>('/api/account', body);
    account.setData(data.account);
    toast('Account saved');
    void refresh();
  });

  const { submit: changePassword, error: passwordError } = useSubmit(async () => {
    if (newPassword !== repeat) throw new Error('The new passwords do not match');
    await patch('/api/account', { currentPassword, newPassword });
    setCurrentPassword('');
    setNewPassword('');
    setRepeat('');
    toast('Password changed; your other browser sessions were signed out');
  });

  const data = account.data;
  return (
    <section className="stack-lg">
      <PageHeader title="Account" />
      <ErrorNote error={account.error} />
      {!data && account.loading && <Loading />}
      {data && (
        <div className="card">
          <dl className="facts">
            <dt>Email</dt>
            <dd>{data.email}</dd>
            <dt>Link prefix</dt>
            <dd>
              <code>
                {window.location.origin}/{data.urlId}/…
              </code>
            </dd>
            <dt>Storage</dt>
            <dd>
              {formatBytes(data.usedBytes)} used{data.quotaBytes !== null ? ` of ${formatBytes(data.quotaBytes)}` : ', no quota'}
              {data.quotaBytes !== null && <progress className="quota" max={data.quotaBytes} value={Math.min(data.usedBytes, data.quotaBytes)} aria-label="Storage used" />}
            </dd>
            <dt>Roles</dt>
            <dd>{me?.roles.map((r) => r.name).join(', ')}</dd>
            <dt>Permissions</dt>
            <dd className="small">{me?.permissions.join(', ')}</dd>
            {me && !me.emailVerified && (
              <>
                <dt>Email verification</dt>
                <dd>Not verified. If this instance requires verified addresses, tokens and uploader apps work once an administrator verifies your account.</dd>
              </>
            )}
          </dl>
        </div>
      )}
      {data && editable && (
        <form className="card stack" onSubmit={saveSettings} aria-label="Account settings">
          <h2>Settings</h2>
          <label>
            Display name
            <input type="text" value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} />
          </label>
          {can('uploadProfiles.manage') && (
            <div className="hinted">
              <label>
                Default upload profile
                <select value={defaultProfileId} onChange={(e) => setDefaultProfileId(e.target.value)} aria-describedby="default-profile-hint">
                  <option value="">None</option>
                  <UploadProfileOptions profiles={profiles.data} />
                </select>
              </label>
              <span id="default-profile-hint" className="hint">
                Used by uploads that choose no profile.
              </span>
            </div>
          )}
          <fieldset>
            <legend>Upload defaults</legend>
            <p className="hint">Your own defaults, below any profile’s options. “Inherit” keeps Hoard’s: public, never expires, original names, framed page.</p>
            <OptionsEditor value={defaults} onChange={setDefaults} tags={tags.data ?? []} />
          </fieldset>
          <ErrorNote error={settingsError} />
          <div>
            <button type="submit" className="primary">
              Save settings
            </button>
          </div>
        </form>
      )}
      {!editable && <p className="muted">Your account cannot change its settings, only its password.</p>}
      {/* Any account may change its address and password: profile.update governs the settings above only. */}
      <form className="card stack" onSubmit={changeEmail} aria-label="Change email">
        <h2>Change email</h2>
        <div className="hinted">
          <label>
            New email
            <input type="email" name="email" autoComplete="email" value={newEmail} onChange={(e) => setNewEmail(e.target.value)} required aria-describedby="new-email-hint" />
          </label>
          <span id="new-email-hint" className="hint">
            You sign in with it from then on. Your tokens, uploader apps and passkeys keep working.
          </span>
        </div>
        <label>
          Current password
          <input type="password" name="emailPassword" data-field="currentPassword" autoComplete="current-password" value={emailPassword} onChange={(e) => setEmailPassword(e.target.value)} required />
        </label>
        <ErrorNote error={emailError} />
        <div>
          <button type="submit">Change email</button>
        </div>
      </form>
      <form className="card stack" onSubmit={changePassword} aria-label="Change password">
        <h2>Change password</h2>
        <input type="email" autoComplete="username" value={data?.email ?? ''} readOnly hidden />
        <label>
          Current password
          <input type="password" name="currentPassword" autoComplete="current-password" value={currentPassword} onChange={(e) => setCurrentPassword(e.target.value)} required />
        </label>
        <div className="hinted">
          <label>
            New password
            <input type="password" name="newPassword" autoComplete="new-password" minLength={8} value={newPassword} onChange={(e) => setNewPassword(e.target.value)} required aria-describedby="new-password-hint" />
          </label>
          <span id="new-password-hint" className="hint">
            At least 8 characters. Your other browser sessions are signed out; named tokens and passkeys keep working (review them under Integrations and Security).
          </span>
        </div>
        <label>
          Repeat the new password
          <input type="password" autoComplete="new-password" minLength={8} value={repeat} onChange={(e) => setRepeat(e.target.value)} required />
        </label>
        <ErrorNote error={passwordError} />
        <div>
          <button type="submit" className="primary">
            Change password
          </button>
        </div>
      </form>
      {data && <DeleteAccount usedBytes={data.usedBytes} />}
    </section>
  );
}

/**
 * Leaving the instance (DELETE /api/account): with the password, after a question that says what
 * goes. The last administrator is refused by the server, which says so here.
 */
function DeleteAccount({ usedBytes }: { usedBytes: number }) {
  const { refresh } = useSession();
  const confirm = useConfirm();
  const [password, setPassword] = useState('');
  const { submit, error } = useSubmit(async () => {
    if (!(await confirm('Delete your account', `Delete your account and everything it owns: your files (${formatBytes(usedBytes)}), short links, API tokens, webhooks and upload profiles? This cannot be undone.`, 'Delete my account'))) return;
    await del('/api/account', { password });
    // The session went with the account: the app returns to its sign-in page.
    await refresh();
  });
  return (
    <form className="card stack" onSubmit={submit} aria-label="Delete account">
      <h2>Delete account</h2>
      <p className="hint">Your files (their bytes too), short links, API tokens, webhooks and upload profiles are deleted, and every browser signed in to this account is signed out.</p>
      <div className="inline-form">
        <label>
          Your password
          <input type="password" name="deletePassword" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        <button type="submit" className="danger">
          Delete my account
        </button>
      </div>
      <ErrorNote error={error} />
    </form>
  );
}
