// Batching helpers of the repository functions: many rows per statement, within the bound
// parameters a statement may carry, and a write transaction that takes the lock first.
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

/**
 * Bound parameters per statement: SQLite's limit (32,766 since 3.32) and under PostgreSQL's
 * (65,535). Rows per statement are this divided by the columns of a row.
 */
export const MAX_PARAMETERS = 32_766;

/** `items` in slices that each fit one statement of `perItem` parameters apiece. */
export function chunked<T>(items: readonly T[], perItem = 1): T[][] {
  const size = Math.max(1, Math.floor(MAX_PARAMETERS / perItem) - 1);
  const slices: T[][] = [];
  for (let i = 0; i < items.length; i += size) slices.push(items.slice(i, i + size));
  return slices;
}

/**
 * Runs `work` in one transaction on a held connection. On SQLite it begins IMMEDIATE: the write
 * lock is taken at the start, so a process sharing the file waits for it here (busy timeout)
 * instead of failing at its first write after reading. Anything thrown rolls it back.
 */
export async function inWriteTransaction<T>(db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    await sql`begin immediate`.execute(conn);
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
