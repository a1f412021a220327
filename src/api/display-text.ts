/**
 * Text as shown to people, shared by the server's pages and the web app. Names Hoard did not make
 * (an archive's entries, written by whoever made the archive) may hold the Unicode direction
 * controls: the embeddings, overrides, isolates and marks, invisible themselves, which turn what
 * follows them around, so that `invoice\u202Egnp.exe` shows as "invoiceexe.png". Shown and saved
 * without them; the name itself (in the manifest, and to ask for the entry) stays as stored.
 */
const directionControls = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export const withoutDirectionControls = (text: string): string => text.replace(directionControls, '');
