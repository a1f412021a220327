import type { Kysely } from 'kysely';

/**
 * The 30-second steps whose two-factor code an account has used (contract §8: a code is accepted
 * for the current step and one either side, and each step's code once per account). Only the last
 * accepted step was kept, and every step up to it refused: after a code of the next step (a phone
 * whose clock runs fast), the current step's code, never used, was refused too. A step is recorded
 * by inserting its row, so of two requests with one code, one gets in; rows older than the window
 * are deleted as new ones come. The last step kept so far becomes the first row, and its column goes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('totpUsedSteps')
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('step', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('totpUsedSteps_pk', ['userId', 'step'])
    .execute();
  await db
    .insertInto('totpUsedSteps')
    .columns(['userId', 'step'])
    .expression(db.selectFrom('users').select(['id', 'totpLastStep']).where('totpLastStep', 'is not', null))
    .execute();
  await db.schema.alterTable('users').dropColumn('totpLastStep').execute();
}
