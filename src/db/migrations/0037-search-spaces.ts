import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Search folds white space and underscores alike (docs/decisions.md, "Listing"): a stored name has
 * `_` where its uploader typed a space (`data sheet.csv` is kept as `data_sheet.csv`), so a search
 * for "data sheet" found nothing, and one for "data_sheet" missed the same words in recognised text.
 * The folding now ends by turning every run of white space and underscores into one space; this
 * migration folds the stored names and OCR text again with its own copy of that folding, and makes
 * the backstop for rows written without the search columns (manual SQL, fixtures) do the same as far
 * as each database's functions can.
 *
 * Every row is read (most names hold an underscore, all recognised text a space), a thousand at a
 * time in the order of their IDs; the rows whose folding changed are written back in one statement
 * per thousand, and their search entries follow through the triggers of `files`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  if (postgres) {
    await sql`
      create or replace function hoard_files_search_backstop() returns trigger language plpgsql as $$
      begin
        if new."searchName" is null then new."searchName" := regexp_replace(lower(new.name), '[[:space:]_]+', ' ', 'g'); end if;
        if new."searchOcr" is null and new."ocrText" is not null then new."searchOcr" := regexp_replace(lower(new."ocrText"), '[[:space:]_]+', ' ', 'g'); end if;
        return new;
      end $$`.execute(db);
  } else {
    // SQLite has no regular expressions: underscores, tabs and line breaks become spaces, runs of
    // them stay runs. The application always fills the columns itself.
    const spaced = (column: string) => sql.raw(`replace(replace(replace(replace(lower(new.${column}), '_', ' '), char(9), ' '), char(10), ' '), char(13), ' ')`);
    await sql`drop trigger if exists files_search_backstop`.execute(db);
    await sql`create trigger files_search_backstop after insert on files
      when new.searchName is null or (new.ocrText is not null and new.searchOcr is null) begin
      update files set searchName = coalesce(new.searchName, ${spaced('name')}), searchOcr = coalesce(new.searchOcr, ${spaced('ocrText')}) where id = new.id;
    end`.execute(db);
  }

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
  return foldOnce(foldOnce(text)).replace(/[\s_]+/gu, ' ');
}

function foldOnce(text: string): string {
  return text.normalize('NFKC').toUpperCase().toLowerCase().replaceAll('ς', 'σ').replaceAll('i\u0307', 'i').normalize('NFKC');
}
