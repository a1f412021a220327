import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { del, get, patch, post } from '../api.ts';
import { formatDateTime } from '../format.ts';
import { useSession } from '../session.tsx';
import { Badge, CopyButton, DataTable, Empty, ErrorNote, FormDialog, Loading, PageHeader, SubmitButton, useAction, useConfirm, useFocusAfterRemoval, useLoad, useSubmit, useToast } from '../ui.tsx';
import { explainPasskeyError } from '../passkey-errors.ts';
import type { Passkey, SessionConfirmation, SessionRecord } from '@api';

/**
 * Sign-in security (contract §8): two-factor codes, passkeys and the browser sessions of the account.
 * The QR code and WebAuthn libraries are loaded when used, so the app's first page stays as light.
 */
export function SecurityPage() {
  useEffect(() => {
    document.title = 'Security · Hoard';
  }, []);
  return (
    <section>
      <PageHeader title="Security" />
      <TwoFactorSection />
      <PasskeysSection />
      <SessionsSection />
    </section>
  );
}

// Asked again when less than this is left of the session's hour: a passkey's or an authenticator
// app's set-up takes a few minutes, and should not be refused half-way.
const CONFIRM_MARGIN_MS = 10 * 60 * 1000;

/**
 * Adding a passkey or turning on two-factor needs a sign-in or a confirmed password within the last
 * hour (docs/decisions.md, "Recent sign-in"). `confirmed()` answers true at once when the session's
 * hour has time left, else asks for the password in a dialog and answers whether it was given.
 */
function useRecentSignIn(): { confirmed: () => Promise<boolean>; dialog: ReactNode } {
  const [asking, setAsking] = useState(false);
  const [password, setPassword] = useState('');
  const answer = useRef<((given: boolean) => void) | null>(null);
  const settle = (given: boolean) => {
    answer.current?.(given);
    answer.current = null;
    setAsking(false);
    setPassword('');
  };
  const confirmed = async () => {
    const { confirmedUntil } = await get<SessionConfirmation>('/api/auth/confirm');
    if (Date.parse(confirmedUntil) - Date.now() > CONFIRM_MARGIN_MS) return true;
    return new Promise<boolean>((resolve) => {
      answer.current = resolve;
      setAsking(true);
    });
  };
  const dialog = asking && (
    <FormDialog
      title="Confirm your password"
      submitLabel="Confirm"
      onClose={() => settle(false)}
      onSubmit={async () => {
        await post('/api/auth/confirm', { password });
        settle(true);
      }}
    >
      <p>Adding a passkey or turning on two-factor asks for your password when you signed in (or last gave it) nearly an hour ago or more, so that a browser left signed in cannot add a way into your account.</p>
      <label>
        Your password
        <input type="password" name="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} data-autofocus />
      </label>
    </FormDialog>
  );
  return { confirmed, dialog };
}

/** Recovery codes, shown once, with copy and download. */
function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const id = useId();
  const text = `Hoard recovery codes (${window.location.host})\nEach code works once, instead of a two-factor code.\n\n${codes.join('\n')}\n`;
  const download = () => {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = 'hoard-recovery-codes.txt';
    link.click();
    URL.revokeObjectURL(url);
  };
  // Shown in place of the form that made them: the focus goes to them, as to a new token's secret.
  const heading = useRef<HTMLHeadingElement>(null);
  // A task later: a dialog that made them (New recovery codes) gives the focus back to its opener
  // in a task of its own as it closes, which must come first.
  useEffect(() => {
    const timer = setTimeout(() => heading.current?.focus(), 0);
    return () => clearTimeout(timer);
  }, [codes]);
  return (
    <section className="secret" aria-labelledby={`${id}-title`} data-testid="recovery-codes">
      <h3 id={`${id}-title`} tabIndex={-1} ref={heading}>
        Your recovery codes
      </h3>
      <p>Store them somewhere safe: each works once if you lose your authenticator, and they are shown only this once.</p>
      <ul className="recovery-codes" id={id}>
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <div className="actions">
        <CopyButton text={codes.join('\n')} label="Copy codes" describedBy={id} />
        <button type="button" onClick={download}>
          Download codes
        </button>
        <button type="button" className="primary" onClick={onDone}>
          I have stored them
        </button>
      </div>
    </section>
  );
}

