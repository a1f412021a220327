import { useEffect, useRef, useState } from 'react';
import { del, get, patch, post, put } from '../api.ts';
import { formatDateTime, fromLocalInput, toLocalInput } from '../format.ts';
import { useSession } from '../session.tsx';
import { Badge, CopyButton, Dialog, Empty, ErrorNote, FormDialog, Loading, TabbedPage, useAction, useConfirm, useFocusAfterRemoval, useLoad, useSubmit, useToast } from '../ui.tsx';
import type { Folder, FolderShare, ProfileOptions, SharedFolder, Tag, UploadProfile } from '@api';
import { folderOptions } from './folder-tree.ts';
import { FolderOptions } from './FolderOptions.tsx';
import { describeOptions, OptionsEditor } from './UploadOptions.tsx';
import { Icon } from '../icons.tsx';

export function OrganisationPage() {
  const { can } = useSession();
  return (
    <TabbedPage
      title="Organisation"
      tabs={[
        { id: 'profiles', label: 'Upload profiles', allowed: can('uploadProfiles.manage'), render: () => <ProfilesSection /> },
        { id: 'folders', label: 'Folders', allowed: can('folders.manage'), render: () => <FoldersSection /> },
        { id: 'tags', label: 'Tags', allowed: can('tags.manage'), render: () => <TagsSection /> },
      ]}
    />
  );
}

// ---------------------------------------------------------------------------------------------

function ProfilesSection() {
  const { can } = useSession();
  const run = useAction();
  const confirm = useConfirm();
  const profiles = useLoad(() => get<{ profiles: UploadProfile[] }>('/api/upload-profiles').then((d) => d.profiles), []);
  const tags = useLoad(() => get<{ tags: Tag[] }>('/api/files/tags').then((d) => d.tags), []);
  const [editing, setEditing] = useState<UploadProfile | 'new' | null>(null);
  const keepFocus = useFocusAfterRemoval(profiles.data);

  return (
    <div className="stack-lg">
      <p className="muted">A profile is a saved set of upload options. Uploads use your default profile unless they pick another one or none; tokens can be bound to one.</p>
      <div>
        <button type="button" className="primary" onClick={() => setEditing('new')}>
          New profile
        </button>
      </div>
      <ErrorNote error={profiles.error} />
      {profiles.loading && !profiles.data && <Loading />}
      {profiles.data && profiles.data.length === 0 && <Empty>No upload profiles yet.</Empty>}
      {profiles.data && profiles.data.length > 0 && (
        <ul className="card-list">
          {profiles.data.map((profile) => (
            <li key={profile.id} className="card" data-testid="profile-item" data-item-key={profile.id}>
              <div className="card-row">
                <div>
                  <h2 className="card-title">
                    {profile.name} {profile.isDefault && <Badge kind="ok">Default</Badge>}
                  </h2>
                  <p className="muted small">{describeOptions(profile.options, tags.data ?? [])}</p>
                </div>
                <span className="row-actions">
                  {can('profile.update') && (
                    <button
                      type="button"
                      className="small"
                      onClick={async () => {
                        if (await run(() => patch('/api/account', { defaultProfileId: profile.isDefault ? null : profile.id }), profile.isDefault ? 'No default profile' : `${profile.name} is now the default`)) void profiles.reload();
                      }}
                    >
                      {profile.isDefault ? 'Unset default' : 'Make default'}
                    </button>
                  )}
                  <button type="button" className="small" onClick={() => setEditing(profile)} aria-label={`Edit profile ${profile.name}`}>
                    Edit
                  </button>
                  <button
                    type="button"
                    className="small danger"
                    aria-label={`Delete profile ${profile.name}`}
                    data-action="delete"
                    onClick={async () => {
                      if (!(await confirm('Delete profile', `Delete “${profile.name}”? Tokens bound to it stay bound and their uploads fail until they are replaced.`))) return;
                      if (await run(() => del(`/api/upload-profiles/${encodeURIComponent(profile.id)}`), 'Profile deleted')) {
                        keepFocus();
                        void profiles.reload();
                      }
                    }}
                  >
                    Delete
                  </button>
                </span>
              </div>
            </li>
          ))}
        </ul>
      )}
      {editing && (
        <ProfileDialog
          profile={editing === 'new' ? null : editing}
          tags={tags.data ?? []}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            void profiles.reload();
          }}
        />
      )}
    </div>
  );
}

