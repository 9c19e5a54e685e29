// The store's tests run on both databases: one suite, parameterized by dialect. describeStores
// runs its body once per database kind; each test gets a database of its own (a SQLite file in a
// new folder, or a new database on the test file's one PostgreSQL server: postgres.ts) and the
// test's own connection to it, to read what the store wrote or to break it on purpose.
//
//   describeStores('applyPlan', (db) => {
//     let store: Store;
//     beforeEach(async () => (store = await db().open()));
//     it('...', async () => expect(await db().rows('SELECT ...')).toEqual([...]));
//   });
import { rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe } from 'vitest';
import { openStore, type OpenStoreOptions, type Store, type StoreKind } from '../../src/store/index.ts';
import { tempDir } from './files.ts';
import { startPostgres, type PostgresServer } from './postgres.ts';
import { openSql, type Sql } from './sql.ts';

export const STORE_KINDS: readonly StoreKind[] = ['sqlite', 'postgres'];

export interface TestDatabase {
  kind: StoreKind;
  /** What EDGEWATCH_DB would be: the SQLite file, or the PostgreSQL URL. */
  target: string;
  /** The file's PostgreSQL server (undefined on SQLite). */
  server: PostgresServer | undefined;
  /** Opens a store on it (several may be open, as several processes would); closed after the test. */
  open(options?: OpenStoreOptions): Promise<Store>;
  /** The rows of a query, on the test's own connection (integers as numbers: cast counts to integer). */
  rows<T = Record<string, unknown>>(query: string): Promise<T[]>;
  exec(statement: string): Promise<void>;
  /** Makes every insert into `table` fail with `message` until healInserts. */
  failInserts(table: string, message: string): Promise<void>;
  healInserts(table: string): Promise<void>;
}

/** The test's own connection: SQLite through better-sqlite3, PostgreSQL through pg. */
interface RawSql {
  rows(query: string): Promise<unknown[]>;
  exec(statement: string): Promise<void>;
  close(): Promise<void>;
}

function rawSqlite(file: string): RawSql {
  let sql: Sql | undefined;
  const open = () => (sql ??= openSql(file));
  return {
    rows: async (query) => open().prepare(query).all(),
    exec: async (statement) => void open().exec(statement),
    close: async () => {
      sql?.close();
    },
  };
}

function rawPostgres(url: string): RawSql {
  let client: Promise<pg.Client> | undefined;
  const open = () =>
    (client ??= (async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      return c;
    })());
  return {
    rows: async (query) => (await (await open()).query(query)).rows,
    exec: async (statement) => void (await (await open()).query(statement)),
    close: async () => {
      if (client) await (await client).end();
    },
  };
}

const FAULT_STATEMENTS: Record<StoreKind, { fail(table: string, message: string): string; heal(table: string): string }> = {
  sqlite: {
    fail: (table, message) => `CREATE TRIGGER fault_${table} BEFORE INSERT ON ${table} BEGIN SELECT RAISE(ABORT, '${message}'); END`,
    heal: (table) => `DROP TRIGGER fault_${table}`,
  },
  postgres: {
    fail: (table, message) => `
      CREATE FUNCTION fault_${table}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION '${message}'; END $$;
      CREATE TRIGGER fault_${table} BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION fault_${table}();`,
    heal: (table) => `DROP TRIGGER fault_${table} ON ${table}; DROP FUNCTION fault_${table}();`,
  },
};

/** Runs `body` once per database kind (`<name> on sqlite`, `<name> on postgres`). */
export function describeStores(name: string, body: (db: () => TestDatabase) => void): void {
  describe.each(STORE_KINDS)(`${name} on %s`, (kind) => {
    let server: PostgresServer | undefined;
    let current: TestDatabase | undefined;
    let cleanup: Array<() => Promise<void> | void> = [];

    beforeAll(async () => {
      if (kind === 'postgres') server = await startPostgres();
    }, 120_000);
    afterAll(async () => {
      await server?.stop();
    }, 60_000);

    beforeEach(async () => {
      let target: string;
      if (kind === 'postgres') {
        target = await server!.createDatabase();
      } else {
        const dir = tempDir('edgewatch-store-');
        cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
        target = path.join(dir, 'edgewatch.db');
      }
      const raw = kind === 'postgres' ? rawPostgres(target) : rawSqlite(target);
      cleanup.push(() => raw.close());
      current = {
        kind,
        target,
        server,
        async open(options) {
          const store = await openStore(target, options);
          cleanup.push(() => store.close());
          return store;
        },
        rows: async <T>(query: string) => (await raw.rows(query)) as T[],
        exec: (statement) => raw.exec(statement),
        failInserts: (table, message) => raw.exec(FAULT_STATEMENTS[kind].fail(table, message)),
        healInserts: (table) => raw.exec(FAULT_STATEMENTS[kind].heal(table)),
      };
    });
    afterEach(async () => {
      // Stores first (they may hold the file open), the folder last.
      for (const step of cleanup.reverse()) await step();
      cleanup = [];
      current = undefined;
    });

    body(() => {
      if (!current) throw new Error('describeStores: the database exists only inside a test');
      return current;
    });
  });
}
