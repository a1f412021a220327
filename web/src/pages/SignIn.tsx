import { useEffect, useState } from 'react';
import { ApiError, post } from '../api.ts';
import { useRouter } from '../router.tsx';
import { useSession } from '../session.tsx';
import { ErrorNote, useSubmit } from '../ui.tsx';
import { explainPasskeyError } from '../passkey-errors.ts';
import type { LoginResponse, Me } from '@api';

/**
 * Sign-in and registration. On a fresh instance (GET /api/setup: needsAdministrator) the only form
 * is "Create the administrator account": the first registration becomes the Administrator.
 */
export function SignInPage() {
  const { setup, signedIn, refresh } = useSession();
  const { search } = useRouter();
  const invite = search.get('invite') ?? '';
  const canRegister = setup?.needsAdministrator || setup?.registration === 'open' || setup?.registration === 'invite' || invite !== '';
  const [mode, setMode] = useState<'signin' | 'register'>(invite ? 'register' : 'signin');
  const firstRun = setup?.needsAdministrator === true;
  const showing = firstRun ? 'setup' : mode === 'register' && canRegister ? 'register' : 'signin';

  useEffect(() => {
    document.title = firstRun ? 'Set up Hoard' : showing === 'register' ? 'Create an account · Hoard' : 'Sign in · Hoard';
  }, [firstRun, showing]);

  return (
    <main id="main" className="auth-page">
      <div className="auth-card">
        <p className="brand auth-brand">
          <span className="brand-mark" aria-hidden="true" />
          Hoard
        </p>
        {showing === 'setup' && (
          <>
            <h1>Create the administrator account</h1>
            <p className="muted">This instance has no accounts yet. The first account administers it: users, roles, invites and settings.</p>
            <RegisterForm submitLabel="Create administrator account" onDone={signedIn} onRace={refresh} />
          </>
        )}
        {showing === 'signin' && (
          <>
            <h1>Sign in</h1>
            <SignInForm onDone={signedIn} />
            {canRegister && (
              <p className="auth-switch">
                No account yet?{' '}
                <button type="button" className="link-button" onClick={() => setMode('register')}>
                  Create an account
                </button>
              </p>
            )}
          </>
        )}
        {showing === 'register' && (
          <>
            <h1>Create an account</h1>
            <RegisterForm
              submitLabel="Create account"
              askInvite={setup?.registration !== 'open' || invite !== ''}
              inviteRequired={setup?.registration !== 'open'}
              invite={invite}
              onDone={signedIn}
              onRace={refresh}
            />
            <p className="auth-switch">
              Already have an account?{' '}
              <button type="button" className="link-button" onClick={() => setMode('signin')}>
                Sign in
              </button>
            </p>
          </>
        )}
      </div>
    </main>
  );
}

