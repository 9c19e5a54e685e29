// Batching helpers of the repository functions: many rows per statement, within the bound
// parameters a statement may carry; statements built and compiled once; and a write transaction
// that takes the lock first.
import { PostgresAdapter, sql, type Compilable, type CompiledQuery, type Kysely, type QueryResult } from 'kysely';
import type { Database } from './schema.ts';

/**
 * Bound parameters per statement: SQLite's limit (32,766 since 3.32) and under PostgreSQL's
 * (65,535). Rows per statement are this divided by the columns of a row.
 */
export const MAX_PARAMETERS = 32_766;

/** `items` (keys for an `IN` list) in slices that each fit one statement. */
export function chunked<T>(items: readonly T[]): T[][] {
  const size = MAX_PARAMETERS - 1;
  const slices: T[][] = [];
  for (let i = 0; i < items.length; i += size) slices.push(items.slice(i, i + size));
  return slices;
}

/** Whether the query builder runs on PostgreSQL: for the few statements whose SQL must differ. */
export function onPostgres(db: Kysely<Database>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * Runs `work` in one transaction on a held connection. On SQLite it begins IMMEDIATE: the write
 * lock is taken at the start, so a process sharing the file waits for it here (busy timeout)
 * instead of failing at its first write after reading. PostgreSQL locks rows as they are written
 * (and claims lock theirs: outbox.ts). Anything thrown rolls it back.
 */
export async function inWriteTransaction<T>(db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  const begin = onPostgres(db) ? sql`begin` : sql`begin immediate`;
  return db.connection().execute(async (conn) => {
    await begin.execute(conn);
    try {
      const result = await work(conn);
      await sql`commit`.execute(conn);
      return result;
    } catch (error) {
      // SQLite may have rolled back already (a full disk does): then there is nothing to undo.
      await sql`rollback`.execute(conn).catch(() => undefined);
      throw error;
    }
  });
}

/** Where a query built once (compiledOnce) takes the value of one of its arguments. */
class Slot {
  constructor(readonly index: number) {}
}

/**
 * A query that kysely builds and compiles once, then runs with other values: on the outbox's
 * path (a claim and a settlement for every send) building and compiling cost a few times what
 * SQLite's own work does. `build` places argument i with `arg<T>(i)`; every value the query
 * binds must be an argument (constants go in as `sql.lit`).
 */
export function compiledOnce<A extends unknown[], R>(build: (db: Kysely<Database>, arg: <T>(index: number) => T) => Compilable<R>) {
  // Compiled once per dialect (its adapter's class), as each writes its own SQL.
  const byDialect = new Map<unknown, { query: CompiledQuery<R>; order: number[] }>();
  return async (db: Kysely<Database>, ...args: A): Promise<QueryResult<R>> => {
    const dialect = db.getExecutor().adapter.constructor;
    let compiled = byDialect.get(dialect);
    if (!compiled) {
      const query = build(db, <T>(index: number) => new Slot(index) as T).compile();
      const order = query.parameters.map((value) => (value instanceof Slot ? value.index : -1));
      if (order.includes(-1)) throw new TypeError('compiledOnce: a value of the query is not an argument');
      compiled = { query, order };
      byDialect.set(dialect, compiled);
    }
    const { query, order } = compiled;
    return db.executeQuery<R>({ ...query, parameters: order.map((i) => args[i]) });
  };
}

/**
 * Rows written this many to a statement: few enough that the large values of a page (snapshots,
 * alerts' changes) die young instead of all living until its last statement.
 */
export const ROWS_PER_STATEMENT = 25;

/**
 * A multi-row statement over rows of `columns`, built and compiled once per number of rows (up to
 * ROWS_PER_STATEMENT), then run a slice of rows at a time; returns the rows the statements return.
 */
export function compiledRows<Row extends object, R = never>(columns: ReadonlyArray<keyof Row & string>, build: (db: Kysely<Database>, rows: Row[]) => Compilable<R>) {
  const byCount = new Map<number, (db: Kysely<Database>, ...args: unknown[]) => Promise<QueryResult<R>>>();
  const statementFor = (count: number) => {
    let statement = byCount.get(count);
    if (!statement) {
      statement = compiledOnce<unknown[], R>((db, arg) =>
        build(db, Array.from({ length: count }, (_, r) => Object.fromEntries(columns.map((column, c) => [column, arg(r * columns.length + c)])) as Row)),
      );
      byCount.set(count, statement);
    }
    return statement;
  };
  return async (db: Kysely<Database>, rows: readonly Row[]): Promise<R[]> => {
    const returned: R[] = [];
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
      const slice = rows.slice(i, i + ROWS_PER_STATEMENT);
      const result = await statementFor(slice.length)(db, ...slice.flatMap((row) => columns.map((column) => row[column])));
      returned.push(...result.rows);
    }
    return returned;
  };
}
