import { useEffect, useId, useMemo, useRef, useState, type FormEvent } from 'react';
import { get, post } from '../../api.ts';
import { formatBytes, formatDateTime, pluralize } from '../../format.ts';
import { Icon } from '../../icons.tsx';
import { useSession } from '../../session.tsx';
import { Badge, CopyButton, Loading, useLoad } from '../../ui.tsx';
import type { ArchiveExtraction, ArchiveManifest, FileRecord, Folder } from '@api';
import { withoutDirectionControls as shown } from '@api/display-text.ts';
import { FolderOptions } from '../FolderOptions.tsx';
import { folderPath } from '../folder-tree.ts';
import { batchPaths, buildTree, directoryKeys, entryName, type ArchiveEntry, type DirectoryNode } from './archive-tree.ts';
import { archiveFailure, entryPath, isBusy } from './failure.ts';

/** Above this many files the tree opens with its directories closed, so it stays quick to read. */
const OPEN_ALL_UP_TO = 200;

interface Outcome extends ArchiveExtraction {
  folderId: string | null | undefined;
  /** Set when a later request of a large selection failed after earlier ones extracted files. */
  error: unknown;
}

/**
 * The contents of an archive in the owner's library (GET /api/archives/{id}): a tree of its
 * entries with a download per file, and extraction of everything or a selection into a folder
 * (POST /api/archives/{id}/extract, files.upload), followed by what was created and what was skipped.
 */
export function ArchiveContents({ file, folders, onExtracted }: { file: FileRecord; folders: Folder[]; onExtracted: () => void }) {
  const manifest = useLoad(() => get<ArchiveManifest>(`/api/archives/${encodeURIComponent(file.id)}`), [file.id]);
  const [outcome, setOutcome] = useState<Outcome | null>(null);

  if (manifest.error && !manifest.data) {
    return (
      <div className="stack">
        <p className="error-note" role="alert">
          {archiveFailure(manifest.error)}
        </p>
        {isBusy(manifest.error) && (
          <div className="actions-left">
            <button type="button" onClick={() => void manifest.reload()} disabled={manifest.loading}>
              Try again
            </button>
          </div>
        )}
      </div>
    );
  }
  if (!manifest.data) return <Loading label="Reading the archive…" />;
  if (outcome) return <ExtractionSummary outcome={outcome} folders={folders} onBack={() => setOutcome(null)} />;
  return (
    <ManifestView
      file={file}
      manifest={manifest.data}
      folders={folders}
      onExtracted={(result) => {
        setOutcome(result);
        onExtracted();
      }}
    />
  );
}