function SignInForm({ onDone }: { onDone: (me: Me) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [ticket, setTicket] = useState<string | null>(null);
  const { submit, error, busy } = useSubmit(async () => {
    const data = await post<LoginResponse['data']>('/api/auth/login', { email, password });
    // With two-factor on, the password step answers a ticket for the code step (contract §8).
    if ('twoFactorRequired' in data) setTicket(data.ticket);
    else onDone(data.user);
  });
  const passkey = useSubmit(async () => {
    const { options } = await post<{ options: Record<string, unknown> }>('/api/auth/passkey/options', email.trim() ? { email: email.trim() } : undefined);
    const { startAuthentication } = await import('@simplewebauthn/browser');
    const response = await startAuthentication({ optionsJSON: options as never }).catch((error: unknown) => {
      throw explainPasskeyError(error, 'sign-in');
    });
    try {
      const data = await post<{ user: Me }>('/api/auth/passkey', { response });
      onDone(data.user);
    } catch (caught) {
      // The server says only "Unauthorized" (one generic answer); say what it can mean.
      if (caught instanceof ApiError && caught.status === 401) {
        throw new Error('That passkey did not sign you in: it may have been deleted from this account (remove it from this device too), or copied from another device. Sign in with your password instead.');
      }
      throw caught;
    }
  });
  if (ticket) return <CodeStep ticket={ticket} onDone={onDone} onRestart={() => setTicket(null)} />;
  return (
    <>
    <form onSubmit={submit} className="stack">
      <label>
        Email
        <input type="email" name="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} autoFocus />
      </label>
      <label>
        Password
        <input type="password" name="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
      </label>
      <ErrorNote error={error} />
      <button type="submit" className="primary" aria-disabled={busy || undefined}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
    <form onSubmit={passkey.submit} className="stack passkey-sign-in">
      <ErrorNote error={passkey.error} />
      <button type="submit" aria-disabled={passkey.busy || undefined}>
        Sign in with a passkey
      </button>
    </form>
    </>
  );
}

/** The second step of a sign-in with two-factor on: a code from the app, or a recovery code. */
function CodeStep({ ticket, onDone, onRestart }: { ticket: string; onDone: (me: Me) => void; onRestart: () => void }) {
  const [recovery, setRecovery] = useState(false);
  const [code, setCode] = useState('');
  const { submit, error, busy } = useSubmit(async () => {
    try {
      const data = await post<{ user: Me }>('/api/auth/login/two-factor', { ticket, code: code.trim() });
      onDone(data.user);
    } catch (caught) {
      // The server says only "Unauthorized" (one generic answer); say what it can mean.
      if (caught instanceof ApiError && caught.status === 401) throw new Error('That code did not work. Check it and try again; after 5 minutes or 5 wrong codes, start over.');
      throw caught;
    }
  });
  return (
    <form onSubmit={submit} className="stack">
      <p>{recovery ? 'Enter one of your recovery codes. Each works once.' : 'Enter the code your authenticator app shows for Hoard.'}</p>
      <label>
        {recovery ? 'Recovery code' : 'Two-factor code'}
        {recovery ? (
          <input key="recovery" name="code" autoComplete="off" spellCheck={false} required value={code} onChange={(e) => setCode(e.target.value)} autoFocus />
        ) : (
          <input key="totp" name="code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9 ]*" required value={code} onChange={(e) => setCode(e.target.value)} autoFocus />
        )}
      </label>
      <ErrorNote error={error} />
      <button type="submit" className="primary" aria-disabled={busy || undefined}>
        {busy ? 'Checking…' : 'Verify'}
      </button>
      <p className="auth-switch">
        <button
          type="button"
          className="link-button"
          onClick={() => {
            setRecovery(!recovery);
            setCode('');
          }}
        >
          {recovery ? 'Use a code from the app' : 'Use a recovery code'}
        </button>{' '}
        ·{' '}
        <button type="button" className="link-button" onClick={onRestart}>
          Start over
        </button>
      </p>
    </form>
  );
}

function RegisterForm({
  submitLabel,
  askInvite = false,
  inviteRequired = false,
  invite = '',
  onDone,
  onRace,
}: {
  submitLabel: string;
  askInvite?: boolean;
  inviteRequired?: boolean;
  invite?: string;
  onDone: (me: Me) => void;
  onRace: () => Promise<unknown>;
}) {
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [inviteCode, setInviteCode] = useState(invite);
  const { submit, error, busy } = useSubmit(async () => {
    const body: Record<string, string> = { email, password };
    if (name.trim()) body.name = name.trim();
    if (askInvite && inviteCode.trim()) body.inviteCode = inviteCode.trim();
    try {
      const data = await post<{ user: Me }>('/api/auth/register', body);
      onDone(data.user);
    } catch (caught) {
      // Someone else may have created the first account meanwhile: show the right form.
      void onRace().catch(() => {});
      throw caught;
    }
  });
  return (
    <form onSubmit={submit} className="stack">
      <label>
        Name <span className="muted">(optional)</span>
        <input type="text" name="name" autoComplete="name" maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        Email
        <input type="email" name="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} autoFocus />
      </label>
      <div className="hinted">
        <label>
          Password
          <input type="password" name="password" autoComplete="new-password" required minLength={8} value={password} onChange={(e) => setPassword(e.target.value)} aria-describedby="password-hint" />
        </label>
        <span id="password-hint" className="hint">
          At least 8 characters.
        </span>
      </div>
      {askInvite && (
        <label>
          Invite code{!inviteRequired && <span className="muted"> (optional)</span>}
          <input type="text" name="inviteCode" required={inviteRequired} value={inviteCode} onChange={(e) => setInviteCode(e.target.value)} autoComplete="off" />
        </label>
      )}
      <ErrorNote error={error} />
      <button type="submit" className="primary" aria-disabled={busy || undefined}>
        {busy ? 'Creating…' : submitLabel}
      </button>
    </form>
  );
}
