import { useRef, useState } from 'react';
import { patch } from '../api.ts';
import { fromLocalInput, toLocalInput } from '../format.ts';
import { useSession } from '../session.tsx';
import { FormDialog, useToast } from '../ui.tsx';
import type { FileRecord, Folder, Tag } from '@api';
import { FolderOptions } from './FolderOptions.tsx';
import { RecognisedText } from './RecognisedText.tsx';
import { isImage } from './file-links.ts';

/**
 * PATCH /api/files/{id}. Only the fields the account may change are shown: visibility and password
 * need files.share; an expiry needs files.share (SET_PRIVATE) or files.delete (DELETE); the folder
 * folders.manage; tags tags.manage. Only changed fields are sent.
 */
export function FileEditor({ file, open, folders, tags, onClose, onSaved }: { file: FileRecord; open: boolean; folders: Folder[]; tags: Tag[]; onClose: () => void; onSaved: () => void }) {
  const { can } = useSession();
  const toast = useToast();
  const canShare = can('files.share');
  const expiryActions = [...(can('files.delete') ? (['DELETE'] as const) : []), ...(canShare ? (['SET_PRIVATE'] as const) : [])];
  const [name, setName] = useState(file.name);
  const [visibility, setVisibility] = useState(file.visibility);
  const [passwordMode, setPasswordMode] = useState<'keep' | 'set' | 'remove'>(file.hasPassword ? 'keep' : 'remove');
  const [password, setPassword] = useState('');
  const [expires, setExpires] = useState(toLocalInput(file.expiresAt));
  const expiryField = useRef<HTMLInputElement>(null);
  // The stored action, when the file has one: a new date alone must not change what happens then.
  const [expiryAction, setExpiryAction] = useState<'DELETE' | 'SET_PRIVATE'>(file.expiryAction ?? expiryActions[0] ?? 'DELETE');
  const [actionTouched, setActionTouched] = useState(false);
  const [folderId, setFolderId] = useState(file.folderId ?? '');
  const [tagIds, setTagIds] = useState(file.tags.map((t) => t.id));

  const submit = async () => {
    const body: Record<string, unknown> = {};
    // A name of spaces alone is refused here rather than ignored (the dialog closed as if saved).
    if (!name.trim()) throw new Error('Name: a file needs a name that is not only spaces');
    if (name !== file.name) body.name = name.trim();
    if (canShare && visibility !== file.visibility) body.visibility = visibility;
    if (canShare && passwordMode === 'set') body.password = password;
    if (canShare && passwordMode === 'remove' && file.hasPassword) body.password = null;
    // The action is sent when it was chosen, or when the file had no expiry: a new date alone keeps
    // the stored action (the server keeps it when none is sent). The date is sent only when it was
    // changed: an action alone keeps the stored date, whatever the field can show of it.
    const dateChanged = expires !== toLocalInput(file.expiresAt);
    if (expiryActions.length > 0 && (dateChanged || actionTouched)) {
      const expiresAt = dateChanged ? fromLocalInput(expires, 'Expires at') : file.expiresAt;
      if (dateChanged) body.expiresAt = expiresAt;
      if (expiresAt && (actionTouched || file.expiryAction === null)) body.expiryAction = expiryAction;
    }
    if (can('folders.manage') && (folderId || null) !== file.folderId) body.folderId = folderId || null;
    const before = file.tags.map((t) => t.id).sort().join(',');
    if (can('tags.manage') && [...tagIds].sort().join(',') !== before) body.tagIds = tagIds;
    if (Object.keys(body).length === 0) {
      onClose();
      return;
    }
    // The server's name, which may differ from the one typed (a folder part like `x/` is dropped).
    const saved = await patch<{ file: { name: string } }>(`/api/files/${encodeURIComponent(file.id)}`, body);
    toast(`Saved ${saved.file.name}`);
    onSaved();
  };

  return (
    <FormDialog open={open} title={`Edit ${file.name}`} onClose={onClose} onSubmit={submit}>
      <div className="hinted">
        <label>
          Name
          <input type="text" value={name} onChange={(e) => setName(e.target.value)} maxLength={255} required aria-describedby="file-name-hint" />
        </label>
        <span id="file-name-hint" className="hint">
          Renaming changes the file’s links.
        </span>
      </div>
      {canShare && (
        <fieldset>
          <legend>Visibility</legend>
          <label className="checkbox">
            <input type="radio" name="visibility" checked={visibility === 'PUBLIC'} onChange={() => setVisibility('PUBLIC')} />
            Public: anyone with the link
          </label>
          <label className="checkbox">
            <input type="radio" name="visibility" checked={visibility === 'PRIVATE'} onChange={() => setVisibility('PRIVATE')} />
            Private: only you
          </label>
        </fieldset>
      )}
      {canShare && (
        <fieldset>
          <legend>Password</legend>
          {file.hasPassword && (
            <label className="checkbox">
              <input type="radio" name="password-mode" checked={passwordMode === 'keep'} onChange={() => setPasswordMode('keep')} />
              Keep the current password
            </label>
          )}
          <label className="checkbox">
            <input type="radio" name="password-mode" checked={passwordMode === 'set'} onChange={() => setPasswordMode('set')} />
            {file.hasPassword ? 'Change the password' : 'Protect with a password'}
          </label>
          {passwordMode === 'set' && (
            <label>
              New password
              <input type="password" value={password} onChange={(e) => setPassword(e.target.value)} required autoComplete="new-password" maxLength={1024} />
            </label>
          )}
          <label className="checkbox">
            <input type="radio" name="password-mode" checked={passwordMode === 'remove'} onChange={() => setPasswordMode('remove')} />
            No password
          </label>
        </fieldset>
      )}
      {expiryActions.length > 0 && (
        <fieldset>
          <legend>Expiry</legend>
          <label>
            Expires at <span className="muted">(empty: never)</span>
            <input type="datetime-local" ref={expiryField} value={expires} onChange={(e) => setExpires(e.target.value)} />
          </label>
          {expires && (
            <label>
              Then
              <select value={expiryAction} onChange={(e) => {
                  setExpiryAction(e.target.value as 'DELETE' | 'SET_PRIVATE');
                  setActionTouched(true);
                }}>
                {(expiryActions.includes('DELETE') || file.expiryAction === 'DELETE') && <option value="DELETE">Delete the file</option>}
                {(expiryActions.includes('SET_PRIVATE') || file.expiryAction === 'SET_PRIVATE') && <option value="SET_PRIVATE">Make it private</option>}
              </select>
            </label>
          )}
          {expires && (
            <button
              type="button"
              className="link-button"
              onClick={() => {
                setExpires('');
                // The button goes with the expiry: the focus stays in the dialog, on the emptied field.
                expiryField.current?.focus();
              }}
            >
              Remove the expiry
            </button>
          )}
        </fieldset>
      )}
      {can('folders.manage') && (
        <label>
          Folder
          <select value={folderId} onChange={(e) => setFolderId(e.target.value)}>
            <option value="">Unfiled</option>
            <FolderOptions folders={folders} />
          </select>
        </label>
      )}
      {can('tags.manage') && tags.length > 0 && (
        <fieldset>
          <legend>Tags</legend>
          <div className="checkbox-grid">
            {tags.map((tag) => (
              <label key={tag.id} className="checkbox">
                <input type="checkbox" checked={tagIds.includes(tag.id)} onChange={(e) => setTagIds((ids) => (e.target.checked ? [...ids, tag.id] : ids.filter((id) => id !== tag.id)))} />
                {tag.name}
              </label>
            ))}
          </div>
        </fieldset>
      )}
      {isImage(file) && file.ocrStatus !== 'unsupported' && <RecognisedText file={file} />}
    </FormDialog>
  );
}
