// Creating a new database: a process SIGKILLed at spread points while it creates and migrates a
// new SQLite file leaves a file that the next open migrates to the end; a migration that fails
// part-way leaves nothing of itself; several processes opening one new file at once all open it.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, rmSync, watch } from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { getMeta, MIGRATIONS_DIR, openStore, setMeta } from '../../src/store/index.ts';
import { tempDir } from '../helpers/files.ts';
import { openSql } from '../helpers/sql.ts';

const CHILD = path.resolve(import.meta.dirname, '../helpers/open-child.ts');
const KILLS = 25;

const MIGRATIONS = readdirSync(MIGRATIONS_DIR)
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.replace(/\.ts$/, ''))
  .sort();

let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

interface OpenChild {
  /** Resolves once the child has loaded everything and waits for `go`. */
  ready: Promise<void>;
  go(): void;
  /** `createMs`: from the file appearing to the child reporting it open (when it did). */
  exit: Promise<{ killed: boolean; output: string; createMs: number | undefined }>;
}

/** A child that opens `db` on `go`; with `killAfterMs`, SIGKILLed that long after the file appears. */
function openInChild(db: string, options: { killAfterMs?: number } = {}): OpenChild {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], { env: { ...process.env, CHILD_DB: db }, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  let appearedAt: number | undefined;
  let openedAt: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  const watcher = watch(path.dirname(db), (_event, name) => {
    if (name !== path.basename(db) || appearedAt !== undefined) return;
    appearedAt = performance.now();
    if (options.killAfterMs !== undefined) timer = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs);
  });
  const ready = new Promise<void>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.startsWith('ready\n')) resolve();
      if (openedAt === undefined && output.includes('opened')) openedAt = performance.now();
    });
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exit = new Promise<{ killed: boolean; output: string; createMs: number | undefined }>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (_code, signal) => {
      watcher.close();
      clearTimeout(timer);
      const createMs = appearedAt !== undefined && openedAt !== undefined ? openedAt - appearedAt : undefined;
      resolve({ killed: signal === 'SIGKILL', output, createMs });
    });
  });
  return { ready, go: () => child.stdin.end('go\n'), exit };
}

async function runChild(db: string, options: { killAfterMs?: number } = {}) {
  const child = openInChild(db, options);
  await child.ready;
  child.go();
  return child.exit;
}

/** The migrations recorded in the file as a kill left it, read without migrating. */
function appliedOnDisk(db: string): string[] {
  if (!existsSync(db)) return [];
  // Not read-only: reading a WAL file that a killed process left may need to rebuild its index.
  const raw = new SqliteDatabase(db);
  try {
    const table = raw.prepare("SELECT 1 FROM sqlite_master WHERE name = 'kysely_migration'").get();
    return table ? raw.prepare<[], { name: string }>('SELECT name FROM kysely_migration ORDER BY name').all().map((r) => r.name) : [];
  } finally {
    raw.close();
  }
}

