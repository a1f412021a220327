import { z } from 'zod';

// C0 and C1 controls, DEL, and the line and paragraph separators: invisible in every list, a line
// break in some, and a nuisance in shell scripts.
const noControlCharacters = /^[^\u0000-\u001f\u007f-\u009f\u2028\u2029]*$/;
// Something to see: not only spaces, invisible format characters (zero-width space, joiners,
// direction marks), combining marks with nothing to combine with, or the blank letters (Hangul
// fillers, the blank braille pattern), which JavaScript's trim leaves and every list shows as an
// empty name.
const somethingVisible = /[^\p{White_Space}\p{Cf}\p{M}\u115f\u1160\u2800\u3164\uffa0]/u;

/** Whether `text` shows anything at all (see `somethingVisible`): file names are held to it too. */
export const hasVisibleCharacter = (text: string): boolean => somethingVisible.test(text);

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
    .refine((name) => name.isWellFormed(), { message: 'must be valid Unicode text' })
    .regex(noControlCharacters, { message: 'must not contain control characters' })
    .regex(somethingVisible, { message: 'must contain a visible character' });
}

/**
 * A note beside something (an invite's "who it is for"): like a display name, but it may be left
 * empty, and an empty or blank one is no note at all.
 */
export function noteSchema(max: number) {
  const length = { message: `must be at most ${max} characters` };
  return z
    .string()
    .trim()
    .max(max, length)
    .refine((note) => note.isWellFormed(), { message: 'must be valid Unicode text' })
    .regex(noControlCharacters, { message: 'must not contain control characters' })
    .transform((note) => (hasVisibleCharacter(note) ? note : null));
}
