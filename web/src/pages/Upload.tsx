import { useCallback, useEffect, useId, useMemo, useRef, useState, type DragEvent } from 'react';
import { get } from '../api.ts';
import { formatBytes, formatDateTime, formatSpeed, pluralize } from '../format.ts';
import { useAskBeforeUnload, useLeaveGuard } from '../router.tsx';
import { useSession } from '../session.tsx';
import { Badge, CopyButton, PageHeader, useAnnounce, useConfirm, useLoad } from '../ui.tsx';
import { ApiError, errorMessage } from '../api.ts';
import { abandonChunkedUpload, CHUNK_THRESHOLD, FileChanged, newChunkedProgress, UploadAborted, uploadFile, type ChunkedProgress, type Selectors } from '../upload/uploader.ts';
import { claimedKeys, claimKept, discardInterrupted, forgetKept, interruptedUploads, onKeptChange, resumableKey, resumableProgress } from '../upload/resumable.ts';
import type { Account, FileRecord, Folder, ProfileOptions, Tag, UploadLinks, UploadProfile } from '@api';
import { FolderOptions, UploadProfileOptions } from './FolderOptions.tsx';
import { optionParts, OptionsEditor, type ExpiryAction } from './UploadOptions.tsx';

type Status = 'queued' | 'uploading' | 'done' | 'failed' | 'cancelled';

interface Item {
  id: number;
  file: File;
  selectors: Selectors;
  status: Status;
  detail: string;
  loaded: number;
  /** Bytes per second over the last few seconds. */
  speed: number;
  /** Sending nothing until a throttle's wait is over: the row shows the countdown alone. */
  waiting?: boolean;
  links?: UploadLinks;
  /** The stored file's record, read after the upload: whether the link opens for others. */
  record?: FileRecord;
  error?: string;
  /** A failure no retry mends (the size limit, a refused option, a file changed on disk). */
  final?: boolean;
}

/** Uploaded, cancelled, or failed for good: what "Clear finished" takes away. */
const settled = (item: Item) => item.status === 'done' || item.status === 'cancelled' || (item.status === 'failed' && item.final === true);

/**
 * Whether a failure is one that sending the same file again cannot mend: a 4xx other than a timeout,
 * a conflict or a throttle (the size limit, the quota, a refused option), or a file changed on disk.
 * Such a row is cleared with the finished ones and left out of "Retry all".
 */
const finalFailure = (error: unknown) =>
  error instanceof FileChanged || (error instanceof ApiError && error.status >= 400 && error.status < 500 && ![408, 409, 429].includes(error.status));

/** A failed or cancelled item back in the queue. */
const requeued = (item: Item): Item => ({ ...item, status: 'queued', detail: 'Waiting', error: undefined, loaded: 0, final: false });

/** How many files upload at once (each large file also sends several parts in parallel). */
const FILES_IN_PARALLEL = 2;

function pastedName(file: File): File {
  // Pasted screenshots arrive as "image.png"; give them a unique, dated name.
  if (file.name && file.name !== 'image.png') return file;
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const extension = file.type.split('/')[1]?.replace(/[^a-z0-9]/gi, '') || 'bin';
  return new File([file], `paste-${stamp}.${extension}`, { type: file.type });
}

