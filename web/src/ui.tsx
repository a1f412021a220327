import { Component, createContext, Fragment, useCallback, useContext, useEffect, useId, useLayoutEffect, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { fieldError } from './field-error.ts';
import { copyText } from './clipboard.ts';
import { errorMessage } from './api.ts';
import { useQueryState } from './router.tsx';

// ---------------------------------------------------------------------------------------------
// Toasts: short confirmations and errors, announced by screen readers.

interface Toast {
  id: number;
  message: string;
  kind: 'info' | 'error';
}

const ToastContext = createContext<(message: string, kind?: Toast['kind']) => void>(() => {});

export function ToastProvider({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const next = useRef(1);
  const region = useRef<HTMLDivElement>(null);
  // A toast stays while the keyboard or the pointer is on the toasts (WCAG 2.2.1): one that went
  // under the focus on its Dismiss button dropped the focus to the page's body.
  const focusHeld = useRef(false);
  const pointerHeld = useRef(false);
  // Where the keyboard came from into the toasts: it goes back there when its toast is dismissed.
  const cameFrom = useRef<HTMLElement | null>(null);
  const push = useCallback((message: string, kind: Toast['kind'] = 'info') => {
    const id = next.current++;
    setToasts((list) => [...list.slice(-2), { id, message, kind }]);
    const expire = () => {
      if (focusHeld.current || pointerHeld.current) window.setTimeout(expire, 1000);
      else setToasts((list) => list.filter((t) => t.id !== id));
    };
    window.setTimeout(expire, kind === 'error' ? 8000 : 4000);
  }, []);
  // Whether the last press in the toasts was the pointer's: a click leaves the focus alone.
  const pressed = useRef(false);
  const dismiss = (id: number) => {
    const back = cameFrom.current;
    const byPointer = pressed.current;
    pressed.current = false;
    setToasts((list) => list.filter((t) => t.id !== id));
    focusHeld.current = false;
    // Back where the keyboard was, else (from the keyboard) to the page's heading; never the page's
    // body. Without scrolling: a click on × from far down the page jumped to its top.
    window.requestAnimationFrame(() => {
      const target = back?.isConnected ? back : byPointer ? null : document.querySelector<HTMLElement>('main h1');
      target?.focus({ preventScroll: true });
    });
  };
  return (
    <ToastContext.Provider value={push}>
      {children}
      <div
        className="toasts"
        role="status"
        aria-live="polite"
        ref={region}
        onFocus={(event) => {
          if (!region.current?.contains(event.relatedTarget as Node | null)) cameFrom.current = event.relatedTarget as HTMLElement | null;
          focusHeld.current = true;
        }}
        onBlur={(event) => {
          if (!region.current?.contains(event.relatedTarget as Node | null)) focusHeld.current = false;
        }}
        onPointerDown={() => (pressed.current = true)}
        onKeyDown={() => (pressed.current = false)}
        onPointerEnter={() => (pointerHeld.current = true)}
        onPointerLeave={() => (pointerHeld.current = false)}
      >
        {toasts.map((toast) => (
          <div key={toast.id} className={`toast toast-${toast.kind}`}>
            {toast.message}
            <button type="button" className="link-button" aria-label="Dismiss" onClick={() => dismiss(toast.id)}>
              ×
            </button>
          </div>
        ))}
      </div>
    </ToastContext.Provider>
  );
}

export const useToast = () => useContext(ToastContext);

/** Runs an action, reporting its failure as an error toast; resolves to whether it succeeded. */
export function useAction() {
  const toast = useToast();
  return useCallback(
    async (action: () => Promise<unknown>, success?: string): Promise<boolean> => {
      try {
        await action();
        if (success) toast(success);
        return true;
      } catch (error) {
        toast(errorMessage(error), 'error');
        return false;
      }
    },
    [toast],
  );
}

// ---------------------------------------------------------------------------------------------
// Announcements: a polite live region for what a screen reader should hear without a toast
// (selections, upload progress, page changes).

const AnnounceContext = createContext<(message: string) => void>(() => {});
const HOLD_MS = 600;
const CLEAR_MS = 50;

export function AnnouncerProvider({ children }: { children: ReactNode }) {
  const [message, setMessage] = useState('');
  // A message stays at least HOLD_MS before the next replaces it, and what is said meanwhile is said
  // together: three uploads that finish in one moment are three announcements, not the last one
  // alone (written 2 ms apart, each replaced the one before before a screen reader had said it).
  const waiting = useRef<string[]>([]);
  const written = useRef(0);
  const announce = useCallback((text: string) => {
    waiting.current.push(text);
    if (waiting.current.length > 1) return;
    const delay = Math.max(CLEAR_MS, written.current + HOLD_MS - performance.now());
    // Cleared just before, so that the same words said twice are announced twice.
    window.setTimeout(() => setMessage(''), delay - CLEAR_MS);
    window.setTimeout(() => {
      setMessage(waiting.current.join('. '));
      waiting.current = [];
      written.current = performance.now();
    }, delay);
  }, []);
  return (
    <AnnounceContext.Provider value={announce}>
      {children}
      <div className="visually-hidden" role="status" aria-live="polite" aria-atomic="true" data-testid="announcer">
        {message}
      </div>
    </AnnounceContext.Provider>
  );
}

export const useAnnounce = () => useContext(AnnounceContext);

// ---------------------------------------------------------------------------------------------
// Focus: where it goes when what held it goes away.

const FIELDS = 'input:not([type="hidden"]):not([disabled]), select:not([disabled]), textarea:not([disabled])';
const FOCUSABLE = 'button:not([disabled]), a[href], input:not([disabled]), select:not([disabled]), textarea:not([disabled]), summary, [tabindex]:not([tabindex="-1"])';

/**
 * Focuses a control of the list item `key` (an element with `data-item-key`): the one marked
 * `data-action={action}` if given and present, else its first control. False when there is none.
 */
export function focusItem(key: string | null | undefined, action?: string | null): boolean {
  if (!key) return false;
  const item = document.querySelector<HTMLElement>(`[data-item-key="${CSS.escape(key)}"]`);
  const target = (action ? item?.querySelector<HTMLElement>(`[data-action="${CSS.escape(action)}"]`) : null) ?? item?.querySelector<HTMLElement>(FOCUSABLE);
  target?.focus();
  return Boolean(target);
}

/** The page's main heading (focusable from script), the place to start from when nothing better is left. */
export function focusPageHeading(): void {
  document.querySelector<HTMLElement>('main h1')?.focus();
}

/**
 * Remembers where focus is now, for giving it back later: to the same element while it is on the
 * page; when it is gone (a deleted file's card), to the same control of its list item drawn anew,
 * else of the next item, else of the previous one, else to the page's heading.
 */
export function rememberFocus(): () => void {
  const opener = document.activeElement instanceof HTMLElement && document.activeElement !== document.body ? document.activeElement : null;
  const item = opener?.closest<HTMLElement>('[data-item-key]') ?? null;
  const action = opener?.getAttribute('data-action') ?? null;
  const key = item?.dataset.itemKey;
  // The rows after it, then those before it, nearest first: a row without the control (a revoked
  // token's) is passed over for the next one that has it.
  const following: string[] = [];
  const preceding: string[] = [];
  for (let row = item?.nextElementSibling as HTMLElement | null; row; row = row.nextElementSibling as HTMLElement | null) if (row.dataset.itemKey) following.push(row.dataset.itemKey);
  for (let row = item?.previousElementSibling as HTMLElement | null; row; row = row.previousElementSibling as HTMLElement | null) if (row.dataset.itemKey) preceding.push(row.dataset.itemKey);
  return () => {
    if (!opener) return;
    // Still there but disabled (a button with nothing left to do) counts as gone: the browser takes
    // focus off a disabled control, to the page's body.
    if (opener.isConnected && !opener.matches(':disabled')) {
      opener.focus();
      if (document.activeElement === opener) return;
    }
    if (focusItem(key, action)) return;
    for (const other of [...following, ...preceding]) if (focusItem(other, action)) return;
    focusPageHeading();
  };
}

/**
 * Focus for a list whose rows can be removed: call the function it returns just before the list is
 * read again after a removal (the confirmation has given focus back to the row's button by then);
 * once the list is drawn anew (`data` changes), focus goes back by rememberFocus's rule: the same
 * control of the next row (`data-item-key`, `data-action`), else of the previous one, else the
 * page's heading, instead of being left on the page's body with the button that had it.
 */
export function useFocusAfterRemoval(data: unknown): () => void {
  const pending = useRef<(() => void) | null>(null);
  useEffect(() => {
    const restore = pending.current;
    if (!restore) return;
    pending.current = null;
    restore();
  }, [data]);
  return useCallback(() => {
    pending.current = rememberFocus();
  }, []);
}

// ---------------------------------------------------------------------------------------------
// Dialogs: the native <dialog> element traps focus and closes on Escape. Focus goes back where it
// came from when the dialog closes, and also when it is taken off the page while open (the small
// form dialogs are shown only while they are open; the file editor and the viewer stay on the page
// and are closed, see useDialogTarget).

/** Focuses a dialog's starting control: the one marked data-autofocus, else its first field. */
function focusDialogStart(dialog: Element): void {
  (dialog.querySelector<HTMLElement>('[data-autofocus]') ?? dialog.querySelector<HTMLElement>(FIELDS))?.focus();
}

/**
 * For content that arrives after its dialog opened (code loaded on first use): moves the focus to
 * the dialog's starting control if it is still where the opening left it (the Close button, the
 * only control there was), not if the person has moved it meanwhile.
 */
export function useDialogStartOnArrival(): (element: HTMLElement | null) => void {
  return useCallback((element: HTMLElement | null) => {
    const dialog = element?.closest('dialog');
    if (!dialog) return;
    const active = document.activeElement;
    const untouched = active === null || active === document.body || active === dialog || (active instanceof HTMLElement && active.closest('dialog') === dialog && active.getAttribute('aria-label') === 'Close');
    if (untouched) focusDialogStart(dialog);
  }, []);
}

export function Dialog({ open, title, onClose, children, wide }: { open: boolean; title: string; onClose: () => void; children: ReactNode; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const giveBack = useRef<(() => void) | null>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      giveBack.current = rememberFocus();
      dialog.showModal();
      // React's autoFocus runs while the dialog is still closed and so does nothing, and the browser
      // would focus the Close button: the control marked data-autofocus, else the first field, has it.
      focusDialogStart(dialog);
    }
    if (!open && dialog.open) {
      // Given back at once rather than on the close event, which comes a task later: a dialog
      // opened by this one's closing (the viewer's Edit) must remember where this one came from.
      const restore = giveBack.current;
      giveBack.current = null;
      dialog.close();
      restore?.();
    }
  }, [open]);
  useEffect(
    () => () => {
      // Taken off the page while open: after React has removed it, focus goes back.
      const restore = giveBack.current;
      giveBack.current = null;
      if (restore) window.setTimeout(restore, 0);
    },
    [],
  );
  return (
    <dialog
      ref={ref}
      className={wide ? 'dialog dialog-wide' : 'dialog'}
      aria-labelledby={titleId}
      onClose={() => {
        const restore = giveBack.current;
        giveBack.current = null;
        restore?.();
      }}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
      onClick={(event) => {
        // A click on the backdrop (the dialog element itself, outside its content) closes it.
        if (event.target === ref.current) onClose();
      }}
    >
      {open && (
        <div className="dialog-body">
          <header className="dialog-header">
            <h2 id={titleId}>{title}</h2>
            <button type="button" className="icon-button" aria-label="Close" onClick={onClose}>
              ×
            </button>
          </header>
          {children}
        </div>
      )}
    </dialog>
  );
}