function TwoFactorSection() {
  const { me, refresh } = useSession();
  const toast = useToast();
  const enabled = me?.twoFactorEnabled === true;
  const [setup, setSetup] = useState<{ secret: string; otpauthUrl: string; qr: string } | null>(null);
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState<string[] | null>(null);
  const [passwordFor, setPasswordFor] = useState<'disable' | 'codes' | null>(null);
  const [password, setPassword] = useState('');
  // Each step takes away the control that led to it (Turn on two-factor, Cancel, Turn off, I have
  // stored them): the focus goes to what the next step shows, never to the page's body.
  const section = useRef<HTMLElement>(null);
  const focusNext = useRef<string | null>(null);
  useEffect(() => {
    const target = focusNext.current;
    // While the password dialog is open it has the focus; it gives it back to its opener on
    // closing (before this runs), which Turn off takes away.
    if (!target || passwordFor !== null) return;
    const element = section.current?.querySelector<HTMLElement>(`[data-step="${target}"]`);
    if (!element) return;
    focusNext.current = null;
    // A task later, after the password dialog's own giving back of the focus to its opener.
    setTimeout(() => element.focus(), 0);
  }, [setup, codes, enabled, passwordFor]);

  const recent = useRecentSignIn();
  const start = useSubmit(async () => {
    if (!(await recent.confirmed())) return;
    const data = await post<{ secret: string; otpauthUrl: string }>('/api/auth/totp/setup');
    const { toDataURL } = await import('qrcode');
    setSetup({ ...data, qr: await toDataURL(data.otpauthUrl, { margin: 1, width: 220 }) });
    setCode('');
    focusNext.current = 'code';
  });
  const confirm = useSubmit(async () => {
    if (!(await recent.confirmed())) return;
    const data = await post<{ recoveryCodes: string[] }>('/api/auth/totp/enable', { code: code.trim() });
    setSetup(null);
    setCodes(data.recoveryCodes);
    await refresh();
    toast('Two-factor is on');
  });

  return (
    <section className="card stack" aria-labelledby="two-factor-title" ref={section}>
      <h2 id="two-factor-title">Two-factor codes</h2>
      <p className="muted">
        With two-factor on, signing in with your password also asks for a code from an authenticator app. Named API tokens and your upload credential keep working either way.
      </p>
      <p>
        Status: {enabled ? <Badge kind="ok">On</Badge> : <Badge kind="neutral">Off</Badge>}
      </p>
      {codes && (
        <RecoveryCodes
          codes={codes}
          onDone={() => {
            focusNext.current = enabled ? 'new-codes' : 'turn-on';
            setCodes(null);
          }}
        />
      )}
      {!enabled && !setup && (
        <form onSubmit={start.submit}>
          <ErrorNote error={start.error} />
          <button type="submit" className="primary" aria-disabled={start.busy || undefined} data-step="turn-on">
            Turn on two-factor
          </button>
        </form>
      )}
      {!enabled && setup && (
        <form onSubmit={confirm.submit} className="stack">
          <p>Scan the code with your authenticator app, or type the secret into it, then enter the code it shows.</p>
          <img src={setup.qr} width={220} height={220} alt="QR code of the two-factor secret for your authenticator app" />
          <p>
            Secret: <code data-testid="totp-secret">{setup.secret}</code> <CopyButton text={setup.secret} label="Copy secret" />
          </p>
          <label>
            Code from the app
            <input name="code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9 ]*" required value={code} onChange={(e) => setCode(e.target.value)} data-step="code" />
          </label>
          <ErrorNote error={confirm.error} />
          <div className="actions">
            <button
              type="button"
              onClick={() => {
                focusNext.current = 'turn-on';
                setSetup(null);
              }}
            >
              Cancel
            </button>
            <button type="submit" className="primary" aria-disabled={confirm.busy || undefined}>
              Turn on
            </button>
          </div>
        </form>
      )}
      {enabled && (
        <div className="actions">
          <button type="button" onClick={() => setPasswordFor('codes')} data-step="new-codes">
            New recovery codes
          </button>
          <button type="button" className="danger" onClick={() => setPasswordFor('disable')}>
            Turn off two-factor
          </button>
        </div>
      )}
      {recent.dialog}
      {passwordFor && (
        <FormDialog
          title={passwordFor === 'disable' ? 'Turn off two-factor' : 'New recovery codes'}
          submitLabel={passwordFor === 'disable' ? 'Turn off' : 'Make new codes'}
          onClose={() => {
            setPasswordFor(null);
            setPassword('');
          }}
          onSubmit={async () => {
            if (passwordFor === 'disable') {
              await post('/api/auth/totp/disable', { password });
              focusNext.current = 'turn-on';
              await refresh();
              toast('Two-factor is off');
            } else {
              const data = await post<{ recoveryCodes: string[] }>('/api/auth/recovery-codes', { password });
              setCodes(data.recoveryCodes);
            }
            setPasswordFor(null);
            setPassword('');
          }}
        >
          <p>{passwordFor === 'disable' ? 'Signing in will ask only for your password.' : 'Your old recovery codes stop working.'}</p>
          <label>
            Your password
            <input type="password" name="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} data-autofocus />
          </label>
        </FormDialog>
      )}
    </section>
  );
}

