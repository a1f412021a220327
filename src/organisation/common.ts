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

export const iso = (ms: number) => new Date(Number(ms)).toISOString();
