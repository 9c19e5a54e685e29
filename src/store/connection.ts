// Opens the database, SQLite (WAL, busy timeout) or PostgreSQL (postgres.ts), and applies the
// pending migrations in one transaction. The store handle is opaque: which database it is, and its
// query builder, are src/store's own.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, type Migration, type MigrationProvider, type SqliteDatabase as KyselySqlite } from 'kysely';
import { EdgewatchError } from '../core/errors.ts';
import { singleProcess, type Cluster } from './cluster.ts';
import type { Database } from './schema.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations', import.meta.url));

/** An open database. Opaque: only the repository functions of src/store reach its connection. */
export interface Store {
  close(): Promise<void>;
}

export interface OpenStoreOptions {
  /** SQLite: how long a statement waits for another process's write lock. */
  busyTimeoutMs?: number;
  /** Reads only: creates nothing, migrates nothing (a database that needs a migration is an error). */
  readonly?: boolean;
}

/** A PostgreSQL URL (`postgres://` or `postgresql://`) rather than a SQLite file. */
export function isPostgresUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

/** Opens `target`: a SQLite file (`:memory:` allowed) or a PostgreSQL URL. */
export async function openStore(target: string, options: OpenStoreOptions = {}): Promise<Store> {
  if (isPostgresUrl(target)) {
    // Loaded only by those who use it, as the pg driver is.
    const { openPostgres } = await import('./postgres.ts');
    return openPostgres(target, options);
  }
  return openSqlite(target, options);
}

async function openSqlite(file: string, options: OpenStoreOptions): Promise<Store> {
  if (options.readonly && file !== ':memory:') return openReadOnly(file, options);
  if (file !== ':memory:') createFolderOf(file);
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  const raw = await openSqliteFile(file, busyTimeoutMs);
  const db = sqliteBuilder(raw);
  try {
    await migrateSqlite(db, raw, file);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return storeOf(db, { kind: 'sqlite', label: file, cluster: singleProcess() });
}

/**
 * Opens the file in WAL mode. Switching a new file to WAL takes a lock that SQLite does not wait for
 * (its busy handler is not called there), so processes opening one new database at once may be
 * refused: each tries again until the busy timeout.
 */
async function openSqliteFile(file: string, busyTimeoutMs: number): Promise<SqliteDatabase.Database> {
  const deadline = Date.now() + busyTimeoutMs;
  for (;;) {
    let raw: SqliteDatabase.Database | undefined;
    try {
      raw = new SqliteDatabase(file);
      raw.pragma(`busy_timeout = ${busyTimeoutMs}`);
      raw.pragma('journal_mode = WAL');
      raw.pragma('synchronous = NORMAL');
      // Checkpoint (and fsync) every ~40 MB of WAL instead of every 4 MB: a baseline of tens of thousands
      // of snapshots otherwise spends most of its time in checkpoint fsyncs (docs/performance.md).
      raw.pragma('wal_autocheckpoint = 10000');
      raw.pragma('foreign_keys = ON');
      return raw;
    } catch (cause) {
      raw?.close();
      const busy = (cause as { code?: string }).code === 'SQLITE_BUSY';
      if (!busy || Date.now() >= deadline) throw new EdgewatchError('STORE_FAILED', `cannot open database ${file}: ${(cause as Error).message}`, { cause });
      await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 40));
    }
  }
}

// kysely runs SQLite migrations outside a transaction (its adapter reports no transactional DDL),
// so a process killed between two statements of a migration left tables without their
// kysely_migration row, and every later open failed. SQLite does have transactional DDL: every
// pending migration and its row commit together or not at all. IMMEDIATE takes the write lock
// first, so a second process creating the same database waits (busy timeout) and then finds
// nothing left to do. An up-to-date database is not locked at all, so opening it never waits.
async function migrateSqlite(db: Kysely<Database>, raw: SqliteDatabase.Database, file: string): Promise<void> {
  if ((await pendingMigrations(raw)).length === 0) return;
  try {
    raw.exec('BEGIN IMMEDIATE');
  } catch (cause) {
    throw new EdgewatchError('STORE_FAILED', `cannot migrate database ${file}: ${(cause as Error).message}`, { cause });
  }
  try {
    await migrateToLatest(db);
    raw.exec('COMMIT');
  } finally {
    if (raw.inTransaction) raw.exec('ROLLBACK');
  }
}

/** Statements kept prepared, by SQL text (least recently used dropped first). */
const PREPARED_STATEMENTS = 500;

/**
 * kysely over one SQLite connection. kysely prepares every query it runs; the hot paths run the
 * same few texts thousands of times (a page's statements, a delivery's claim and settlement), so
 * the prepared statements are kept and reused.
 */
function sqliteBuilder(raw: SqliteDatabase.Database): Kysely<Database> {
  const prepared = new Map<string, SqliteDatabase.Statement>();
  const database: KyselySqlite = {
    close: () => raw.close(),
    prepare(text) {
      let statement = prepared.get(text);
      if (statement) prepared.delete(text);
      else statement = raw.prepare(text);
      prepared.set(text, statement);
      if (prepared.size > PREPARED_STATEMENTS) prepared.delete(prepared.keys().next().value!);
      return statement;
    },
  };
  return new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
}

export type StoreKind = 'sqlite' | 'postgres';

/** What is behind a store handle: src/store's own (index.ts does not export it). */
interface StoreParts {
  db: Kysely<Database>;
  kind: StoreKind;
  /** Where it is, as it may be shown: a file, or a URL without its password. */
  label: string;
  /** What processes sharing the database agree through it (cluster.ts). */
  cluster: Cluster;
}