function ProfileDialog({ profile, tags, onClose, onSaved }: { profile: UploadProfile | null; tags: Tag[]; onClose: () => void; onSaved: () => void }) {
  const toast = useToast();
  const [name, setName] = useState(profile?.name ?? '');
  const [options, setOptions] = useState<ProfileOptions>(profile?.options ?? {});
  const submit = async () => {
    if (profile) await patch(`/api/upload-profiles/${encodeURIComponent(profile.id)}`, { name: name.trim(), options });
    else {
      await post('/api/upload-profiles', { name: name.trim(), options });
      toast(`Profile ${name.trim()} created`);
    }
    onSaved();
  };
  return (
    <FormDialog title={profile ? `Edit ${profile.name}` : 'New upload profile'} onClose={onClose} onSubmit={submit}>
      <label>
        Name
        <input type="text" value={name} onChange={(e) => setName(e.target.value)} required maxLength={80} />
      </label>
      <OptionsEditor value={options} onChange={setOptions} tags={tags} />
    </FormDialog>
  );
}

// ---------------------------------------------------------------------------------------------

function FoldersSection() {
  const run = useAction();
  const toast = useToast();
  const confirm = useConfirm();
  const folders = useLoad(() => get<{ folders: Folder[] }>('/api/folders').then((d) => d.folders), []);
  const [name, setName] = useState('');
  const [parentId, setParentId] = useState('');
  const [editing, setEditing] = useState<Folder | null>(null);
  const [sharing, setSharing] = useState<Folder | null>(null);
  // Which folders anyone with an address can see, marked in the tree.
  const shares = useLoad(() => get<{ shares: SharedFolder[] }>('/api/folder-shares').then((d) => new Set(d.shares.map((share) => share.folderId))), []);
  const tree = folderOptions(folders.data ?? []);
  // The tree is drawn as one flat list in tree order, so the next row is the next one shown (a
  // deleted folder's first subfolder, which moves up in its place), whatever its depth.
  const keepFocus = useFocusAfterRemoval(folders.data);

  const { submit: create, error } = useSubmit(async () => {
    await post('/api/folders', { name: name.trim(), parentId: parentId || null });
    toast(`Folder ${name.trim()} created`);
    setName('');
    void folders.reload();
  });

  return (
    <div className="stack-lg">
      <form className="card stack" onSubmit={create} aria-label="New folder">
        <h2>New folder</h2>
        <div className="inline-form">
          <label className="grow">
            Name
            <input type="text" value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} name="folder-name" data-field="name" />
          </label>
          <label>
            Inside
            <select value={parentId} onChange={(e) => setParentId(e.target.value)}>
              <option value="">Top level</option>
              <FolderOptions folders={folders.data ?? []} />
            </select>
          </label>
          <button type="submit" className="primary">
            Create folder
          </button>
        </div>
        <ErrorNote error={error} />
      </form>
      <ErrorNote error={folders.error} />
      {folders.loading && !folders.data && <Loading />}
      {folders.data && folders.data.length === 0 && <Empty>No folders yet.</Empty>}
      {tree.length > 0 && (
        <ul className="tree" aria-label="Folders">
          {tree.map(({ folder, depth }) => (
            <li key={folder.id} style={{ paddingInlineStart: `${0.75 + depth * 1.5}rem` }} className="tree-item" data-item-key={folder.id}>
              <span className="tree-name">
                <Icon name="folder" />
                <span>
                  {folder.name}
                  {shares.data?.has(folder.id) && (
                    <>
                      {' '}
                      <Badge kind="ok">Shared</Badge>
                    </>
                  )}
                </span>
              </span>
              <span className="row-actions">
                <button type="button" className="small" onClick={() => setEditing(folder)} aria-label={`Rename or move ${folder.name}`}>
                  Rename or move
                </button>
                <button type="button" className="small" onClick={() => setSharing(folder)} aria-label={`Share folder ${folder.name}`}>
                  Share
                </button>
                <button
                  type="button"
                  className="small danger"
                  aria-label={`Delete folder ${folder.name}`}
                  data-action="delete"
                  onClick={async () => {
                    if (!(await confirm('Delete folder', `Delete “${folder.name}”? Its files become unfiled and its subfolders move up one level; nothing else is deleted.`))) return;
                    if (await run(() => del(`/api/folders/${encodeURIComponent(folder.id)}`), 'Folder deleted')) {
                      keepFocus();
                      void folders.reload();
                    }
                  }}
                >
                  Delete
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
      {sharing && (
        <FolderShareDialog
          folder={sharing}
          onClose={() => {
            setSharing(null);
            void shares.reload();
          }}
        />
      )}
      {editing && (
        <FolderDialog
          folder={editing}
          folders={folders.data ?? []}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            void folders.reload();
          }}
        />
      )}
    </div>
  );
}

/**
 * A folder's public address (docs/decisions.md, "Sharing a folder"): made, copied or ended here.
 * The page lists the folder's public files only, which the dialog says before anything is shared.
 */
function FolderShareDialog({ folder, onClose }: { folder: Folder; onClose: () => void }) {
  const { can } = useSession();
  const run = useAction();
  const confirm = useConfirm();
  const address = `/api/folders/${encodeURIComponent(folder.id)}/share`;
  const share = useLoad(() => get<{ share: FolderShare | null }>(address).then((d) => d.share), [address]);
  // The button pressed goes with the state it changed: the keyboard's focus goes to what comes
  // instead (the address once shared, Share once stopped), not to the page behind the dialog.
  const body = useRef<HTMLDivElement>(null);
  const moveFocus = useRef(false);
  useEffect(() => {
    if (!moveFocus.current || share.data === undefined) return;
    moveFocus.current = false;
    body.current?.querySelector<HTMLElement>('[data-autofocus]')?.focus();
  }, [share.data]);
  // When the address stops working: chosen before sharing, or changed (emptied: never) after.
  const [ends, setEnds] = useState('');
  const [subfolders, setSubfolders] = useState(false);
  useEffect(() => {
    if (share.data === undefined) return;
    setEnds(toLocalInput(share.data?.expiresAt));
    if (share.data !== null) setSubfolders(share.data.subfolders);
  }, [share.data]);
  const start = async () => {
    if (!(await run(() => put(address, { expiresAt: fromLocalInput(ends, 'Stops working'), subfolders }), 'Folder shared'))) return;
    moveFocus.current = true;
    void share.reload();
  };
  // Changed on a shared folder, the choice is saved at once: the page lists what it says.
  const listSubfolders = async (on: boolean) => {
    setSubfolders(on);
    if (!(await run(() => put(address, { subfolders: on }), on ? 'The page now lists the subfolders’ public files too' : 'The page now lists this folder’s files only'))) setSubfolders(!on);
    void share.reload();
  };
  const subfoldersBox = (onChange: (on: boolean) => void) => (
    <label className="checkbox">
      <input type="checkbox" checked={subfolders} onChange={(e) => onChange(e.target.checked)} />
      <span>
        Include subfolders <span className="muted small">(their public files, each marked with its subfolder)</span>
      </span>
    </label>
  );
  const saveEnd = async () => {
    if (!(await run(() => put(address, { expiresAt: fromLocalInput(ends, 'Stops working') }), ends ? 'End date saved' : 'End date removed: the address works until sharing stops'))) return;
    void share.reload();
  };
  const stop = async () => {
    if (!(await confirm('Stop sharing', `Stop sharing “${folder.name}”? Its address stops working; each file keeps its own link.`, 'Stop sharing'))) return;
    if (!(await run(() => del(address), 'Folder no longer shared'))) return;
    moveFocus.current = true;
    void share.reload();
  };
  return (
    <Dialog open title={`Share ${folder.name}`} onClose={onClose}>
      <div className="stack" ref={body}>
        <p className="muted">
          Anyone with the folder's address sees its public files, newest first, each with its own link, and its subfolders' too if you include them. Private,
          password-protected and expired files are not listed: sharing the folder makes nothing public that is not public already.
        </p>
        <ErrorNote error={share.error} />
        {share.loading && share.data === undefined && <Loading />}
        {share.data === null && (
          can('files.share') ? (
            <>
              <label>
                Stops working <span className="muted">(optional)</span>
                <input type="datetime-local" value={ends} onChange={(e) => setEnds(e.target.value)} />
              </label>
              {subfoldersBox(setSubfolders)}
              <div className="actions-left">
                <button type="button" className="primary" onClick={start} data-autofocus>
                  Share this folder
                </button>
              </div>
            </>
          ) : (
            <p>Your role does not allow sharing files with anyone, so this folder cannot be shared.</p>
          )
        )}
        {share.data && (
          <>
            <label>
              Public address
              <input type="text" readOnly value={share.data.url} onFocus={(e) => e.currentTarget.select()} data-autofocus />
            </label>
            <p className="small" data-testid="share-ends">
              {share.data.expiresAt ? `Works until ${formatDateTime(share.data.expiresAt)}.` : 'Works until you stop sharing.'}
            </p>
            {can('files.share') && subfoldersBox((on) => void listSubfolders(on))}
            {can('files.share') && (
              <div className="inline-form">
                <label>
                  Stops working <span className="muted">(empty: never)</span>
                  <input type="datetime-local" value={ends} onChange={(e) => setEnds(e.target.value)} />
                </label>
                {/* Marked, not disabled, while unchanged: disabled once saved, it would drop the focus it had. */}
                <button type="button" onClick={() => ends !== toLocalInput(share.data?.expiresAt) && void saveEnd()} aria-disabled={ends === toLocalInput(share.data.expiresAt)}>
                  Save
                </button>
              </div>
            )}
            <div className="actions-left">
              <CopyButton text={share.data.url} label="Copy address" />
              <a className="button" href={share.data.url} target="_blank" rel="noopener noreferrer">
                Open
              </a>
              <button type="button" className="danger" onClick={stop}>
                Stop sharing
              </button>
            </div>
          </>
        )}
      </div>
    </Dialog>
  );
}

function FolderDialog({ folder, folders, onClose, onSaved }: { folder: Folder; folders: Folder[]; onClose: () => void; onSaved: () => void }) {
  const [name, setName] = useState(folder.name);
  const [parentId, setParentId] = useState(folder.parentId ?? '');
  // A folder cannot move into itself or below itself.
  const below = new Set<string>([folder.id]);
  for (const { folder: f } of folderOptions(folders)) if (f.parentId && below.has(f.parentId)) below.add(f.id);
  const submit = async () => {
    await patch(`/api/folders/${encodeURIComponent(folder.id)}`, { name: name.trim(), parentId: parentId || null });
    onSaved();
  };
  return (
    <FormDialog title={`Rename or move ${folder.name}`} onClose={onClose} onSubmit={submit}>
      <label>
        Name
        <input type="text" value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} />
      </label>
      <label>
        Inside
        <select value={parentId} onChange={(e) => setParentId(e.target.value)}>
          <option value="">Top level</option>
          <FolderOptions folders={folders} except={below} />
        </select>
      </label>
    </FormDialog>
  );
}

// ---------------------------------------------------------------------------------------------

function TagsSection() {
  const run = useAction();
  const toast = useToast();
  const confirm = useConfirm();
  const tags = useLoad(() => get<{ tags: Tag[] }>('/api/tags').then((d) => d.tags), []);
  const [name, setName] = useState('');
  const [renaming, setRenaming] = useState<{ tag: Tag; name: string } | null>(null);
  const keepFocus = useFocusAfterRemoval(tags.data);

  const { submit: create, error } = useSubmit(async () => {
    await post('/api/tags', { name: name.trim() });
    toast(`Tag ${name.trim()} created`);
    setName('');
    void tags.reload();
  });

  return (
    <div className="stack-lg">
      <form className="card stack" onSubmit={create} aria-label="New tag">
        <h2>New tag</h2>
        <div className="inline-form">
          <label className="grow">
            Name
            <input type="text" value={name} onChange={(e) => setName(e.target.value)} required maxLength={50} name="tag-name" data-field="name" />
          </label>
          <button type="submit" className="primary">
            Create tag
          </button>
        </div>
        <ErrorNote error={error} />
      </form>
      <ErrorNote error={tags.error} />
      {tags.loading && !tags.data && <Loading />}
      {tags.data && tags.data.length === 0 && <Empty>No tags yet.</Empty>}
      {tags.data && tags.data.length > 0 && (
        <ul className="tag-list" aria-label="Tags">
          {tags.data.map((tag) => (
            <li key={tag.id} className="tag-item" data-item-key={tag.id}>
              <span className="tag">#{tag.name}</span>
              <span className="row-actions">
                <button type="button" className="small" aria-label={`Rename tag ${tag.name}`} onClick={() => setRenaming({ tag, name: tag.name })}>
                  Rename
                </button>
                <button
                  type="button"
                  className="small danger"
                  aria-label={`Delete tag ${tag.name}`}
                  data-action="delete"
                  onClick={async () => {
                    if (!(await confirm('Delete tag', `Delete #${tag.name}? It comes off every file and profile.`))) return;
                    if (await run(() => del(`/api/tags/${encodeURIComponent(tag.id)}`), 'Tag deleted')) {
                      keepFocus();
                      void tags.reload();
                    }
                  }}
                >
                  Delete
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
      {renaming && (
        <FormDialog
          title={`Rename #${renaming.tag.name}`}
          onClose={() => setRenaming(null)}
          onSubmit={async () => {
            await patch(`/api/tags/${encodeURIComponent(renaming.tag.id)}`, { name: renaming.name.trim() });
            setRenaming(null);
            void tags.reload();
          }}
        >
          <label>
            Name
            <input type="text" value={renaming.name} onChange={(e) => setRenaming({ ...renaming, name: e.target.value })} required maxLength={50} />
          </label>
        </FormDialog>
      )}
    </div>
  );
}
