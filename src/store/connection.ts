// Opens the SQLite database (WAL, busy timeout) and applies the pending migrations in one transaction.
import { mkdirSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, type Migration, type MigrationProvider } from 'kysely';
import { EdgewatchError } from '../core/errors.ts';
import type { Database } from './schema.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations', import.meta.url));

export interface Store {
  /** Typed query builder, for everything off the hot path. */
  db: Kysely<Database>;
  /** The same connection, for prepared statements in synchronous transactions on the hot path. */
  raw: SqliteDatabase.Database;
  close(): Promise<void>;
}

export interface OpenStoreOptions {
  busyTimeoutMs?: number;
  readonly?: boolean;
}

export async function openStore(file: string, options: OpenStoreOptions = {}): Promise<Store> {
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  let raw: SqliteDatabase.Database;
  try {
    raw = new SqliteDatabase(file);
    raw.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    raw.pragma('journal_mode = WAL');
    raw.pragma('synchronous = NORMAL');
    // Checkpoint (and fsync) every ~40 MB of WAL instead of every 4 MB: a baseline of tens of thousands
    // of snapshots otherwise spends most of its time in checkpoint fsyncs (docs/performance.md).
    raw.pragma('wal_autocheckpoint = 10000');
    raw.pragma('foreign_keys = ON');
  } catch (cause) {
    throw new EdgewatchError('STORE_FAILED', `cannot open database ${file}: ${(cause as Error).message}`, { cause });
  }
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: raw }) });
  try {
    await migrateSqlite(db, raw, file);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return {
    db,
    raw,
    close: async () => {
      await db.destroy();
    },
  };
}

// Like kysely's FileMigrationProvider, but the import runs from our own code, so the TypeScript
// migrations load under whichever loader runs the app (tsx, or vitest in tests).
const migrationFolder: MigrationProvider = {
  async getMigrations() {
    const migrations: Record<string, Migration> = {};
    for (const file of (await readdir(MIGRATIONS_DIR)).sort()) {
      if (!/\.(ts|js|mjs)$/.test(file) || file.endsWith('.d.ts')) continue;
      migrations[file.replace(/\.[^.]+$/, '')] = (await import(pathToFileURL(path.join(MIGRATIONS_DIR, file)).href)) as Migration;
    }
    return migrations;
  },
};

// kysely runs SQLite migrations outside a transaction (its adapter reports no transactional DDL),
// so a process killed between two statements of a migration left tables without their
// kysely_migration row, and every later open failed. SQLite does have transactional DDL: every
// pending migration and its row commit together or not at all. IMMEDIATE takes the write lock
// first, so a second process creating the same database waits (busy timeout) and then finds
// nothing left to do. An up-to-date database is not locked at all, so opening it never waits.
async function migrateSqlite(db: Kysely<Database>, raw: SqliteDatabase.Database, file: string): Promise<void> {
  if ((await pendingMigrations(db)).length === 0) return;
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

function migrator(db: Kysely<Database>): Migrator {
  return new Migrator({ db, provider: migrationFolder });
}

async function pendingMigrations(db: Kysely<Database>): Promise<string[]> {
  return (await migrator(db).getMigrations()).filter((m) => m.executedAt === undefined).map((m) => m.name);
}

/**
 * Applies the pending migrations with kysely's Migrator, which keeps its bookkeeping in
 * kysely_migration and kysely_migration_lock. On a dialect with transactional DDL (PostgreSQL) it
 * runs them in one transaction under its own lock; on SQLite, openStore wraps it in one.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<void> {
  const { error, results } = await migrator(db).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new EdgewatchError('STORE_FAILED', `migration ${failed} failed: ${(error as Error).message}`, { cause: error });
  }
}