export function UploadPage() {
  const announce = useAnnounce();
  const { can, me } = useSession();
  const accountId = me?.id ?? null;
  const readsFiles = can('files.read');
  const [items, setItems] = useState<Item[]>([]);
  const [profile, setProfile] = useState('');
  const [folder, setFolder] = useState('');
  // The next files' own options and password, over the profile's (contract §4).
  const [options, setOptions] = useState<ProfileOptions>({});
  const [password, setPassword] = useState('');
  const [dragging, setDragging] = useState(false);
  const nextId = useRef(1);
  const controllers = useRef(new Map<number, AbortController>());
  const samples = useRef(new Map<number, Array<[number, number]>>());
  // Items whose upload has been started and not finished (state updates arrive a render later).
  const running = useRef(new Set<number>());
  // A chunked upload's session and finished parts, kept from a failed or cancelled attempt for Retry.
  const progress = useRef(new Map<number, ChunkedProgress>());
  // Where each chunked upload's progress is kept past a reload (upload/resumable.ts); null: not kept.
  const keptAs = useRef(new Map<number, string | null>());
  // The release of each kept upload this page claimed (upload/resumable.ts, claimKept): held until
  // the upload is done or no Retry can come.
  const claims = useRef(new Map<number, () => void>());
  // Bumped when an interrupted upload is discarded, to list them again.
  const [interruptedVersion, setInterruptedVersion] = useState(0);
  const fileInput = useRef<HTMLInputElement>(null);
  const optionsSummary = useRef<HTMLElement>(null);
  const inputId = useId();

  const profiles = useLoad(() => (can('uploadProfiles.manage') ? get<{ profiles: UploadProfile[] }>('/api/upload-profiles').then((d) => d.profiles) : Promise.resolve([])), []);
  const folders = useLoad(() => (can('folders.manage') ? get<{ folders: Folder[] }>('/api/folders').then((d) => d.folders) : Promise.resolve([])), []);
  const account = useLoad(() => get<{ account: Account }>('/api/account').then((d) => d.account), []);
  const tags = useLoad(() => (can('tags.manage') ? get<{ tags: Tag[] }>('/api/files/tags').then((d) => d.tags) : Promise.resolve([])), []);
  // What the options may ask for (spec, POST /api/files rules 1–3): without files.share an upload is
  // private whatever it asks, and each expiry action needs its permission.
  const expiryActions: ExpiryAction[] = [...(can('files.delete') ? (['DELETE'] as const) : []), ...(can('files.share') ? (['SET_PRIVATE'] as const) : [])];
  const chosen = [...optionParts(options, tags.data ?? []), ...(password ? ['a password'] : [])];

  /** No Retry can come for this item: its chunked session, if one is kept, is given up. */
  const forget = useCallback((id: number) => {
    abandonChunkedUpload(progress.current.get(id));
    progress.current.delete(id);
    forgetKept(keptAs.current.get(id) ?? null);
    keptAs.current.delete(id);
    claims.current.get(id)?.();
    claims.current.delete(id);
  }, []);

  const update = useCallback((id: number, change: Partial<Item>) => setItems((list) => list.map((item) => (item.id === id ? { ...item, ...change } : item))), []);

  const enqueue = useCallback(
    (files: File[]) => {
      if (files.length === 0) return;
      // An expiry whose action is left to the profile takes the one action this role may use, where
      // it may use only one: the built-in action (delete) would be refused for a role without files.delete.
      const only = expiryActions.length === 1 ? expiryActions[0] : undefined;
      const asked = options.expiration && options.expiration !== 'DISABLED' && !options.expiryAction && only ? { ...options, expiryAction: only } : options;
      const selectors = { profile, folder, options: asked, password };
      setItems((list) => [...list, ...files.map((file) => ({ id: nextId.current++, file, selectors, status: 'queued' as const, detail: 'Waiting', loaded: 0, speed: 0 }))]);
    },
    [profile, folder, options, password, expiryActions.join()],
  );

  const reloadAccount = account.reload;
  const start = useCallback(
    async (item: Item) => {
      running.current.add(item.id);
      const controller = new AbortController();
      controllers.current.set(item.id, controller);
      samples.current.set(item.id, [[performance.now(), 0]]);
      update(item.id, { status: 'uploading', detail: 'Uploading', loaded: 0, speed: 0, error: undefined, waiting: false });
      let kept = progress.current.get(item.id);
      if (!kept) {
        // A large file this page (or one before a reload) left part-way goes on from its parts.
        // Not for a second copy of a file already going up here: the two would share one session.
        // Nor for one another page of this browser is sending: its claim says so.
        const key = accountId === null ? null : resumableKey(accountId, item.file);
        const inUse = key !== null && [...keptAs.current.values()].includes(key);
        let release = key !== null && item.file.size > CHUNK_THRESHOLD && !inUse ? await claimKept(key) : null;
        // Cancelled (or the page left) while claiming: the upload stops at once, and claims nothing.
        if (release !== null && controller.signal.aborted) {
          release();
          release = null;
        }
        if (accountId !== null && release !== null) {
          claims.current.set(item.id, release);
          const resumable = resumableProgress(accountId, item.file, item.selectors);
          kept = resumable.progress;
          keptAs.current.set(item.id, resumable.key);
        } else {
          kept = newChunkedProgress();
        }
        progress.current.set(item.id, kept);
      }
      try {
        const links = await uploadFile(item.file, item.selectors, {
          signal: controller.signal,
          progress: kept,
          onStatus: (detail, waiting = false) => update(item.id, { detail, waiting }),
          onProgress: (loaded) => {
            const now = performance.now();
            const list = samples.current.get(item.id) ?? [];
            list.push([now, loaded]);
            while (list.length > 2 && now - list[0]![0] > 3000) list.shift();
            const [t0, b0] = list[0]!;
            const speed = now - t0 > 250 ? ((loaded - b0) / (now - t0)) * 1000 : 0;
            update(item.id, { loaded, speed: Math.max(0, speed) });
          },
        });
        progress.current.delete(item.id);
        forgetKept(keptAs.current.get(item.id) ?? null);
        keptAs.current.delete(item.id);
        claims.current.get(item.id)?.();
        claims.current.delete(item.id);
        update(item.id, { status: 'done', detail: 'Uploaded', loaded: item.file.size, links });
        announce(`${item.file.name} uploaded`);
        void reloadAccount();
        // A profile may have made it private, protected or short-lived: the row says so next to the
        // link, which would otherwise be sent to people who then get a 404 or a password form.
        if (readsFiles) {
          const id = links.downloadUrl.split('/').at(-2) ?? '';
          get<FileRecord[]>(`/api/files?ids=${encodeURIComponent(id)}&limit=1`).then(
            (records) => records[0] && update(item.id, { record: records[0] }),
            () => {},
          );
        }
      } catch (error) {
        if (error instanceof UploadAborted) {
          update(item.id, { status: 'cancelled', detail: 'Cancelled', loaded: 0, speed: 0 });
          announce(`Upload of ${item.file.name} cancelled`);
        } else {
          update(item.id, { status: 'failed', detail: 'Failed', error: errorMessage(error), loaded: 0, speed: 0, final: finalFailure(error) });
          // A changed file cannot be resumed either: its parts would be of another file.
          if (error instanceof FileChanged) forget(item.id);
          announce(`Upload of ${item.file.name} failed`);
        }
      } finally {
        controllers.current.delete(item.id);
        running.current.delete(item.id);
      }
    },
    [update, reloadAccount, announce, readsFiles, forget, accountId],
  );

  // The queue: start waiting files while fewer than FILES_IN_PARALLEL are uploading.
  useEffect(() => {
    const busy = running.current.size;
    const waiting = items.filter((i) => i.status === 'queued' && !running.current.has(i.id)).slice(0, Math.max(0, FILES_IN_PARALLEL - busy));
    for (const item of waiting) void start(item);
  }, [items, start]);

  // Paste anywhere on this page.
  useEffect(() => {
    const onPaste = (event: ClipboardEvent) => {
      const files = [...(event.clipboardData?.files ?? [])];
      if (files.length === 0) return;
      event.preventDefault();
      enqueue(files.map(pastedName));
    };
    document.addEventListener('paste', onPaste);
    return () => document.removeEventListener('paste', onPaste);
  }, [enqueue]);

  // Leaving the page cancels nothing silently: while uploads run, closing the tab is the browser's
  // question, and going to another page of the app (a link, Back) is asked here.
  const unfinished = items.filter((i) => i.status === 'uploading' || i.status === 'queued').length;
  const busy = unfinished > 0;
  useAskBeforeUnload(busy);
  const confirm = useConfirm();
  useLeaveGuard(busy, () => confirm('Leave this page', `${pluralize(unfinished, 'upload')} ${unfinished === 1 ? 'is' : 'are'} not finished. Leaving this page cancels ${unfinished === 1 ? 'it' : 'them'}.`, 'Leave', 'Stay'));

  useEffect(
    () => () => {
      controllers.current.forEach((c) => c.abort());
      for (const id of [...progress.current.keys()]) forget(id);
    },
    [],
  );

  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    enqueue([...event.dataTransfer.files]);
  };

  // Large uploads a page left part-way (a reload, a closed tab): choosing the file again resumes one.
  const listed = accountId === null ? '' : items.map((i) => resumableKey(accountId, i.file)).join('\n');
  // Not those another page of this browser is sending now (claimed): read again when another page
  // changes what is kept, and every few seconds while any is kept (a page that starts sending one
  // writes nothing until a part arrives, and one closed mid-upload lets go of it without a word).
  const [claimed, setClaimed] = useState<ReadonlySet<string>>(new Set());
  useEffect(() => onKeptChange(() => setInterruptedVersion((v) => v + 1)), []);
  useEffect(() => {
    let current = true;
    // The same set again keeps the one held, so the list below is not worked out anew every few seconds.
    void claimedKeys().then((keys) => current && setClaimed((was) => (sameMembers(keys, was) ? was : keys)));
    return () => void (current = false);
  }, [listed, interruptedVersion]);
  const interrupted = useMemo(
    () => (accountId === null ? [] : interruptedUploads(accountId, new Set([...listed.split('\n'), ...claimed]))),
    [accountId, listed, interruptedVersion, claimed],
  );
  const anyKept = accountId !== null && (interrupted.length > 0 || claimed.size > 0);
  useEffect(() => {
    if (!anyKept) return;
    const timer = setInterval(() => setInterruptedVersion((v) => v + 1), 5000);
    return () => clearInterval(timer);
  }, [anyKept]);

  const quota = account.data;
  // Failures that a retry may mend; those that cannot be are cleared with the finished ones.
  const failedCount = items.filter((i) => i.status === 'failed' && !i.final).length;
  return (
    <section>
      <PageHeader title="Upload" />
      {quota && (
        <p className="muted" data-testid="quota">
          Storage used: {formatBytes(quota.usedBytes)}
          {quota.quotaBytes !== null ? ` of ${formatBytes(quota.quotaBytes)}` : ' (no quota)'}
        </p>
      )}
      <div className="upload-options">
        <label>
          Upload profile
          <select value={profile} onChange={(e) => setProfile(e.target.value)} name="profile">
            <option value="">Account default{profiles.data?.some((p) => p.isDefault) ? ` (${profiles.data.find((p) => p.isDefault)!.name})` : ''}</option>
            <option value="none">No profile</option>
            <UploadProfileOptions profiles={profiles.data} />
          </select>
        </label>
        {can('folders.manage') && (
          <label>
            Folder
            <select value={folder} onChange={(e) => setFolder(e.target.value)} name="folder">
              <option value="">Unfiled</option>
              <FolderOptions folders={folders.data ?? []} />
            </select>
          </label>
        )}
      </div>
      <details className="upload-more" data-testid="upload-more">
        <summary ref={optionsSummary}>
          Options for the next files{chosen.length > 0 && <span className="muted">: {chosen.join(' · ')}</span>}
        </summary>
        <p className="hint">Over the profile’s options, for files added from now on; files already in the list keep theirs.{can('files.share') ? '' : ' Your uploads are private: your role cannot share files.'}</p>
        <OptionsEditor
          value={options}
          onChange={setOptions}
          tags={tags.data ?? []}
          inheritLabel="As the profile says"
          tagsLegend="Tags (instead of the profile’s)"
          showVisibility={can('files.share')}
          actions={expiryActions}
        />
        <div className="options-grid">
          <label>
            Password
            <input type="password" value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="new-password" maxLength={1024} placeholder="None" aria-describedby="upload-password-hint" />
          </label>
          <span id="upload-password-hint" className="hint span-all">
            Anyone opening the link is asked for it.
          </span>
        </div>
        {chosen.length > 0 && (
          <button
            type="button"
            onClick={() => {
              setOptions({});
              setPassword('');
              // The button goes with the options it cleared: the focus goes back to their heading.
              optionsSummary.current?.focus();
            }}
          >
            Use the profile’s options
          </button>
        )}
      </details>
      <div
        className={dragging ? 'dropzone dragging' : 'dropzone'}
        onDragOver={(event) => {
          event.preventDefault();
          event.dataTransfer.dropEffect = 'copy';
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={onDrop}
        data-testid="dropzone"
      >
        <p className="dropzone-title">Drop files here, paste them, or</p>
        <label htmlFor={inputId} className="button primary file-button">
          Choose files
        </label>
        <input
          id={inputId}
          type="file"
          ref={fileInput}
          multiple
          className="visually-hidden"
          data-testid="file-input"
          onChange={(event) => {
            enqueue([...(event.target.files ?? [])]);
            event.target.value = '';
          }}
        />
        <p className="hint">Files over {formatBytes(CHUNK_THRESHOLD)} are sent in parts, several at a time, and failed parts are retried.</p>
      </div>

      {interrupted.length > 0 && (
        <section className="interrupted-uploads" aria-labelledby={`${inputId}-interrupted`} data-testid="interrupted-uploads">
          <h2 id={`${inputId}-interrupted`}>Unfinished uploads</h2>
          <p className="hint">
            A page was left while {interrupted.length === 1 ? 'this was' : 'these were'} going up. Choose the same file again, with the same profile, folder and options, to go
            on from the parts already sent.
          </p>
          <ul>
            {interrupted.map((upload) => (
              <li key={upload.key}>
                <span className="upload-name">{upload.name}</span>
                <span className="muted">
                  {formatBytes(upload.size)} · {upload.partsSent} of {upload.partCount} parts sent{upload.withPassword ? ' · with a password: type one again first' : ''}
                </span>
                <button
                  type="button"
                  aria-label={`Discard the unfinished upload of ${upload.name}`}
                  onClick={() => {
                    void discardInterrupted(upload.key).then((discarded) => {
                      if (!discarded) announce(`${upload.name} is going up in another tab`);
                      setInterruptedVersion((v) => v + 1);
                      fileInput.current?.focus();
                    });
                  }}
                >
                  Discard
                </button>
              </li>
            ))}
          </ul>
        </section>
      )}

      {items.length > 0 && (
        <div className="upload-list-header">
          <h2>Uploads</h2>
          <span className="row-actions">
            {failedCount > 0 && (
              <button
                type="button"
                onClick={() => {
                  setItems((list) => list.map((i) => (i.status === 'failed' && !i.final ? requeued(i) : i)));
                  // The button goes with the last failure: the focus goes to choosing more files.
                  fileInput.current?.focus();
                }}
              >
                Retry {failedCount === 1 ? 'the failed upload' : `${failedCount} failed uploads`}
              </button>
            )}
            <button
              type="button"
              onClick={() => {
                // Failed uploads stay, with their reasons and Retry: only what is settled goes.
                setItems((list) => {
                  const kept = list.filter((i) => !settled(i));
                  for (const id of [...progress.current.keys()]) if (!kept.some((i) => i.id === id)) forget(id);
                  return kept;
                });
                // The button is disabled (or gone) once nothing settled is left: the keyboard's focus
                // goes to choosing more files rather than to the page's body.
                fileInput.current?.focus();
              }}
              disabled={!items.some(settled)}
            >
              Clear finished
            </button>
          </span>
        </div>
      )}
      <ul className="upload-list" aria-label="Uploads">
        {items.map((item) => (
          <UploadRow
            key={item.id}
            item={item}
            onCancel={() => {
              const controller = controllers.current.get(item.id);
              // A file still waiting for its turn has nothing to abort: it just leaves the queue.
              if (controller) controller.abort();
              else update(item.id, { status: 'cancelled', detail: 'Cancelled', loaded: 0, speed: 0 });
            }}
            onRetry={() => setItems((list) => list.map((i) => (i.id === item.id ? requeued(i) : i)))}
            onRemove={() => {
              forget(item.id);
              setItems((list) => list.filter((i) => i.id !== item.id));
              // The row goes with its buttons: the focus goes to choosing files.
              fileInput.current?.focus();
            }}
          />
        ))}
      </ul>
    </section>
  );
}

function UploadRow({ item, onCancel, onRetry, onRemove }: { item: Item; onCancel: () => void; onRetry: () => void; onRemove: () => void }) {
  const labelId = useId();
  // Cancel and Retry are one button whose word changes, so the keyboard's focus stays on it from one
  // to the other (two buttons, one taking the other's place, dropped it to the page's body). When
  // the upload is done and the button goes, focus moves to the new link's Copy button.
  const actionRef = useRef<HTMLButtonElement>(null);
  const rowRef = useRef<HTMLLIElement>(null);
  const actionHadFocus = useRef(false);
  actionHadFocus.current = actionRef.current !== null && document.activeElement === actionRef.current;
  useEffect(() => {
    if (item.status !== 'done' || !actionHadFocus.current) return;
    actionHadFocus.current = false;
    rowRef.current?.querySelector<HTMLElement>('.upload-result button')?.focus();
  }, [item.status]);
  const action =
    item.status === 'uploading' || item.status === 'queued'
      ? { word: 'Cancel', label: `Cancel the upload of ${item.file.name}`, run: onCancel }
      : item.status === 'failed' || item.status === 'cancelled'
        ? { word: 'Retry', label: `Retry the upload of ${item.file.name}`, run: onRetry }
        : null;
  const percent = item.file.size === 0 ? (item.status === 'done' ? 100 : 0) : Math.min(100, Math.floor((item.loaded / item.file.size) * 100));
  return (
    <li className={`upload-item upload-${item.status}`} data-testid="upload-item" data-status={item.status} ref={rowRef}>
      <div className="upload-item-head">
        <span id={labelId} className="upload-name">
          {item.file.name}
        </span>
        <span className="muted">{formatBytes(item.file.size)}</span>
      </div>
      <progress max={100} value={percent} aria-labelledby={labelId} aria-valuetext={`${percent}%`} data-testid="upload-progress" />
      <div className="upload-item-foot">
        <span>
          {item.status === 'uploading' && !item.waiting ? `${percent}% · ${formatSpeed(item.speed)} · ${item.detail}` : item.detail}
        </span>
        <span className="row-actions">
          {action && (
            <button type="button" ref={actionRef} onClick={action.run} aria-label={action.label}>
              {action.word}
            </button>
          )}
          {(item.status === 'failed' || item.status === 'cancelled') && (
            <button type="button" onClick={onRemove} aria-label={`Remove ${item.file.name} from the list`}>
              Remove
            </button>
          )}
        </span>
      </div>
      {item.error && (
        <p className="error-note" role="alert">
          {item.error}
        </p>
      )}
      {item.links && (
        <div className="upload-result">
          <a href={item.links.url} target="_blank" rel="noopener noreferrer" data-testid="upload-link">
            {item.links.url}
          </a>
          <CopyButton text={item.links.copyText} label="Copy link" ariaLabel={`Copy link to ${item.links.name}`} />
        </div>
      )}
      {item.record && (item.record.visibility === 'PRIVATE' || item.record.hasPassword || item.record.expiresAt) && (
        <p className="upload-access small" data-testid="upload-access">
          {item.record.visibility === 'PRIVATE' && <Badge kind="neutral">Private: only you can open the link</Badge>}
          {item.record.hasPassword && <Badge kind="neutral">Opens with its password</Badge>}
          {item.record.expiresAt && !(item.record.expiryAction === 'SET_PRIVATE' && item.record.visibility === 'PRIVATE') && (
            <Badge kind="warn">
              {item.record.expiryAction === 'SET_PRIVATE' ? 'Private from' : 'Deleted at'} {formatDateTime(item.record.expiresAt)}
            </Badge>
          )}
        </p>
      )}
    </li>
  );
}

/** Whether two sets hold the same members. */
function sameMembers<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): boolean {
  return a.size === b.size && [...a].every((member) => b.has(member));
}
