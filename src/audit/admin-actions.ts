import type { Executor } from '../db/account-scope.ts';
import { newId } from '../db/ids.ts';
import type { AdminActionKind, AdminActionPage, AdminChange, AdminUser, Role } from '../api/admin.ts';

/**
 * The administration log (docs/decisions.md, "The administration log"): who changed which account,
 * role, setting, invite, or other account's content, when, and what changed. The audit records
 * cover what tokens and the legacy credential do (spec, Authentication 11); this covers what
 * administrators do to what is not their own, which until now only the server's log told, and only
 * to whoever reads it.
 */
export interface AdminActionEntry {
  actor: { id: string; email: string };
  action: AdminActionKind;
  target: { id: string | null; label: string };
  changes?: AdminChange[];
}

/**
 * Writes the record of a change in the change's own transaction (`trx`): the change and its record
 * commit together or not at all, so none is missing after the process stops, and none tells of a
 * change that was not made. A record that cannot be written fails the change with it.
 */
export async function recordAdminAction(trx: Executor, entry: AdminActionEntry): Promise<void> {
  await trx
    .insertInto('adminActions')
    .values({
      id: newId(),
      actorId: entry.actor.id,
      actorEmail: entry.actor.email,
      action: entry.action,
      targetId: entry.target.id,
      targetLabel: entry.target.label,
      changes: entry.changes && entry.changes.length > 0 ? JSON.stringify(entry.changes) : null,
      createdAt: Date.now(),
    })
    .execute();
}

export interface AdminActionQuery {
  /** Only the records of this account, role, invite, file or link. */
  targetId: string | null;
  /** Records older than this one (the previous page's `nextBefore`). */
  before: string | null;
  limit: number;
}

/** GET /api/admin/actions: the administration log, newest first (IDs are time-ordered), a page at a time. */
export async function listAdminActions(db: Executor, query: AdminActionQuery): Promise<AdminActionPage> {
  let select = db.selectFrom('adminActions').selectAll().orderBy('id', 'desc').limit(query.limit + 1);
  if (query.targetId !== null) select = select.where('targetId', '=', query.targetId);
  if (query.before !== null) select = select.where('id', '<', query.before);
  const rows = await select.execute();
  const page = rows.slice(0, query.limit);
  return {
    actions: page.map((row) => ({
      id: row.id,
      at: new Date(Number(row.createdAt)).toISOString(),
      actor: { id: row.actorId, email: row.actorEmail },
      action: row.action as AdminActionKind,
      target: { id: row.targetId, label: row.targetLabel },
      changes: row.changes === null ? [] : (JSON.parse(row.changes) as AdminChange[]),
    })),
    nextBefore: rows.length > query.limit ? page[page.length - 1]!.id : null,
  };
}

type Value = Exclude<AdminChange['from'], undefined>;
type Facts = Record<string, Value>;

/** Each field whose value differs, before → after, in the order given. */
export function changesBetween(before: Facts, after: Facts): AdminChange[] {
  const changes: AdminChange[] = [];
  for (const field of Object.keys(after)) {
    if (JSON.stringify(before[field]) !== JSON.stringify(after[field])) changes.push({ field, from: before[field]!, to: after[field]! });
  }
  return changes;
}

/** Every field of something made, as values it was given. */
export function madeWith(facts: Facts): AdminChange[] {
  return Object.entries(facts).map(([field, to]) => ({ field, to }));
}

/** What the log says of an account: what an administrator can change of it, a password aside. */
export function accountFacts(user: AdminUser): Facts {
  return {
    email: user.email,
    name: user.name,
    roles: user.roles.map((role) => role.name),
    emailVerified: user.emailVerified,
    quotaBytes: user.quotaBytes,
    suspended: user.suspendedAt !== null,
  };
}

/** What the log says of a role. */
export function roleFacts(role: Role): Facts {
  return { name: role.name, permissions: [...role.permissions] };
}
