import type { Compilable, CompiledQuery, Kysely } from 'kysely';
import { dialectOf, type Dialect } from './database.ts';

/**
 * A hot query built and compiled once, then run with new values. Kysely builds and compiles every
 * query anew, which for a join such as authentication's costs more CPU (about 40 µs) than SQLite
 * takes to run it. `build` is called once per dialect, with placeholders for the values: it must
 * use them only as values (no branching on them), so that the SQL is the same for every call.
 * Marks such as `.modifyEnd(prepared)` are kept, so PostgreSQL still prepares it once per connection.
 */
export function compiledOnce<Db extends Kysely<any>, Values extends unknown[], Row>(
  build: (db: Db, ...values: Values) => Compilable<Row>,
): (db: Db, ...values: Values) => CompiledQuery<Row> {
  const byShape = compiledByShape((db: Db, _shape: '', ...values: Values) => build(db, ...values));
  return (db, ...values) => byShape(db, '', ...values);
}

/**
 * Like compiledOnce, for a query that comes in a few shapes (a sort order, say): `build` may branch
 * on `shape`, never on the values, and is called once per dialect and shape.
 */
export function compiledByShape<Db extends Kysely<any>, Shape extends string, Values extends unknown[], Row>(
  build: (db: Db, shape: Shape, ...values: Values) => Compilable<Row>,
): (db: Db, shape: Shape, ...values: Values) => CompiledQuery<Row> {
  const templates = new Map<Dialect, Map<Shape, { compiled: CompiledQuery<Row>; slots: Array<number | null> }>>();
  return (db, shape, ...values) => {
    const dialect = dialectOf(db);
    let shapes = templates.get(dialect);
    if (!shapes) templates.set(dialect, (shapes = new Map()));
    let template = shapes.get(shape);
    if (!template) {
      const placeholders = values.map((_, i) => `\u0000compiledOnce:${i}\u0000`);
      const compiled = build(db, shape, ...(placeholders as Values)).compile();
      const slots = compiled.parameters.map((value) => {
        const index = placeholders.indexOf(value as string);
        return index < 0 ? null : index;
      });
      if (new Set(slots.filter((slot) => slot !== null)).size < values.length) throw new Error('compiledOnce: every value must become a query parameter');
      template = { compiled, slots };
      shapes.set(shape, template);
    }
    const { compiled, slots } = template;
    return { ...compiled, parameters: slots.map((slot, i) => (slot === null ? compiled.parameters[i] : values[slot])) };
  };
}
