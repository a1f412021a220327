import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Search folding made closed under case (docs/decisions.md, "Listing"): the folding of 0006-listing
 * left some text in a form that folding again, or folding its other case, changes. The capital
 * sharp s "ẞ" folded to "ß", while "ß" and "SS" fold to "ss", so "GROẞE" was not found by "große"
 * or "GROSSE"; eight Greek letters with dialytika and tonos (U+0390, U+03B0, U+1FD2, U+1FD3,
 * U+1FD7, U+1FE2, U+1FE3, U+1FE7) folded to a decomposed form that their capitals did not. The
 * application now folds twice, each time ending in NFKC; this migration folds the stored names and
 * OCR text again with its own copy of that folding.
 *
 * Only text outside printable ASCII can fold differently (ASCII folds to itself under both), so
 * only rows whose name or OCR text holds such a character are read; a row is written only when its
 * folding changed, and its search entries follow through the triggers a rename fires.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const beyondAscii = (column: string) =>
    postgres ? sql`${sql.ref(column)} ~ '[^\t\n\r -~]'` : sql`${sql.ref(column)} glob '*[^' || char(9, 10, 13) || ' -~]*'`;
  let after = '';
  for (;;) {
    const rows: Array<{ id: string; name: string; ocrText: string | null; searchName: string | null; searchOcr: string | null }> = await db
      .selectFrom('files')
      .select(['id', 'name', 'ocrText', 'searchName', 'searchOcr'])
      .where('id', '>', after)
      .where(sql<boolean>`(${beyondAscii('name')} or ${beyondAscii('ocrText')})`)
      .orderBy('id')
      .limit(1000)
      .execute();
    if (rows.length === 0) break;
    for (const row of rows) {
      const searchName = foldForSearch(row.name);
      const searchOcr = row.ocrText === null ? null : foldForSearch(row.ocrText);
      if (searchName === row.searchName && searchOcr === row.searchOcr) continue;
      await db.updateTable('files').set({ searchName, searchOcr }).where('id', '=', row.id).execute();
    }
    after = rows[rows.length - 1]!.id;
  }
}

/**
 * A copy of the application's `foldForSearch()` (src/shared/search-text.ts) as it was when this
 * migration was written; frozen with it.
 */
export function foldForSearch(text: string): string {
  return foldOnce(foldOnce(text));
}

function foldOnce(text: string): string {
  return text.normalize('NFKC').toUpperCase().toLowerCase().replaceAll('ς', 'σ').replaceAll('i\u0307', 'i').normalize('NFKC');
}
