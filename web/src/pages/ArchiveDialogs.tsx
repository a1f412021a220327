import { useEffect, useState } from 'react';
import type { FileRecord, Folder } from '@api';
import { archiveLimits } from '@api/vocabulary.ts';
import { Dialog, ErrorNote, Loading, useDialogStartOnArrival } from '../ui.tsx';

/** The most files one archive may be made of (contract §9). */
export const ARCHIVE_FILE_LIMIT = archiveLimits.files;

type ArchiveModule = typeof import('./archive/index.ts');

/**
 * Loads the archive UI on first use. The dialog itself opens at once, so focus moves in while the
 * code arrives; a failed load (e.g. the app was redeployed meanwhile) is said in the dialog instead
 * of taking the page down.
 */
function useArchiveModule(): { module: ArchiveModule | null; error: unknown } {
  const [module, setModule] = useState<ArchiveModule | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    import('./archive/index.ts').then(
      (loaded) => live && setModule(loaded),
      () => live && setError(new Error('This part of the app could not be loaded: reload the page and try again.')),
    );
    return () => {
      live = false;
    };
  }, []);
  return { module, error };
}

export function ArchiveContentsDialog({ file, folders, onClose, onExtracted }: { file: FileRecord; folders: Folder[]; onClose: () => void; onExtracted: () => void }) {
  const { module, error } = useArchiveModule();
  // The dialog opens before its code arrives, on its Close button: the first field takes over then.
  const arrived = useDialogStartOnArrival();
  return (
    <Dialog open title={`Contents of ${file.name}`} onClose={onClose} wide>
      <ErrorNote error={error} />
      {module ? (
        <div ref={arrived}>
          <module.ArchiveContents file={file} folders={folders} onExtracted={onExtracted} />
        </div>
      ) : (
        !error && <Loading />
      )}
    </Dialog>
  );
}

export function CreateArchiveDialog({ files, folders, onClose, onCreated }: { files: FileRecord[]; folders: Folder[]; onClose: () => void; onCreated: () => void }) {
  const { module, error } = useArchiveModule();
  // The dialog opens before its code arrives, on its Close button: the first field takes over then.
  const arrived = useDialogStartOnArrival();
  return (
    <Dialog open title="Create archive" onClose={onClose}>
      <ErrorNote error={error} />
      {module ? (
        <div ref={arrived}>
          <module.CreateArchiveForm files={files} folders={folders} onCreated={onCreated} onClose={onClose} />
        </div>
      ) : (
        !error && <Loading />
      )}
    </Dialog>
  );
}
