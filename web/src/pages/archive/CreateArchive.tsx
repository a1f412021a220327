import { useEffect, useRef, useState } from 'react';
import { get, post } from '../../api.ts';
import { formatBytes } from '../../format.ts';
import { useSession } from '../../session.tsx';
import { CopyButton, useSubmit } from '../../ui.tsx';
import type { FileRecord, Folder, UploadLinks, UploadProfile } from '@api';
import { FolderOptions } from '../FolderOptions.tsx';
import { archiveFailure } from './failure.ts';

/** `archive-YYYY-MM-DD.zip`, the day in the browser's time zone. */
export function defaultArchiveName(now = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `archive-${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}.zip`;
}

/**
 * POST /api/archives: a new ZIP in the library holding the selected files (the server makes their
 * names unique inside it), then its links. The caller keeps the selection, so the originals can be
 * deleted or moved next.
 */
export function CreateArchiveForm({ files, folders, onCreated, onClose }: { files: FileRecord[]; folders: Folder[]; onCreated: () => void; onClose: () => void }) {
  const { can } = useSession();
  const chooseFolder = can('folders.manage');
  const [name, setName] = useState(defaultArchiveName);
  const [folder, setFolder] = useState('');
  const [created, setCreated] = useState<UploadLinks | null>(null);
  // The archive follows the account's default upload profile like an upload: one that gives files
  // random names gives the archive one too, which the Name field must say rather than be ignored.
  const [randomProfile, setRandomProfile] = useState<string | null>(null);
  const readsProfiles = can('uploadProfiles.manage');
  useEffect(() => {
    if (!readsProfiles) return;
    let live = true;
    get<{ profiles: UploadProfile[] }>('/api/upload-profiles').then(
      ({ profiles }) => {
        const standing = profiles.find((p) => p.isDefault);
        if (live && standing?.options.randomizeFileUrls) setRandomProfile(standing.name);
      },
      () => {},
    );
    return () => {
      live = false;
    };
  }, [readsProfiles]);
  const { submit, error, busy } = useSubmit(async () => {
    const links = await post<UploadLinks>('/api/archives', {
      fileIds: files.map((f) => f.id),
      ...(name.trim() ? { name: name.trim() } : {}),
      ...(chooseFolder ? { folderId: folder || null } : {}),
    });
    setCreated(links);
    onCreated();
  });

  if (created) return <Created links={created} onClose={onClose} />;
  return (
    <form onSubmit={submit} className="stack">
      <p>
        {files.length === 1 ? 'The selected file goes' : `The ${files.length} selected files go`} into one ZIP file of yours. Files with the same name are renamed inside it, so none is left out.
      </p>
      <label>
        Name
        <input type="text" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} required />
        <span className="hint">
          {randomProfile !== null
            ? `Your default upload profile (${randomProfile}) gives new files random names: the archive gets one too, ending in .zip.`
            : 'When the name does not end in .zip, the server adds it.'}
        </span>
      </label>
      {chooseFolder && (
        <label>
          Folder
          <select value={folder} onChange={(e) => setFolder(e.target.value)}>
            <option value="">Unfiled</option>
            <FolderOptions folders={folders} />
          </select>
        </label>
      )}
      {error !== null && (
        <p className="error-note" role="alert">
          {archiveFailure(error)}
        </p>
      )}
      <div className="actions">
        <button type="button" onClick={onClose}>
          Cancel
        </button>
        <button type="submit" className="primary" aria-disabled={busy || undefined}>
          {busy ? 'Creating…' : 'Create archive'}
        </button>
      </div>
    </form>
  );
}

function Created({ links, onClose }: { links: UploadLinks; onClose: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  // The form the focus was in is gone: focus moves to the result.
  useEffect(() => heading.current?.focus(), []);
  return (
    <section className="stack" data-testid="archive-created">
      <h3 ref={heading} tabIndex={-1}>
        Created {links.name} <span className="muted">({formatBytes(links.size)})</span>
      </h3>
      <p className="upload-result">
        <a href={links.url} target="_blank" rel="noopener noreferrer" data-testid="archive-link">
          {links.url}
        </a>
        <CopyButton text={links.copyText} label="Copy link" />
      </p>
      <div className="actions">
        <a className="button" href={links.downloadUrl} download>
          Download
        </a>
        <button type="button" className="primary" onClick={onClose}>
          Done
        </button>
      </div>
    </section>
  );
}
