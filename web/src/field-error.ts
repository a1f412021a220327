/**
 * An API message about one field (`body.currentPassword: must be at least 8 characters`, or without
 * the `body.` its handlers' own checks leave off: `expiresAt: must be in the future`): the field's
 * name and what is wrong, or null.
 */
export function fieldError(message: string): { field: string; problem: string } | null {
  const match = /^(?:(?:body|querystring|params)\.)?([A-Za-z][\w.]*): (.+)$/s.exec(message);
  return match ? { field: match[1]!, problem: match[2]! } : null;
}
