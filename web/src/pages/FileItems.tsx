import type { ReactNode } from 'react';
import { formatBytes, formatDate, formatDateTime, mibToBytes } from '../format.ts';
import { useSession } from '../session.tsx';
import { Badge, CopyButton, DataTable } from '../ui.tsx';
import type { FileRecord, Folder } from '@api';
import { downloadPath, isArchive, isPreviewable, previewPath, rawPath, shareUrl, thumbnailPath, typeLabel } from './file-links.ts';
import { Icon } from '../icons.tsx';
import { folderPath } from './folder-tree.ts';

interface ItemProps {
  files: FileRecord[];
  folders: Folder[];
  selection: Map<string, FileRecord>;
  onToggle: (file: FileRecord) => void;
  onOpen: (file: FileRecord) => void;
  onEdit: (file: FileRecord) => void;
  onDelete: (file: FileRecord) => void;
  /** Opens the contents of an archive. */
  onBrowse: (file: FileRecord) => void;
}

export function VisibilityBadges({ file }: { file: FileRecord }) {
  return (
    <span className="badges">
      {file.visibility === 'PUBLIC' ? <Badge kind="ok">Public</Badge> : <Badge kind="neutral">Private</Badge>}
      {file.hasPassword && <Badge kind="warn">Password</Badge>}
      {file.expiresAt && (
        <Badge kind="warn">
          {/* Within a day the time matters: "Expires Nov 30" read the same at 09:00 and at 23:00. */}
          <span title={formatDateTime(file.expiresAt)}>Expires {Date.parse(file.expiresAt) - Date.now() < 86_400_000 ? formatDateTime(file.expiresAt) : formatDate(file.expiresAt)}</span>
        </Badge>
      )}
    </span>
  );
}

function FileActions({ file, onEdit, onDelete, onBrowse, compact = false }: { file: FileRecord; onEdit: (file: FileRecord) => void; onDelete: (file: FileRecord) => void; onBrowse: (file: FileRecord) => void; compact?: boolean }) {
  const { can } = useSession();
  // Compact (grid cards): icon buttons, named for screen readers and in a tooltip.
  const label = (text: string) => (compact ? <span className="visually-hidden">{text}</span> : text);
  return (
    <span className="row-actions">
      <CopyButton text={shareUrl(file)} label="Copy link" ariaLabel={`Copy link to ${file.name}`} className="small" />
      <a className="button small" href={downloadPath(file)} download aria-label={`Download ${file.name}`} title="Download" data-action="download">
        {compact && <Icon name="download" />}
        {label('Download')}
      </a>
      {isArchive(file) && (
        <button type="button" className="small" onClick={() => onBrowse(file)} aria-label={`Contents of ${file.name}`} title="Contents" data-action="contents">
          {compact && <Icon name="archive" />}
          {label('Contents')}
        </button>
      )}
      {can('files.update') && (
        <button type="button" className="small" onClick={() => onEdit(file)} aria-label={`Edit ${file.name}`} title="Edit" data-action="edit">
          {compact && <Icon name="edit" />}
          {label('Edit')}
        </button>
      )}
      {can('files.delete') && (
        <button type="button" className="small danger" onClick={() => onDelete(file)} aria-label={`Delete ${file.name}`} title="Delete" data-action="delete">
          {compact && <Icon name="trash" />}
          {label('Delete')}
        </button>
      )}
    </span>
  );
}

/** Opens an image in the gallery viewer; any other file in a new tab (the owner can see private files). */
function OpenControl({ file, onOpen, children, className }: { file: FileRecord; onOpen: (file: FileRecord) => void; children: ReactNode; className?: string }) {
  if (isPreviewable(file)) {
    return (
      <button type="button" className={className} onClick={() => onOpen(file)} aria-label={`View ${file.name}`} data-action="open">
        {children}
      </button>
    );
  }
  return (
    <a className={className} href={rawPath(file)} target="_blank" rel="noopener noreferrer" aria-label={`Open ${file.name} in a new tab`} data-action="open">
      {children}
    </a>
  );
}

/** Grid cards whose picture loads at once: about the first row, which is on screen when the page opens. */
const EAGER_CARDS = 6;

/**
 * A grid card's picture, in the card's fixed 4:3 box (so nothing moves when it arrives): the
 * thumbnail once it is made; while it is being made, a neutral placeholder with the type label; the
 * type label when there will be none. When the administrator turned thumbnails off, images are
 * shown from their originals, as before thumbnails existed, if "Image previews" is on.
 */