/**
 * What a dialog that stays on the page shows: `show(target)` opens it on a target, `close()` closes
 * it and keeps the target, so that the dialog element stays mounted and the browser closes it as a
 * dialog. `key` changes with every `show` (and is unique in the app), so the dialog's fields start
 * afresh from the target.
 */
export function useDialogTarget<T>(): { target: T | null; open: boolean; key: string; show: (target: T) => void; close: () => void } {
  const [state, setState] = useState<{ target: T; open: boolean; key: string } | null>(null);
  // Unique across every dialog of the app, so two dialogs side by side never share a key.
  const show = useCallback((target: T) => setState({ target, open: true, key: `dialog-${++dialogShows}` }), []);
  const close = useCallback(() => setState((current) => current && { ...current, open: false }), []);
  return { target: state?.target ?? null, open: state?.open ?? false, key: state?.key ?? '', show, close };
}

let dialogShows = 0;

/**
 * A form's submit handler around `action`: no page reload, the error of the last attempt (cleared
 * when the next one starts), and whether an attempt is running.
 */
export function useSubmit(action: () => Promise<void>): { submit: (event: FormEvent) => Promise<void>; error: unknown; busy: boolean; clearError: () => void } {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  // Submit buttons are not disabled while busy (a disabled button drops the keyboard's focus), so a
  // second Enter reaches here: it is ignored while an attempt runs.
  const running = useRef(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (running.current) return;
    running.current = true;
    setError(null);
    setBusy(true);
    try {
      await action();
    } catch (caught) {
      setError(caught);
    } finally {
      running.current = false;
      setBusy(false);
    }
  };
  const clearError = useCallback(() => setError(null), []);
  return { submit, error, busy, clearError };
}