function PasskeysSection() {
  const { refresh } = useSession();
  const toast = useToast();
  const confirmDelete = useConfirm();
  const act = useAction();
  const passkeys = useLoad(() => get<{ passkeys: Passkey[] }>('/api/auth/passkeys').then((d) => d.passkeys), []);
  const [name, setName] = useState('');
  const [renaming, setRenaming] = useState<Passkey | null>(null);
  const [newName, setNewName] = useState('');
  const keepFocus = useFocusAfterRemoval(passkeys.data);

  const recent = useRecentSignIn();
  const add = useSubmit(async () => {
    if (!(await recent.confirmed())) return;
    const { options } = await post<{ options: Record<string, unknown> }>('/api/auth/passkeys/options');
    const { startRegistration } = await import('@simplewebauthn/browser');
    const response = await startRegistration({ optionsJSON: options as never }).catch((error: unknown) => {
      throw explainPasskeyError(error, 'register');
    });
    await post('/api/auth/passkeys', { name: name.trim(), response });
    setName('');
    await passkeys.reload();
    await refresh();
    toast('Passkey added');
  });

  return (
    <section className="card stack" aria-labelledby="passkeys-title">
      <h2 id="passkeys-title">Passkeys</h2>
      <p className="muted">Sign in with your device's screen lock or a security key instead of your password. A passkey sign-in asks for no two-factor code.</p>
      {passkeys.loading && <Loading />}
      <ErrorNote error={passkeys.error} />
      {passkeys.data && passkeys.data.length === 0 && <Empty>No passkeys yet.</Empty>}
      {passkeys.data && passkeys.data.length > 0 && (
        <DataTable columns={['Name', 'Added', 'Last used']} caption="Your passkeys">
          {passkeys.data.map((passkey) => (
            <tr key={passkey.id} data-testid="passkey-row" data-item-key={passkey.id}>
              <td>{passkey.name}</td>
              <td>{formatDateTime(passkey.createdAt)}</td>
              <td>{passkey.lastUsedAt ? formatDateTime(passkey.lastUsedAt) : 'Never'}</td>
              <td className="row-actions">
                <button
                  type="button"
                  aria-label={`Rename ${passkey.name}`}
                  data-action="rename"
                  onClick={() => {
                    setRenaming(passkey);
                    setNewName(passkey.name);
                  }}
                >
                  Rename
                </button>
                <button
                  type="button"
                  className="danger"
                  aria-label={`Delete ${passkey.name}`}
                  data-action="delete"
                  onClick={() =>
                    act(async () => {
                      if (!(await confirmDelete('Delete passkey', `Delete the passkey "${passkey.name}"? It can no longer sign in to this account.`))) return;
                      await del(`/api/auth/passkeys/${passkey.id}`);
                      toast(`Passkey ${passkey.name} deleted`);
                      keepFocus();
                      await passkeys.reload();
                      await refresh();
                    })
                  }
                >
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <form onSubmit={add.submit} className="inline-form">
        <label>
          Passkey name
          <input name="passkeyName" required maxLength={80} value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. Laptop" />
        </label>
        <SubmitButton busy={add.busy}>Add passkey</SubmitButton>
      </form>
      <ErrorNote error={add.error} />
      {recent.dialog}
      {renaming && (
        <FormDialog
          title="Rename passkey"
          onClose={() => setRenaming(null)}
          onSubmit={async () => {
            await patch(`/api/auth/passkeys/${renaming.id}`, { name: newName.trim() });
            toast(`Passkey renamed to ${newName.trim()}`);
            setRenaming(null);
            await passkeys.reload();
          }}
        >
          <label>
            Name
            <input name="name" required maxLength={80} value={newName} onChange={(e) => setNewName(e.target.value)} data-autofocus />
          </label>
        </FormDialog>
      )}
    </section>
  );
}

const methodLabels: Record<SessionRecord['method'], string> = { password: 'Password', 'two-factor': 'Password and code', passkey: 'Passkey' };

function SessionsSection() {
  const toast = useToast();
  const act = useAction();
  const confirmEnd = useConfirm();
  const sessions = useLoad(() => get<{ sessions: SessionRecord[] }>('/api/auth/sessions').then((d) => d.sessions), []);
  // Its row gone, or "Sign out everywhere else" disabled with no other browser left: focus moves on.
  const keepFocus = useFocusAfterRemoval(sessions.data);
  const others = (sessions.data ?? []).filter((s) => !s.current).length;
  return (
    <section className="card stack" aria-labelledby="sessions-title">
      <h2 id="sessions-title">Signed-in browsers</h2>
      <p className="muted">Where your account is signed in. Signing a browser out does not affect API tokens.</p>
      {sessions.loading && <Loading />}
      <ErrorNote error={sessions.error} />
      {sessions.data && (
        <DataTable columns={['Browser', 'Address', 'Signed in with', 'Signed in', 'Last seen']} caption="Your signed-in browsers">
          {sessions.data.map((session) => (
            <tr key={session.id} data-testid="session-row" data-item-key={session.id}>
              <td>
                {session.userAgent ?? 'Unknown browser'} {session.current && <Badge kind="ok">This browser</Badge>}
              </td>
              <td>{session.ip ?? '–'}</td>
              <td>{methodLabels[session.method]}</td>
              <td>{formatDateTime(session.createdAt)}</td>
              <td>{formatDateTime(session.lastSeenAt)}</td>
              <td className="row-actions">
                {!session.current && (
                  <button
                    type="button"
                    aria-label={`Sign out ${session.userAgent ?? 'this browser'} (signed in ${formatDateTime(session.createdAt)})`}
                    data-action="sign-out"
                    onClick={() =>
                      act(async () => {
                        await del(`/api/auth/sessions/${session.id}`);
                        keepFocus();
                        await sessions.reload();
                        toast('Signed out');
                      })
                    }
                  >
                    Sign out
                  </button>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <div className="actions">
        <button
          type="button"
          disabled={others === 0}
          onClick={() =>
            act(async () => {
              if (!(await confirmEnd('Sign out everywhere else', `Sign out the ${others} other browser${others === 1 ? '' : 's'}? This browser stays signed in.`, 'Sign out'))) return;
              await del('/api/auth/sessions');
              keepFocus();
              await sessions.reload();
              toast('Signed out everywhere else');
            })
          }
        >
          Sign out everywhere else
        </button>
      </div>
    </section>
  );
}
