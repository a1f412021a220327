import { sql, type Kysely } from 'kysely';

/**
 * Search leaves accents out (docs/decisions.md, "Listing"): "cafe" finds "Café", "lodz" finds
 * "Łódź", and invisible format characters (the joiners of emoji and words, which file names now
 * keep) match nothing of their own. This migration folds the stored names and OCR text again with
 * its own copy of that folding.
 *
 * Every row is read, a thousand at a time in the order of their IDs; only rows whose folding changed
 * (those with accents, strokes or format characters: few in most libraries) are written back, in one
 * statement per thousand, and their search entries follow through the triggers of `files`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  let after = '';
  for (;;) {
    const rows: Array<{ id: string; name: string; ocrText: string | null; searchName: string | null; searchOcr: string | null }> = await db
      .selectFrom('files')
      .select(['id', 'name', 'ocrText', 'searchName', 'searchOcr'])
      .where('id', '>', after)
      .orderBy('id')
      .limit(1000)
      .execute();
    if (rows.length === 0) break;
    const changed = [];
    for (const row of rows) {
      const searchName = foldForSearch(row.name);
      const searchOcr = row.ocrText === null ? null : foldForSearch(row.ocrText);
      if (searchName !== row.searchName || searchOcr !== row.searchOcr) changed.push(sql`(${row.id}, ${searchName}, ${searchOcr})`);
    }
    if (changed.length > 0) {
      await sql`with refolded (id, "searchName", "searchOcr") as (values ${sql.join(changed)})
        update files set "searchName" = refolded."searchName", "searchOcr" = refolded."searchOcr"
        from refolded where files.id = refolded.id`.execute(db);
    }
    after = rows[rows.length - 1]!.id;
  }
}

/**
 * A copy of the application's `foldForSearch()` (src/shared/search-text.ts) as it was when this
 * migration was written; frozen with it.
 */
export function foldForSearch(text: string): string {
  return withoutAccents(foldOnce(foldOnce(text))).replace(/[\s_]+/gu, ' ');
}

const ACCENTS = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]/g;
const PLAIN_LETTERS: Record<string, string> = { ł: 'l', ø: 'o', đ: 'd', ħ: 'h', ŧ: 't', ı: 'i', æ: 'ae', œ: 'oe' };

function withoutAccents(text: string): string {
  return text
    .normalize('NFD')
    .replace(ACCENTS, '')
    .replace(/[łøđħŧıæœ]/g, (letter) => PLAIN_LETTERS[letter]!)
    .replace(/\p{Cf}/gu, '')
    .normalize('NFC');
}

function foldOnce(text: string): string {
  return text.normalize('NFKC').toUpperCase().toLowerCase().replaceAll('ς', 'σ').replaceAll('i\u0307', 'i').normalize('NFKC');
}