/**
 * A form's submit button that says when the form is busy. It is not disabled meanwhile but only
 * marked so (`aria-disabled`) and ignores presses: a disabled button loses focus, which would fall
 * to the page's body under a keyboard user.
 */
export function SubmitButton({ busy, busyLabel, className = 'primary', children }: { busy: boolean; busyLabel?: string; className?: string; children: ReactNode }) {
  return (
    <button
      type="submit"
      className={className}
      aria-disabled={busy || undefined}
      onClick={(event) => {
        if (busy) event.preventDefault();
      }}
    >
      {busy && busyLabel ? busyLabel : children}
    </button>
  );
}

/**
 * A dialog holding one form: its fields, the error of the last attempt, Cancel and a primary submit
 * button that says when it is busy. `onSubmit` saves (and closes the dialog through its caller);
 * what it throws is shown in the dialog, which stays open.
 */
export function FormDialog({ title, onClose, onSubmit, submitLabel = 'Save', open = true, children }: { title: string; onClose: () => void; onSubmit: () => Promise<void>; submitLabel?: string; open?: boolean; children: ReactNode }) {
  const { submit, error, busy } = useSubmit(onSubmit);
  return (
    <Dialog open={open} title={title} onClose={onClose}>
      <form onSubmit={submit} className="stack">
        {children}
        <ErrorNote error={error} />
        <div className="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <SubmitButton busy={busy} busyLabel="Saving…">
            {submitLabel}
          </SubmitButton>
        </div>
      </form>
    </Dialog>
  );
}

