import type { Db } from '../db/database.ts';
import type { AuditPage } from '../api/admin.ts';

export interface AuditQuery {
  /** Only this account's records. */
  userId: string | null;
  /** Only this named token's records. */
  tokenId: string | null;
  /** Records older than this one (the previous page's `nextBefore`). */
  before: string | null;
  limit: number;
}

/**
 * GET /api/audit: the records of token- and legacy-authorized requests across the instance, newest
 * first (record IDs are time-ordered), a page at a time. Never a secret: records hold the token's
 * ID, not its secret (spec, rule 11).
 */
export async function listAuditRecords(db: Db, query: AuditQuery): Promise<AuditPage> {
  let select = db
    .selectFrom('auditEvents')
    .innerJoin('users', 'users.id', 'auditEvents.userId')
    .leftJoin('apiTokens', 'apiTokens.id', 'auditEvents.tokenId')
    .select([
      'auditEvents.id',
      'auditEvents.createdAt',
      'auditEvents.userId',
      'users.email',
      'auditEvents.credential',
      'auditEvents.tokenId',
      'apiTokens.name as tokenName',
      'auditEvents.operation',
      'auditEvents.route',
      'auditEvents.status',
      'auditEvents.ip',
    ])
    .orderBy('auditEvents.id', 'desc')
    .limit(query.limit + 1);
  if (query.userId !== null) select = select.where('auditEvents.userId', '=', query.userId);
  if (query.tokenId !== null) select = select.where('auditEvents.tokenId', '=', query.tokenId);
  if (query.before !== null) select = select.where('auditEvents.id', '<', query.before);
  const rows = await select.execute();
  const page = rows.slice(0, query.limit);
  return {
    records: page.map((row) => ({
      id: row.id,
      at: new Date(Number(row.createdAt)).toISOString(),
      user: { id: row.userId, email: row.email },
      credential: row.credential,
      token: row.tokenId === null ? null : { id: row.tokenId, name: row.tokenName },
      operation: row.operation,
      route: row.route,
      status: row.status,
      ip: row.ip,
    })),
    nextBefore: rows.length > query.limit ? page[page.length - 1]!.id : null,
  };
}
