import { z } from 'zod';

// C0 controls and DEL: invisible in every list and a nuisance in shell scripts.
const noControlCharacters = /^[^\u0000-\u001f\u007f]*$/;
// Something to see: not only spaces and invisible format characters (zero-width space, joiners,
// direction marks), which JavaScript's trim leaves and every list shows as an empty name.
const somethingVisible = /[^\p{White_Space}\p{Cf}]/u;

/** An account's name: 1 to 100 characters, wherever it is set or made (from the email address). */
export const ACCOUNT_NAME_LENGTH = 100;

/**
 * A display name (folders, tags, profiles, roles, accounts, tokens, webhooks): surrounding
 * whitespace trimmed, 1 to `max` characters (code points), no control characters, not invisible.
 */
export function nameSchema(max: number) {
  const length = { message: `must be 1 to ${max} characters` };
  return z
    .string()
    .trim()
    .min(1, length)
    .max(max, length)
    .regex(noControlCharacters, { message: 'must not contain control characters' })
    .regex(somethingVisible, { message: 'must contain a visible character' });
}