// Confirmation of destructive actions, as a dialog rather than window.confirm().
interface ConfirmRequest {
  title: string;
  message: string;
  action: string;
  /** The other button, where "Cancel" would be unclear (leaving a page of uploads that have a Cancel of their own). */
  cancel: string;
  resolve(ok: boolean): void;
}
const ConfirmContext = createContext<(title: string, message: string, action?: string, cancel?: string) => Promise<boolean>>(async () => false);

export function ConfirmProvider({ children }: { children: ReactNode }) {
  const [request, setRequest] = useState<ConfirmRequest | null>(null);
  const confirm = useCallback(
    (title: string, message: string, action = 'Delete', cancel = 'Cancel') => new Promise<boolean>((resolve) => setRequest({ title, message, action, cancel, resolve })),
    [],
  );
  const finish = (ok: boolean) => {
    request?.resolve(ok);
    setRequest(null);
  };
  return (
    <ConfirmContext.Provider value={confirm}>
      {children}
      <Dialog open={request !== null} title={request?.title ?? ''} onClose={() => finish(false)}>
        <p>{request?.message}</p>
        <div className="actions">
          {/* Focus opens on the choice that changes nothing: Enter pressed once too often keeps the
              file, the account or the session (a destructive action is one Tab away). */}
          <button type="button" data-autofocus onClick={() => finish(false)}>
            {request?.cancel}
          </button>
          <button type="button" className="danger" onClick={() => finish(true)}>
            {request?.action}
          </button>
        </div>
      </Dialog>
    </ConfirmContext.Provider>
  );
}

