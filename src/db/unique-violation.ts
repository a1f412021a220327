/**
 * Whether a database error is a unique-constraint violation, on either dialect: better-sqlite3
 * reports `SQLITE_CONSTRAINT_UNIQUE` (or `SQLITE_CONSTRAINT_PRIMARYKEY`), PostgreSQL SQLSTATE 23505.
 * A statement that failed this way changed nothing, so the caller may retry with new values.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || !('code' in error)) return false;
  const code = (error as { code: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