function ManifestView({ file, manifest, folders, onExtracted }: { file: FileRecord; manifest: ArchiveManifest; folders: Folder[]; onExtracted: (outcome: Outcome) => void }) {
  const { can } = useSession();
  const canExtract = can('files.upload');
  const chooseFolder = can('folders.manage');
  const tree = useMemo(() => buildTree(manifest.entries), [manifest]);
  const [expanded, setExpanded] = useState<Set<string>>(() => new Set(tree.fileCount <= OPEN_ALL_UP_TO ? directoryKeys(tree) : []));
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [folder, setFolder] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const hintId = useId();

  const toggleDirectory = (key: string) =>
    setExpanded((current) => {
      const next = new Set(current);
      if (next.has(key)) next.delete(key);
      else next.add(key);
      return next;
    });
  const select = (paths: string[], on: boolean) =>
    setSelected((current) => {
      const next = new Set(current);
      for (const path of paths) {
        if (on) next.add(path);
        else next.delete(path);
      }
      return next;
    });

  /** `paths` null: every file entry of the archive, also those beyond a truncated list. */
  const extract = async (paths: string[] | null) => {
    setBusy(true);
    setError(null);
    const folderId = chooseFolder ? folder || null : undefined;
    const target = folderId === undefined ? {} : { folderId };
    // A selection of every extractable file is the same as "everything", in one request.
    const everything = paths === null || (!manifest.truncated && paths.length === tree.selectable.length);
    const batches: Array<string[] | null> = paths === null || everything ? [null] : batchPaths(paths, folderId ?? null);
    const outcome: Outcome = { files: [], skipped: [], folderId, error: null };
    for (const batch of batches) {
      try {
        const part = await post<ArchiveExtraction>(`/api/archives/${encodeURIComponent(file.id)}/extract`, batch === null ? target : { ...target, paths: batch });
        outcome.files.push(...part.files);
        outcome.skipped.push(...part.skipped);
      } catch (caught) {
        outcome.error = caught;
        break;
      }
    }
    setBusy(false);
    if (outcome.error && outcome.files.length === 0 && outcome.skipped.length === 0) {
      setError(outcome.error);
      return;
    }
    onExtracted(outcome);
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void extract([...selected]);
  };

  const allDirectories = useMemo(() => directoryKeys(tree), [tree]);
  const directoryCount = manifest.entries.filter((e) => e.directory).length;

  return (
    <div className="archive stack">
      <p className="archive-totals" data-testid="archive-totals">
        <Badge kind="neutral">{manifest.format === 'zip' ? 'ZIP' : 'tar'}</Badge> {pluralize(manifest.entryCount, 'entry', 'entries')} · {formatBytes(manifest.totalSize)} uncompressed
        {directoryCount > 0 && <span className="muted"> · {pluralize(directoryCount, 'directory', 'directories')}</span>}
      </p>
      {manifest.truncated && (
        <p className="note" role="note">
          Only the first {manifest.entries.length.toLocaleString()} of {manifest.entryCount.toLocaleString()} entries are listed.
          {canExtract && ' Extract all takes every file of the archive, listed or not.'}
        </p>
      )}

      {manifest.entries.length === 0 ? (
        <p className="empty">The archive is empty.</p>
      ) : (
        <>
          <div className="archive-tools">
            {canExtract && tree.selectable.length > 0 && (
              <label className="checkbox">
                <TriStateCheckbox count={tree.selectable.filter((p) => selected.has(p)).length} total={tree.selectable.length} onChange={(on) => select(tree.selectable, on)} />
                Select all
              </label>
            )}
            {canExtract && (
              <span className="muted small" aria-live="polite">
                {pluralize(selected.size, 'file')} selected
              </span>
            )}
            {allDirectories.length > 0 && (
              <span className="actions-left">
                <button type="button" className="small" onClick={() => setExpanded(new Set(allDirectories))}>
                  Expand all
                </button>
                <button type="button" className="small" onClick={() => setExpanded(new Set())}>
                  Collapse all
                </button>
              </span>
            )}
          </div>
          <div className="archive-tree-wrap">
            <Branch node={tree} fileId={file.id} expanded={expanded} selected={selected} withSelection={canExtract} onToggleDirectory={toggleDirectory} onSelect={select} label={`Contents of ${file.name}`} />
          </div>
        </>
      )}

      {canExtract && (
        <form className="archive-extract" onSubmit={submit} aria-label="Extract">
          {chooseFolder && (
            <label>
              Extract into
              <select value={folder} onChange={(e) => setFolder(e.target.value)} aria-describedby={hintId}>
                <option value="">Unfiled</option>
                <FolderOptions folders={folders} />
              </select>
            </label>
          )}
          <p className="hint" id={hintId}>
            Each file becomes a file of yours, named after its last path segment; directories are not kept. Encrypted entries are skipped.
          </p>
          {error !== null && (
            <p className="error-note" role="alert">
              {archiveFailure(error)}
            </p>
          )}
          {busy && <Loading label="Extracting…" />}
          <div className="actions">
            <button type="button" onClick={() => void extract(null)} disabled={busy || tree.fileCount + (manifest.truncated ? 1 : 0) === 0}>
              Extract all
            </button>
            <button type="submit" className="primary" disabled={busy || selected.size === 0}>
              {selected.size === 0 ? 'Extract selected' : `Extract ${pluralize(selected.size, 'selected file')}`}
            </button>
          </div>
        </form>
      )}
    </div>
  );
}

interface BranchProps {
  node: DirectoryNode;
  fileId: string;
  expanded: Set<string>;
  selected: Set<string>;
  withSelection: boolean;
  onToggleDirectory: (key: string) => void;
  onSelect: (paths: string[], on: boolean) => void;
  label?: string;
}

/** One directory's children: subdirectories (collapsible) first, then files. */
function Branch({ node, label, ...props }: BranchProps) {
  const { fileId, expanded, selected, withSelection, onToggleDirectory, onSelect } = props;
  return (
    <ul className={node.depth === 0 ? 'archive-tree' : 'archive-branch'} aria-label={label} data-depth={Math.min(node.depth, 6)}>
      {node.directories.map((directory) => {
        const open = expanded.has(directory.key);
        const chosen = directory.selectable.filter((p) => selected.has(p)).length;
        return (
          <li key={directory.key} data-testid="archive-directory">
            <div className="archive-row">
              {withSelection && (
                <TriStateCheckbox
                  count={chosen}
                  total={directory.selectable.length}
                  onChange={(on) => onSelect(directory.selectable, on)}
                  label={`Select everything in ${shown(directory.key)}`}
                />
              )}
              <button type="button" className="archive-toggle" aria-expanded={open} onClick={() => onToggleDirectory(directory.key)}>
                <span className="archive-caret" aria-hidden="true">
                  ▸
                </span>
                <Icon name="folder" />
                <bdi className="archive-name">{shown(directory.name)}</bdi>
              </button>
              <span className="archive-size muted">
                {pluralize(directory.fileCount, 'file')} · {formatBytes(directory.size)}
              </span>
            </div>
            {open && <Branch node={directory} {...props} />}
          </li>
        );
      })}
      {node.files.map((entry, index) => (
        <EntryRow key={`${entry.path}\u0000${index}`} entry={entry} fileId={fileId} withSelection={withSelection} checked={selected.has(entry.path)} onSelect={onSelect} />
      ))}
    </ul>
  );
}