export const useConfirm = () => useContext(ConfirmContext);

// ---------------------------------------------------------------------------------------------

/** `ariaLabel` names a button that is repeated for many items ("Copy link to budget.csv"). */
export function CopyButton({ text, label = 'Copy', ariaLabel, className, describedBy }: { text: string; label?: string; ariaLabel?: string; className?: string; describedBy?: string }) {
  const toast = useToast();
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className={className}
      aria-label={ariaLabel}
      aria-describedby={describedBy}
      data-action="copy"
      onClick={async () => {
        const ok = await copyText(text);
        if (ok) {
          setCopied(true);
          window.setTimeout(() => setCopied(false), 1500);
          toast('Copied to the clipboard');
        } else {
          toast('Could not copy: select the text and copy it yourself', 'error');
        }
      }}
    >
      {copied ? 'Copied' : label}
    </button>
  );
}

/** A secret shown once: its value, a copy button, and a warning that it will not be shown again. */
export function SecretReveal({ title, secret, onDone, children }: { title: string; secret: string; onDone: () => void; children?: ReactNode }) {
  const id = useId();
  // Shown where the focus is not (above the form that made it): the focus goes to it, so that a
  // keyboard or screen-reader user is told of it and is where its copy button is.
  const heading = useRef<HTMLHeadingElement>(null);
  // Where the focus was (the button that made the secret): it goes back there once the secret is
  // put away, rather than falling to the page's body with this panel.
  const giveBack = useRef<(() => void) | null>(null);
  useEffect(() => {
    giveBack.current = rememberFocus();
    heading.current?.focus();
  }, [secret]);
  return (
    <section className="secret" aria-labelledby={`${id}-title`} data-testid="secret-reveal">
      <h3 id={`${id}-title`} ref={heading} tabIndex={-1}>
        {title}
      </h3>
      <p>Copy it now: it is shown only this once and cannot be retrieved later.</p>
      <div className="secret-row">
        <code id={id} className="secret-value" data-testid="secret-value">
          {secret}
        </code>
        <CopyButton text={secret} className="primary" describedBy={id} />
      </div>
      {children}
      <button
        type="button"
        onClick={() => {
          const restore = giveBack.current;
          onDone();
          // Once this panel is gone.
          if (restore) window.setTimeout(restore);
        }}
      >
        I have stored it
      </button>
    </section>
  );
}


