import type { Folder, UploadProfile } from '@api';
import { folderOptions } from './folder-tree.ts';

/** The folders as `<option>`s in tree order, each indented by its depth, leaving out `except`. */
export function FolderOptions({ folders, except }: { folders: Folder[]; except?: ReadonlySet<string> }) {
  return (
    <>
      {folderOptions(folders)
        .filter(({ folder }) => !except?.has(folder.id))
        .map(({ folder, depth }) => (
          <option key={folder.id} value={folder.id}>
            {'\u00a0\u00a0'.repeat(depth)}
            {folder.name}
          </option>
        ))}
    </>
  );
}

/** The upload profiles as `<option>`s, by their names. */
export function UploadProfileOptions({ profiles }: { profiles: UploadProfile[] | undefined }) {
  return (
    <>
      {profiles?.map((profile) => (
        <option key={profile.id} value={profile.id}>
          {profile.name}
        </option>
      ))}
    </>
  );
}
