// The archive dialogs' contents, loaded on first use (pages/ArchiveDialogs.tsx): most visits to the
// Files page never open them, so they stay out of the main bundle.
export { ArchiveContents } from './ArchiveContents.tsx';
export { CreateArchiveForm } from './CreateArchive.tsx';
