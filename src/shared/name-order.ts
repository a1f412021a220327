// The one order and the one sameness of the names people give things (folders, tags, profiles,
// roles), wherever those things are listed: in their own list or inside another record (a file's
// tags, an account's roles). Sorted here rather than by the database, whose order follows its
// collation: code points on SQLite, the database's locale on PostgreSQL.

// Natural, case- and accent-insensitive order ("tag 2" before "tag 10"); exact ties fall back to the
// code points and then the ID, so the order is total and the same on SQLite and PostgreSQL.
const collator = new Intl.Collator('en', { sensitivity: 'base', numeric: true });

export function byName(a: { name: string; id: string }, b: { name: string; id: string }): number {
  return collator.compare(a.name, b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

// Case-insensitive but accent-sensitive: "Work" and "work" are the same name, "resume" and "résumé" not.
const sameNameCollator = new Intl.Collator('en', { sensitivity: 'accent' });

export function sameName(a: string, b: string): boolean {
  return sameNameCollator.compare(a, b) === 0;
}

/** Roles: the built-in ones (those with a system key) first, then by name. */
export function rolesInOrder(a: { name: string; id: string; systemKey: string | null }, b: { name: string; id: string; systemKey: string | null }): number {
  return Number(b.systemKey !== null) - Number(a.systemKey !== null) || byName(a, b);
}