function EntryRow({ entry, fileId, withSelection, checked, onSelect }: { entry: ArchiveEntry; fileId: string; withSelection: boolean; checked: boolean; onSelect: (paths: string[], on: boolean) => void }) {
  const name = entryName(entry.path);
  return (
    <li data-testid="archive-entry">
      <div className="archive-row">
        {withSelection && (
          <input
            type="checkbox"
            checked={checked && !entry.encrypted}
            disabled={entry.encrypted}
            onChange={(e) => onSelect([entry.path], e.target.checked)}
            aria-label={`Select ${shown(entry.path)}`}
          />
        )}
        <span className="archive-file" title={shown(entry.path)}>
          <bdi className="archive-name">{shown(name)}</bdi>
          {entry.encrypted && (
            <span title="Encrypted: listed, but Hoard cannot read it, so it cannot be downloaded or extracted">
              <Badge kind="warn">Encrypted</Badge>
            </span>
          )}
        </span>
        <span className="archive-date muted small">{entry.modifiedAt ? formatDateTime(entry.modifiedAt) : ''}</span>
        <span className="archive-size num">{formatBytes(entry.size)}</span>
        {entry.encrypted ? (
          <span className="archive-download-gap" aria-hidden="true" />
        ) : (
          <a className="button small" href={entryPath(fileId, entry.path)} download aria-label={`Download ${shown(entry.path)}`} title="Download">
            <Icon name="download" />
          </a>
        )}
      </div>
    </li>
  );
}

/** A checkbox for a group: checked when all are chosen, mixed when some are. */
function TriStateCheckbox({ count, total, onChange, label }: { count: number; total: number; onChange: (on: boolean) => void; label?: string }) {
  const ref = useRef<HTMLInputElement>(null);
  const mixed = count > 0 && count < total;
  useEffect(() => {
    if (ref.current) ref.current.indeterminate = mixed;
  }, [mixed]);
  return (
    <input
      ref={ref}
      type="checkbox"
      checked={total > 0 && count === total}
      disabled={total === 0}
      aria-checked={mixed ? 'mixed' : undefined}
      onChange={() => onChange(count < total)}
      aria-label={label}
    />
  );
}

function ExtractionSummary({ outcome, folders, onBack }: { outcome: Outcome; folders: Folder[]; onBack: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  // Focus moves to the summary, which replaces the form the focus was in.
  useEffect(() => heading.current?.focus(), []);
  const { files, skipped, folderId, error } = outcome;
  return (
    <section className="archive-summary stack" data-testid="extraction-summary">
      <h3 ref={heading} tabIndex={-1}>
        {files.length > 0 ? `Extracted ${pluralize(files.length, 'file')}` : 'No file was extracted'}
        {files.length > 0 && folderId !== undefined && <span className="muted"> into {folderPath(folders, folderId)}</span>}
      </h3>
      {files.length > 0 && (
        <ul className="archive-result-list" aria-label="Extracted files">
          {files.map((links, index) => (
            <li key={`${links.url}-${index}`}>
              <a href={links.url} target="_blank" rel="noopener noreferrer">
                {links.name}
              </a>
              <span className="muted small">{formatBytes(links.size)}</span>
              <CopyButton text={links.copyText} label="Copy link" className="small" />
            </li>
          ))}
        </ul>
      )}
      {skipped.length > 0 && (
        <>
          <h4>Skipped {pluralize(skipped.length, 'entry', 'entries')}</h4>
          <ul className="archive-result-list" aria-label="Skipped entries">
            {skipped.map((entry, index) => (
              <li key={`${entry.path}-${index}`}>
                <code>{shown(entry.path)}</code>
                <span>{shown(entry.reason)}</span>
              </li>
            ))}
          </ul>
        </>
      )}
      {error !== null && (
        <p className="error-note" role="alert">
          Stopped before the end of the selection: {archiveFailure(error)}
        </p>
      )}
      <div className="actions-left">
        <button type="button" onClick={onBack}>
          Back to the contents
        </button>
      </div>
    </section>
  );
}
