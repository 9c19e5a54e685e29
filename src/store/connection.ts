// Opens the SQLite database (WAL, busy timeout) and applies the migrations, idempotently.
import { existsSync, mkdirSync } from 'node:fs';
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
  if (file !== ':memory:') createFolderOf(file);
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
  await migrateToLatest(db);
  return {
    db,
    raw,
    close: async () => {
      await db.destroy();
    },
  };
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
    for (const file of (await readdir(MIGRATIONS_DIR)).sort()) {
      if (!/\.(ts|js|mjs)$/.test(file) || file.endsWith('.d.ts')) continue;
      migrations[file.replace(/\.[^.]+$/, '')] = (await import(pathToFileURL(path.join(MIGRATIONS_DIR, file)).href)) as Migration;
    }
    return migrations;
  },
};

export async function migrateToLatest(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationFolder });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new EdgewatchError('STORE_FAILED', `migration ${failed} failed: ${(error as Error).message}`, { cause: error });
  }
}