const parts = new WeakMap<Store, StoreParts>();

export function storeOf(db: Kysely<Database>, rest: Omit<StoreParts, 'db'>): Store {
  const store: Store = {
    close: async () => {
      await rest.cluster.close();
      await db.destroy();
    },
  };
  parts.set(store, { db, ...rest });
  return store;
}

function partsOf(store: Store): StoreParts {
  const found = parts.get(store);
  if (!found) throw new TypeError('not a store opened by openStore');
  return found;
}

/** The store's typed query builder: for the repository functions of src/store only. */
export function queryBuilder(store: Store): Kysely<Database> {
  return partsOf(store).db;
}

/** The store's cluster: for the repository functions of src/store only. */
export function clusterOf(store: Store): Cluster {
  return partsOf(store).cluster;
}

/** Which database the store is, and where, as it may be shown (for /healthz and the log). */
export function describeStore(store: Store): { kind: StoreKind; label: string } {
  const { kind, label } = partsOf(store);
  return { kind, label };
}

async function openReadOnly(file: string, options: OpenStoreOptions): Promise<Store> {
  // Nothing recorded yet: created, as every command creates it, so that a bad path is named.
  if (!existsSync(file)) return openSqlite(file, { ...options, readonly: false });
  let raw: SqliteDatabase.Database;
  try {
    raw = openReadOnlyFile(file, options.busyTimeoutMs ?? 5000);
  } catch (cause) {
    throw new EdgewatchError('STORE_FAILED', `cannot open database ${file}: ${(cause as Error).message}`, { cause });
  }
  const pending = await pendingMigrations(raw);
  if (pending.length > 0) {
    raw.close();
    throw new EdgewatchError(
      'STORE_FAILED',
      `database ${file} needs a migration to this version of edgewatch (${pending.join(', ')}): run a command that writes to it, such as edgewatch poll --once, with write access first`,
    );
  }
  raw.pragma('foreign_keys = ON');
  return storeOf(sqliteBuilder(raw), { kind: 'sqlite', label: file, cluster: singleProcess() });
}

function openReadOnlyFile(file: string, busyTimeoutMs: number): SqliteDatabase.Database {
  const raw = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
  try {
    raw.pragma(`busy_timeout = ${busyTimeoutMs}`);
    raw.prepare('SELECT count(*) FROM sqlite_schema').get(); // opens the file now
    return raw;
  } catch (error) {
    raw.close();
    // A WAL database needs its -shm file, which a folder we cannot write to (a read-only mount,
    // another user's folder) may not hold while no writer runs: read a copy in memory instead.
    if ((error as { code?: string }).code !== 'SQLITE_READONLY_DIRECTORY') throw error;
    const copy = readFileSync(file);
    copy[18] = 1; // file format write version: 1 = rollback journal, 2 = WAL
    copy[19] = 1; // read version
    return new SqliteDatabase(copy, { readonly: true });
  }
}

/** Migrations not yet applied to the database (all of them when it has none). */
async function pendingMigrations(raw: SqliteDatabase.Database): Promise<string[]> {
  const hasTable = raw.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'kysely_migration'").get() !== undefined;
  const applied = new Set(hasTable ? raw.prepare<[], { name: string }>('SELECT name FROM kysely_migration').all().map((row) => row.name) : []);
  return (await migrationFiles()).map((m) => m.name).filter((name) => !applied.has(name));
}

function createFolderOf(file: string): void {
  const folder = path.dirname(path.resolve(file));
  try {
    mkdirSync(folder, { recursive: true });
  } catch (cause) {
    const { code } = cause as NodeJS.ErrnoException;
    const reason = code === 'EEXIST' || code === 'ENOTDIR' ? `${existingAncestor(folder)} is a file, not a folder` : (cause as Error).message;
    throw new EdgewatchError('STORE_FAILED', `cannot open database ${file}: ${reason}`, { cause });
  }
}

/** The deepest path at or above `dir` that exists (the file in the way, when a folder cannot be made). */
function existingAncestor(dir: string): string {
  let current = dir;
  while (!existsSync(current) && path.dirname(current) !== current) current = path.dirname(current);
  return current;
}

// Like kysely's FileMigrationProvider, but the import runs from our own code, so the TypeScript
// migrations load under whichever loader runs the app (tsx, or vitest in tests).
const migrationFolder: MigrationProvider = {
  async getMigrations() {
    const migrations: Record<string, Migration> = {};
    for (const { name, file } of await migrationFiles()) migrations[name] = (await import(pathToFileURL(file).href)) as Migration;
    return migrations;
  },
};

/** The migrations shipped, in order, each named by its file name without extension. */
export async function migrationFiles(): Promise<Array<{ name: string; file: string }>> {
  return (await readdir(MIGRATIONS_DIR))
    .sort()
    .filter((file) => /\.(ts|js|mjs)$/.test(file) && !file.endsWith('.d.ts'))
    .map((file) => ({ name: file.replace(/\.[^.]+$/, ''), file: path.join(MIGRATIONS_DIR, file) }));
}

/**
 * Applies the pending migrations with kysely's Migrator, which keeps its bookkeeping in
 * kysely_migration and kysely_migration_lock. On a dialect with transactional DDL (PostgreSQL) it
 * runs them in one transaction under its own lock; on SQLite, openStore wraps it in one.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationFolder });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new EdgewatchError('STORE_FAILED', `migration ${failed} failed: ${(error as Error).message}`, { cause: error });
  }
}