/** Opens the file as the next process would: every migration applied, and it takes writes. */
async function reopen(db: string): Promise<string | undefined> {
  try {
    const store = await openStore(db);
    try {
      const sql = openSql(db);
      try {
        expect(sql.prepare<[], { name: string }>('SELECT name FROM kysely_migration ORDER BY name').all().map((r) => r.name)).toEqual(MIGRATIONS);
      } finally {
        sql.close();
      }
      await setMeta(store, 'probe', 'written');
      expect(await getMeta(store, 'probe')).toBe('written');
    } finally {
      await store.close();
    }
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

function columns(db: string, table: string): string[] {
  const raw = new SqliteDatabase(db);
  try {
    return raw.prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('${table}')`).all().map((c) => c.name);
  } finally {
    raw.close();
  }
}

describe('creating a new database', () => {
  it(`opens and migrates a new database after each of ${KILLS} kills during its creation`, { timeout: 120_000 }, async () => {
    const dir = tempDir('edgewatch-create-');
    dirs.push(dir);
    // How long creating a database takes here, two at a time as below (tens of milliseconds,
    // longer on a busy machine; at least 10): the kills are spread over that time. A kill that
    // lands after the creation finished narrows the window for the next ones, so that a
    // measurement inflated by a busy moment still puts most kills inside the creation.
    const undisturbed = await Promise.all([0, 1].map((i) => runChild(path.join(dir, `undisturbed-${i}.db`))));
    expect(undisturbed.map((u) => u.output)).toEqual(['ready\nopened\n', 'ready\nopened\n']);
    let windowMs = Math.max(...undisturbed.map((u) => u.createMs!), 10);
    const killOne = async (i: number) => {
      const delayMs = Math.round(((i % 8) / 8) * windowMs);
      const db = path.join(dir, `killed-${i}.db`);
      const run = await runChild(db, { killAfterMs: delayMs });
      // Killed before the last migration was recorded: the kill landed inside the creation.
      const interrupted = run.killed && appliedOnDisk(db).length < MIGRATIONS.length;
      if (!interrupted && delayMs >= 10) windowMs = Math.min(windowMs, delayMs);
      const reopenError = await reopen(db);
      return reopenError === undefined ? { delayMs, interrupted } : { delayMs, interrupted, reopenError };
    };
    const outcomes: Array<{ delayMs: number; interrupted: boolean; reopenError?: string }> = [];
    // Two at a time, to keep the test short on a shared machine.
    for (let i = 0; i < KILLS; i += 2) outcomes.push(...(await Promise.all([i, i + 1].filter((k) => k < KILLS).map(killOne))));
    expect(outcomes.filter((o) => o.reopenError !== undefined)).toEqual([]);
    expect(outcomes.filter((o) => o.interrupted).length, JSON.stringify(outcomes)).toBeGreaterThanOrEqual(KILLS / 3);
  });

  it('a migration that fails part-way leaves nothing of itself, and the error names it', async () => {
    const dir = tempDir('edgewatch-create-');
    dirs.push(dir);
    const db = path.join(dir, 'edgewatch.db');
    await (await openStore(db)).close();
    // A database recorded as before the migration that adds claimed_by to deliveries and digests,
    // but with digests.claimed_by already there: the migration adds deliveries' column, then fails
    // on digests'. The migrations after it never run.
    const failing = '2026-11-22T0500_delivery_claims';
    const raw = new SqliteDatabase(db);
    raw.exec(`ALTER TABLE deliveries DROP COLUMN claimed_by; DELETE FROM kysely_migration WHERE name >= '${failing}'`);
    raw.close();

    await expect(openStore(db)).rejects.toThrow(`migration ${failing} failed: duplicate column name: claimed_by`);
    expect(columns(db, 'deliveries')).not.toContain('claimed_by');
    expect(appliedOnDisk(db)).toEqual(MIGRATIONS.filter((m) => m < failing));
  });

  it('an up-to-date database opens while another connection holds the write lock', async () => {
    const dir = tempDir('edgewatch-create-');
    dirs.push(dir);
    const db = path.join(dir, 'edgewatch.db');
    await (await openStore(db)).close();
    const writer = new SqliteDatabase(db);
    writer.exec('BEGIN IMMEDIATE');
    try {
      // Read-only commands open the store beside a daemon in the middle of a write.
      const store = await openStore(db, { busyTimeoutMs: 200 });
      expect(await getMeta(store, 'nothing')).toBeUndefined();
      await store.close();
    } finally {
      writer.exec('ROLLBACK');
      writer.close();
    }
  });

  it('several processes opening one new database at once all open it', { timeout: 60_000 }, async () => {
    const dir = tempDir('edgewatch-create-');
    dirs.push(dir);
    for (let round = 0; round < 2; round++) {
      const db = path.join(dir, `race-${round}.db`);
      const children = Array.from({ length: 6 }, () => openInChild(db));
      // Every child loaded and waiting before any opens.
      await Promise.all(children.map((c) => c.ready));
      for (const child of children) child.go();
      const results = await Promise.all(children.map((c) => c.exit));
      expect(results.map((r) => r.output)).toEqual(Array(6).fill('ready\nopened\n'));
      expect(appliedOnDisk(db)).toEqual(MIGRATIONS);
    }
  });
});
