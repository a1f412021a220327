import type { Transaction } from 'kysely';
import type { Database } from './schema.ts';

/**
 * Work committed with a change, in the change's own transaction, given what the change did: the
 * administration log's record of it (docs/decisions.md, "The administration log"). Neither then
 * stands without the other, whenever the process stops.
 */
export type AlsoInTransaction<Outcome> = (trx: Transaction<Database>, outcome: Outcome) => Promise<void>;