function CardPicture({ file, previews, eager }: { file: FileRecord; previews: boolean; eager: boolean }) {
  const label = (
    <span className="type-label" aria-hidden="true">
      {typeLabel(file)}
    </span>
  );
  if (!previews) return label;
  const thumbnail = thumbnailPath(file);
  const source = thumbnail ?? (file.thumbnailStatus === 'disabled' && isPreviewable(file) ? previewPath(file) : null);
  if (source) return <img src={source} alt="" width={512} height={384} loading={eager ? 'eager' : 'lazy'} decoding="async" />;
  if (file.thumbnailStatus === 'pending') {
    return (
      <span className="thumb-pending" aria-hidden="true" data-testid="thumbnail-pending">
        {label}
      </span>
    );
  }
  return label;
}

export function FileGrid({ files, folders, selection, previews, onToggle, onOpen, onEdit, onDelete, onBrowse }: ItemProps & { previews: boolean }) {
  return (
    <ul className="file-grid" aria-label="Files">
      {files.map((file, index) => {
        const selected = selection.has(file.id);
        return (
          <li key={file.id} className={selected ? 'file-card selected' : 'file-card'} data-testid="file-card" data-item-key={file.id}>
            <OpenControl file={file} onOpen={onOpen} className="thumb">
              <CardPicture file={file} previews={previews} eager={index < EAGER_CARDS} />
            </OpenControl>
            <div className="file-card-body">
              <label className="checkbox file-name" title={file.name}>
                <input type="checkbox" checked={selected} onChange={() => onToggle(file)} aria-label={`Select ${file.name}`} />
                <span className="truncate">{file.name}</span>
              </label>
              <p className="muted small">
                {formatBytes(mibToBytes(file.size))} · {formatDate(file.uploadedAt)}
                {folders.length > 0 && file.folderId && <> · {folderPath(folders, file.folderId)}</>}
              </p>
              <VisibilityBadges file={file} />
              {file.tags.length > 0 && (
                <p className="tags small">
                  {file.tags.map((tag) => (
                    <span key={tag.id} className="tag">
                      #{tag.name}
                    </span>
                  ))}
                </p>
              )}
              <FileActions file={file} onEdit={onEdit} onDelete={onDelete} onBrowse={onBrowse} compact />
            </div>
          </li>
        );
      })}
    </ul>
  );
}

export function FileList({ files, folders, selection, onToggle, onOpen, onEdit, onDelete, onBrowse }: ItemProps) {
  return (
    <DataTable columns={[
        { label: <span className="visually-hidden">Selected</span> },
        'Name',
        { label: 'Type', className: 'wide-only' },
        { label: 'Size', className: 'num' },
        { label: 'Uploaded', className: 'wide-only' },
        'Sharing',
        { label: 'Views', className: 'num wide-only' },
        { label: 'Downloads', className: 'num wide-only' },
      ]} className="file-table" caption="Files" cards={false}>
      {files.map((file) => (
        <tr key={file.id} className={selection.has(file.id) ? 'selected' : undefined} data-testid="file-row" data-item-key={file.id}>
          <td>
            <input type="checkbox" checked={selection.has(file.id)} onChange={() => onToggle(file)} aria-label={`Select ${file.name}`} />
          </td>
          <td className="name-cell">
            <OpenControl file={file} onOpen={onOpen} className="link-button">
              {file.name}
            </OpenControl>
            {(file.tags.length > 0 || (folders.length > 0 && file.folderId)) && (
              <div className="muted small">
                {folders.length > 0 && file.folderId && <span>{folderPath(folders, file.folderId)} </span>}
                {file.tags.map((tag) => (
                  <span key={tag.id} className="tag">
                    #{tag.name}
                  </span>
                ))}
              </div>
            )}
          </td>
          <td className="small wide-only">{file.mimeType}</td>
          <td className="num">{formatBytes(mibToBytes(file.size))}</td>
          <td className="nowrap wide-only">{formatDateTime(file.uploadedAt)}</td>
          <td>
            <VisibilityBadges file={file} />
          </td>
          <td className="num wide-only">{file.views}</td>
          <td className="num wide-only">{file.downloads}</td>
          <td>
            <FileActions file={file} onEdit={onEdit} onDelete={onDelete} onBrowse={onBrowse} compact />
          </td>
        </tr>
      ))}
    </DataTable>
  );
}
