import { z } from 'zod';
import { invalid } from '../errors.ts';


/**
 * Parses a value the HTTP layer has usually validated already, so that the domain holds its own rules
 * when called from elsewhere. The error names the field as the HTTP layer would, without `body.`.
 */
export function parseField<S extends z.ZodType>(schema: S, value: unknown, field: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const where = [field, ...issue.path.map(String)].join('.');
  if (issue.code === 'unrecognized_keys') throw invalid(`${where}: unknown field ${issue.keys.map((k) => `"${k}"`).join(', ')}`);
  throw invalid(`${where}: ${issue.message}`);
}

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

export const iso = (ms: number) => new Date(Number(ms)).toISOString();
