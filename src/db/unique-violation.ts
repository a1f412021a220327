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

/**
 * Whether a database error is a foreign-key violation (better-sqlite3 `SQLITE_CONSTRAINT_FOREIGNKEY`,
 * PostgreSQL SQLSTATE 23503): a row the statement refers to is gone. Every ID a request names is
 * checked against its account first, so this means that another request deleted it in between.
 */
export function isForeignKeyViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || !('code' in error)) return false;
  const code = (error as { code: unknown }).code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}
