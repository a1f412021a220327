import type { ArchiveEntry } from '@api';

export type { ArchiveEntry };

/**
 * An archive's manifest as a tree. The manifest is a flat list of paths as stored (contract §9): a
 * directory may be listed or only implied by its files' paths, and a path may start with `/` or hold
 * empty segments, so the tree is built from the path segments and every directory on the way is
 * made when missing.
 */
export interface DirectoryNode {
  name: string;
  /** Segments joined by `/`: the key of the expanded state (not an entry path). */
  key: string;
  depth: number;
  /** The directory's own entry, when the archive lists one. */
  entry: ArchiveEntry | null;
  directories: DirectoryNode[];
  files: ArchiveEntry[];
  /** Every file entry below, at any depth. */
  fileCount: number;
  size: number;
  /** The paths of the file entries below that can be extracted (not encrypted). */
  selectable: string[];
}

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

/** The entry's name: its last path segment (the whole path when it has none). */
export const entryName = (path: string) => path.split('/').filter(Boolean).pop() ?? path;

export function buildTree(entries: ArchiveEntry[]): DirectoryNode {
  const root: DirectoryNode = { name: '', key: '', depth: 0, entry: null, directories: [], files: [], fileCount: 0, size: 0, selectable: [] };
  const byKey = new Map<string, DirectoryNode>([['', root]]);
  const directory = (segments: string[]): DirectoryNode => {
    let node = root;
    for (let i = 0; i < segments.length; i++) {
      const key = segments.slice(0, i + 1).join('/');
      let next = byKey.get(key);
      if (!next) {
        next = { name: segments[i]!, key, depth: i + 1, entry: null, directories: [], files: [], fileCount: 0, size: 0, selectable: [] };
        byKey.set(key, next);
        node.directories.push(next);
      }
      node = next;
    }
    return node;
  };
  for (const entry of entries) {
    const segments = entry.path.split('/').filter(Boolean);
    if (entry.directory) {
      directory(segments).entry = entry;
      continue;
    }
    const parents = segments.slice(0, -1);
    directory(parents).files.push(entry);
    // Counts and selectable paths go to every directory on the way up, the root included.
    for (let i = 0; i <= parents.length; i++) {
      const node = byKey.get(parents.slice(0, i).join('/'))!;
      node.fileCount += 1;
      node.size += entry.size;
      if (!entry.encrypted) node.selectable.push(entry.path);
    }
  }
  for (const node of byKey.values()) {
    node.directories.sort((a, b) => collator.compare(a.name, b.name));
    node.files.sort((a, b) => collator.compare(entryName(a.path), entryName(b.path)));
  }
  return root;
}

/** The keys of every directory of the tree (for "Expand all"). */
export function directoryKeys(node: DirectoryNode, out: string[] = []): string[] {
  for (const child of node.directories) {
    out.push(child.key);
    directoryKeys(child, out);
  }
  return out;
}

/**
 * The selected paths in request bodies that each stay under the routes' 16 KiB body limit
 * (contract §9), so a large selection is extracted in several requests instead of failing with 413.
 */
export function batchPaths(paths: string[], folderId: string | null, limit = 15 * 1024): string[][] {
  const encoder = new TextEncoder();
  const overhead = encoder.encode(JSON.stringify({ paths: [], folderId })).length;
  const batches: string[][] = [];
  let current: string[] = [];
  let size = overhead;
  for (const path of paths) {
    const cost = encoder.encode(JSON.stringify(path)).length + 1;
    if (current.length > 0 && size + cost > limit) {
      batches.push(current);
      current = [];
      size = overhead;
    }
    current.push(path);
    size += cost;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
