import { lazy, Suspense, useEffect, useRef, useState, type ComponentType, type ReactNode } from 'react';
import { Link, RouterProvider, useRouter } from './router.tsx';
import { SessionProvider, useSession } from './session.tsx';
import { AnnouncerProvider, ConfirmProvider, ErrorBoundary, Loading, PageHeader, ToastProvider } from './ui.tsx';
import { applyTheme, nextTheme, storedTheme, type ThemeChoice } from './theme.ts';
import { AccountNotices } from './notices.tsx';
import type { Permission } from '@api';

/**
 * Each page is a chunk of its own, loaded when it is first shown: the first page a visitor opens
 * loads the shell and that page only (docs/web.md, "Payload").
 */
function page<K extends string>(load: () => Promise<Record<K, ComponentType>>, name: K) {
  return lazy(() => load().then((module) => ({ default: module[name] })));
}
const SignInPage = page(() => import('./pages/SignIn.tsx'), 'SignInPage');
const FilesPage = page(() => import('./pages/Files.tsx'), 'FilesPage');
const UploadPage = page(() => import('./pages/Upload.tsx'), 'UploadPage');
const LinksPage = page(() => import('./pages/Links.tsx'), 'LinksPage');
const IntegrationsPage = page(() => import('./pages/Integrations.tsx'), 'IntegrationsPage');
const OrganisationPage = page(() => import('./pages/Organisation.tsx'), 'OrganisationPage');
const AccountPage = page(() => import('./pages/Account.tsx'), 'AccountPage');
const SecurityPage = page(() => import('./pages/Security.tsx'), 'SecurityPage');
const AdminPage = page(() => import('./pages/Admin.tsx'), 'AdminPage');

interface PageDef {
  path: string;
  label: string;
  /** Shown when the account holds any of these (none listed: always). */
  anyOf: Permission[];
  render: () => ReactNode;
}

export const pages: PageDef[] = [
  { path: '/app/files', label: 'Files', anyOf: ['files.read'], render: () => <FilesPage /> },
  { path: '/app/upload', label: 'Upload', anyOf: ['files.upload'], render: () => <UploadPage /> },
  { path: '/app/links', label: 'Short links', anyOf: ['links.read', 'links.create'], render: () => <LinksPage /> },
  { path: '/app/integrations', label: 'Integrations', anyOf: ['tokens.manage', 'webhooks.manage'], render: () => <IntegrationsPage /> },
  { path: '/app/organisation', label: 'Organisation', anyOf: ['uploadProfiles.manage', 'folders.manage', 'tags.manage'], render: () => <OrganisationPage /> },
  { path: '/app/account', label: 'Account', anyOf: [], render: () => <AccountPage /> },
  { path: '/app/security', label: 'Security', anyOf: [], render: () => <SecurityPage /> },
  { path: '/app/admin', label: 'Administration', anyOf: ['users.manage', 'roles.manage', 'settings.manage', 'audit.read'], render: () => <AdminPage /> },
];

export function App() {
  // The outer boundary is the last resort, for a failure outside any page (the pages have their own).
  return (
    <ErrorBoundary>
      <RouterProvider>
        <AnnouncerProvider>
          <ToastProvider>
            <ConfirmProvider>
              <SessionProvider>
                <Root />
              </SessionProvider>
            </ConfirmProvider>
          </ToastProvider>
        </AnnouncerProvider>
      </RouterProvider>
    </ErrorBoundary>
  );
}

function Root() {
  const { me } = useSession();
  const { path, navigate, search } = useRouter();

  const allowed = pages.filter((page) => page.anyOf.length === 0 || page.anyOf.some((p) => me && (me.permissions.includes('administrator') || me.permissions.includes(p))));

  useEffect(() => {
    if (me === undefined) return;
    if (me === null) {
      if (path !== '/app/signin') {
        const next = path.startsWith('/app/') ? `?next=${encodeURIComponent(path + window.location.search)}` : '';
        const invite = search.get('invite');
        navigate(`/app/signin${invite ? `?invite=${encodeURIComponent(invite)}` : next}`, { replace: true });
      }
      return;
    }
    if (path === '/' || path === '/app' || path === '/app/' || path === '/app/signin') {
      const next = search.get('next');
      navigate(next && next.startsWith('/app/') && !next.startsWith('/app/signin') ? next : (allowed[0]?.path ?? '/app/account'), { replace: true });
    }
  }, [me, path, navigate, search, allowed]);

  if (me === undefined) return <Loading label="Loading Hoard…" />;
  if (me === null) {
    return (
      <ErrorBoundary>
        <Suspense fallback={<Loading label="Loading Hoard…" />}>
          <SignInPage />
        </Suspense>
      </ErrorBoundary>
    );
  }

  const current = pages.find((p) => path === p.path || path.startsWith(`${p.path}/`));
  let content: ReactNode;
  if (!current) content = path.startsWith('/app/') ? <NotFound /> : <Loading />;
  else if (!allowed.includes(current)) content = <Forbidden />;
  else content = current.render();

  return (
    <Shell pages={allowed} currentPath={current?.path ?? ''}>
      {/* A page that fails to load or to draw leaves the header and menu in place; another page starts afresh. */}
      <ErrorBoundary key={current?.path ?? path}>
        <Suspense fallback={<Loading />}>{content}</Suspense>
      </ErrorBoundary>
    </Shell>
  );
}

