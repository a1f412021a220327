import type { Folder } from '@api';

/** Folders in tree order (each followed by its subfolders) with their depth, for indented lists. */
export function folderOptions(folders: Folder[]): Array<{ folder: Folder; depth: number }> {
  const children = new Map<string | null, Folder[]>();
  const ids = new Set(folders.map((f) => f.id));
  for (const folder of folders) {
    const parent = folder.parentId !== null && ids.has(folder.parentId) ? folder.parentId : null;
    children.set(parent, [...(children.get(parent) ?? []), folder]);
  }
  const out: Array<{ folder: Folder; depth: number }> = [];
  const seen = new Set<string>();
  const walk = (parent: string | null, depth: number) => {
    for (const folder of children.get(parent) ?? []) {
      if (seen.has(folder.id)) continue;
      seen.add(folder.id);
      out.push({ folder, depth });
      walk(folder.id, depth + 1);
    }
  };
  walk(null, 0);
  return out;
}

/** "Parent / Child" path of a folder, for labels. */
export function folderPath(folders: Folder[], id: string | null): string {
  if (id === null) return 'Unfiled';
  const byId = new Map(folders.map((f) => [f.id, f]));
  const names: string[] = [];
  let current = byId.get(id);
  while (current && names.length < 40) {
    names.unshift(current.name);
    current = current.parentId ? byId.get(current.parentId) : undefined;
  }
  return names.length ? names.join(' / ') : 'Unknown folder';
}