/** `currentPassword` → "Current password", for a field the form does not show by that name. */
function spokenField(field: string): string {
  const words = field.split('.').at(-1)!.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * The error of a form's last attempt. When it concerns one field, it is phrased with the field's own
 * label, and the field (a control of the same form whose `name` is the API's field name) is marked
 * invalid and described by it.
 */
export function ErrorNote({ error }: { error: unknown }) {
  const ref = useRef<HTMLParagraphElement>(null);
  const id = useId();
  const message = error ? errorMessage(error) : '';
  const about = fieldError(message);
  const [label, setLabel] = useState<string | null>(null);
  useEffect(() => {
    setLabel(null);
    if (!about) return;
    // The control named as the API names the field, or one that says which field it is for
    // (`data-field`) where its own name must differ (two forms of one page, a password manager's hint).
    const field = CSS.escape(about.field);
    const control = ref.current?.closest('form')?.querySelector<HTMLElement>(`[name="${field}"], [data-field="${field}"]`);
    if (!control) return;
    const text = control.closest('label')?.firstChild?.textContent?.trim() || control.getAttribute('aria-label');
    if (text) setLabel(text);
    const described = control.getAttribute('aria-describedby');
    control.setAttribute('aria-invalid', 'true');
    control.setAttribute('aria-describedby', [described, id].filter(Boolean).join(' '));
    return () => {
      control.removeAttribute('aria-invalid');
      if (described) control.setAttribute('aria-describedby', described);
      else control.removeAttribute('aria-describedby');
    };
  }, [about?.field, message, id]);
  if (!error) return null;
  return (
    <p className="error-note" role="alert" id={id} ref={ref}>
      {about ? `${label ?? spokenField(about.field)}: ${about.problem}` : message}
    </p>
  );
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p className="loading" role="status">
      {label}
    </p>
  );
}

// ---------------------------------------------------------------------------------------------
// Errors while a page is drawn: the page's place says so, and the app around it stays usable.

/**
 * Whether a failed import is a page chunk the server no longer has: after a new build, the tab still
 * asks for the old content-hashed file, which answers 404 (the browsers word it differently).
 */
function isStaleChunk(error: unknown): boolean {
  return /dynamically imported module|Importing a module script failed/i.test(errorMessage(error));
}

/**
 * Catches what a page throws while it is drawn, or the failed import of its chunk, and shows a short
 * message with a Reload button in the page's place instead of a blank window. Give it a `key` per
 * page, so that opening another page starts afresh.
 */
export class ErrorBoundary extends Component<{ children: ReactNode }, { failed: boolean; error: unknown }> {
  override state = { failed: false, error: null as unknown };

  static getDerivedStateFromError(error: unknown) {
    return { failed: true, error };
  }

  override render() {
    if (!this.state.failed) return this.props.children;
    const stale = isStaleChunk(this.state.error);
    return (
      <section>
        <div role="alert">
          <PageHeader title={stale ? 'Hoard has been updated' : 'Something went wrong'} />
          <p>{stale ? 'Hoard was updated on the server after this tab opened it, and this page’s code from before is gone. Reload to use the new version.' : 'This page could not be shown. Reloading usually helps.'}</p>
          {!stale && <p className="muted small">{errorMessage(this.state.error)}</p>}
        </div>
        <button type="button" className="primary" onClick={() => window.location.reload()}>
          Reload
        </button>
      </section>
    );
  }
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

export function Badge({ kind, children }: { kind: 'ok' | 'warn' | 'bad' | 'neutral'; children: ReactNode }) {
  return <span className={`badge badge-${kind}`}>{children}</span>;
}

/** A data loader: the value, its error, and a reload function. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | undefined; error: unknown; loading: boolean; reload: () => Promise<void>; setData: (value: T) => void } {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++generation.current;
    setLoading(true);
    try {
      const value = await load();
      if (mine === generation.current) {
        setData(value);
        setError(null);
      }
    } catch (caught) {
      if (mine === generation.current) setError(caught);
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  }, deps);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data, error, loading, reload, setData };
}

/** The title of the first page shown: the browser reads that one itself; later ones are announced. */
let firstTitle: string | null = null;

export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  const announce = useAnnounce();
  useEffect(() => {
    document.title = `${title} · Hoard`;
    if (firstTitle === null) firstTitle = title;
    else announce(`${title} page`);
  }, [title, announce]);
  return (
    <div className="page-header">
      <h1 tabIndex={-1}>{title}</h1>
      {children && <div className="page-header-actions">{children}</div>}
    </div>
  );
}

/** Tabs as links in the query string (`?tab=`), so each section has its own URL. */
export function Tabs({ tabs, current, onChange, label }: { tabs: Array<{ id: string; label: string }>; current: string; onChange: (id: string) => void; label: string }) {
  const bar = useRef<HTMLElement>(null);
  useEffect(() => {
    // On a narrow screen the bar scrolls sideways: the current tab is kept in view.
    const active = bar.current?.querySelector<HTMLElement>('[aria-current="page"]');
    if (active && bar.current) {
      const left = active.offsetLeft - bar.current.offsetLeft;
      if (left < bar.current.scrollLeft || left + active.offsetWidth > bar.current.scrollLeft + bar.current.clientWidth) bar.current.scrollLeft = left - 16;
    }
  }, [current]);
  return (
    <nav className="tabs" aria-label={label} ref={bar}>
      {tabs.map((tab) => (
        <a
          key={tab.id}
          href={`?tab=${tab.id}`}
          className={tab.id === current ? 'tab active' : 'tab'}
          aria-current={tab.id === current ? 'page' : undefined}
          onClick={(event) => {
            event.preventDefault();
            onChange(tab.id);
          }}
        >
          {tab.label}
        </a>
      ))}
    </nav>
  );
}

/** A page of tabs: only the tabs the user may see, the current one taken from `?tab=`. */
export function TabbedPage({ title, tabs }: { title: string; tabs: Array<{ id: string; label: string; allowed: boolean; render: () => ReactNode }> }) {
  const [params, setParams] = useQueryState();
  const visible = tabs.filter((tab) => tab.allowed);
  const current = visible.find((t) => t.id === params.get('tab'))?.id ?? visible[0]?.id ?? '';
  return (
    <section>
      <PageHeader title={title} />
      <Tabs label={title} tabs={visible.map(({ id, label }) => ({ id, label }))} current={current} onChange={(id) => setParams({ tab: id }, { push: true })} />
      {visible.map((tab) => tab.id === current && <Fragment key={tab.id}>{tab.render()}</Fragment>)}
    </section>
  );
}

type Column = string | { label: ReactNode; className?: string };

/**
 * A table of records: column headers (plus a hidden "Actions" header unless `actions` is false) and
 * the body rows as children. On a phone its rows read as cards (`cards`, the default): each cell on
 * its own line under its column's name, so no table is several screens wide with its buttons at
 * the far end. A table with a phone layout of its own (the file list hides columns) opts out.
 */
export function DataTable({ columns, actions = true, wrap = true, cards = true, className, caption, children }: { columns: Column[]; actions?: boolean; wrap?: boolean; cards?: boolean; className?: string; caption?: ReactNode; children: ReactNode }) {
  const ref = useRef<HTMLTableElement>(null);
  // Each cell carries its column's name for the card layout. Read from the rendered headers after
  // every render, since rows are the pages' own components; a cell that names itself is left be.
  useLayoutEffect(() => {
    if (!cards || !ref.current) return;
    labelCells(ref.current, columns.length);
  });
  const table = (
    <table ref={ref} className={[cards ? 'card-table' : '', className ?? ''].join(' ').trim() || undefined}>
      {caption !== undefined && <caption className="visually-hidden">{caption}</caption>}
      <thead>
        <tr>
          {columns.map((column, index) =>
            typeof column === 'string' ? (
              <th key={index} scope="col">
                {column}
              </th>
            ) : (
              <th key={index} scope="col" className={column.className}>
                {column.label}
              </th>
            ),
          )}
          {actions && (
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          )}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
  // The frame scrolls sideways on a narrow screen where a table is no cards: it can be focused, so the keyboard scrolls it too.
  return wrap ? (
    <div className="table-wrap" tabIndex={0} role="region" aria-label={typeof caption === 'string' ? caption : 'Table'}>
      {table}
    </div>
  ) : (
    table
  );
}

/** Marks each body cell with its column's header text (data-label) and the last one as the actions. */
function labelCells(table: HTMLTableElement, named: number): void {
  const headers = [...(table.tHead?.rows[0]?.cells ?? [])].map((cell) => cell.textContent?.trim() ?? '');
  for (const body of table.tBodies) {
    for (const row of body.rows) {
      // A cell spanning columns (a row of details under its record) is a block of its own.
      if ([...row.cells].some((cell) => cell.colSpan > 1)) continue;
      [...row.cells].forEach((cell, index) => {
        if (index >= named) cell.dataset.actions = '';
        else if (cell.dataset.label === undefined && headers[index]) cell.dataset.label = headers[index];
      });
    }
  }
}