function ThemeToggle() {
  const [theme, setTheme] = useState<ThemeChoice>(storedTheme);
  const labels: Record<ThemeChoice, string> = { system: 'System theme', light: 'Light theme', dark: 'Dark theme' };
  const icons: Record<ThemeChoice, string> = { system: '◐', light: '☀', dark: '☾' };
  return (
    <button
      type="button"
      className="icon-button theme-toggle"
      title={`${labels[theme]} (click for ${labels[nextTheme(theme)].toLowerCase()})`}
      aria-label={`Theme: ${labels[theme]}. Switch to ${labels[nextTheme(theme)].toLowerCase()}`}
      onClick={() => {
        const next = nextTheme(theme);
        applyTheme(next);
        setTheme(next);
      }}
    >
      <span aria-hidden="true">{icons[theme]}</span>
    </button>
  );
}

function Shell({ pages: navPages, currentPath, children }: { pages: PageDef[]; currentPath: string; children: ReactNode }) {
  const { me, signOut } = useSession();
  const [menuOpen, setMenuOpen] = useState(false);
  const { path } = useRouter();
  const menuButton = useRef<HTMLButtonElement>(null);
  const firstPath = useRef(true);
  useEffect(() => {
    // A page chosen in the folded menu closes it, and the link that had the focus is hidden with
    // it; a link inside the page (Upload on the Files page, the 404 page's way back) goes with the
    // page it was on, and Back leaves nothing focused. In each case the focus goes to the new page's
    // heading (else its main region), not the page's body, from which Tab starts again at the top.
    // A link of the menu bar that stays in view keeps it.
    const nav = document.getElementById('primary-nav');
    const inFoldedMenu = nav !== null && nav.contains(document.activeElement) && menuButton.current !== null && menuButton.current.getClientRects().length > 0;
    const dropped = document.activeElement === null || document.activeElement === document.body;
    const first = firstPath.current;
    firstPath.current = false;
    setMenuOpen(false);
    // The first page shown is the browser's to announce and start from.
    if (first || !(inFoldedMenu || dropped)) return;
    // A page's code may still be loading: its heading is waited for, a second at most.
    let tries = 0;
    const land = () => {
      const heading = document.querySelector<HTMLElement>('main h1');
      if (heading) heading.focus();
      else if (++tries < 20) setTimeout(land, 50);
      else document.getElementById('main')?.focus();
    };
    requestAnimationFrame(land);
  }, [path]);
  useEffect(() => {
    if (!menuOpen) return;
    // Escape closes the folded menu, as it closes the dropdowns; focus left inside it would be on a
    // hidden link, so it goes back to the menu button.
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      setMenuOpen(false);
      const button = menuButton.current;
      const active = document.activeElement;
      if (button && button.getClientRects().length > 0 && (active === document.body || document.getElementById('primary-nav')?.contains(active))) button.focus();
    };
    // Tab past its last link closes it too: left open, the folded menu covers most of a short or
    // zoomed screen, and the controls the focus moves on to are underneath it.
    const onFocus = (event: FocusEvent) => {
      const target = event.target as Node | null;
      const nav = document.getElementById('primary-nav');
      if (target && !nav?.contains(target) && !menuButton.current?.contains(target)) setMenuOpen(false);
    };
    document.addEventListener('keydown', onKey);
    document.addEventListener('focusin', onFocus);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('focusin', onFocus);
    };
  }, [menuOpen]);
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/app/files" className="brand" aria-label="Hoard, home">
          <span className="brand-mark" aria-hidden="true" />
          Hoard
        </Link>
        <button type="button" ref={menuButton} className="icon-button menu-button" aria-expanded={menuOpen} aria-controls="primary-nav" onClick={() => setMenuOpen((open) => !open)}>
          <span aria-hidden="true">☰</span>
          <span className="visually-hidden">Menu</span>
        </button>
        <nav id="primary-nav" className={menuOpen ? 'primary-nav open' : 'primary-nav'} aria-label="Main">
          <ul>
            {navPages.map((page) => (
              <li key={page.path}>
                <Link to={page.path} aria-current={page.path === currentPath ? 'page' : undefined}>
                  {page.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="topbar-end">
          <ThemeToggle />
          <span className="whoami" title={me?.email}>
            {me?.name}
          </span>
          <button type="button" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <AccountNotices />
        {children}
      </main>
    </>
  );
}

function NotFound() {
  return (
    <section>
      <PageHeader title="Page not found" />
      <p>
        <Link to="/app/files">Go to your files</Link>
      </p>
    </section>
  );
}

function Forbidden() {
  return (
    <section>
      <PageHeader title="Not available" />
      <p>Your account does not have the permissions this page needs. An administrator can change your roles.</p>
    </section>
  );
}
