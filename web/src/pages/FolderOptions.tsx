import type { Folder } from '@api';
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
