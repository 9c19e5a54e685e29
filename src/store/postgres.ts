// PostgreSQL: kysely's PostgresDialect over a pool of `pg` connections, the same migrations as
// SQLite, and the cluster of processes sharing the database: a source is led by the process that
// holds its advisory lock, on a connection of its own, and the server frees the lock when that
// connection dies (a process killed, a machine gone).
import { createHash } from 'node:crypto';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { describeError, EdgewatchError } from '../core/errors.ts';
import { redact } from '../core/redact.ts';
import type { Cluster } from './cluster.ts';
import { migrateToLatest, migrationFiles, storeOf, type OpenStoreOptions, type Store } from './connection.ts';
import type { Database } from './schema.ts';

/** Connections per process: the cycle's chains, the delivery lanes and the HTTP pages share them. */
const POOL_SIZE = 8;
const CONNECT_TIMEOUT_MS = 10_000;
/** How long a check of the database (or of a lead) waits for the answer. */
const ANSWER_TIMEOUT_MS = 5_000;
/** Advisory locks are keyed (namespace, key): the namespace keeps edgewatch's apart from other applications'. */
const LOCK_NAMESPACE = 0x65647767;

export interface PostgresTarget {
  url: string;
  host: string;
  port: string;
  database: string;
  user: string;
  password: string | undefined;
}

/** A PostgreSQL URL's parts; throws CONFIG_INVALID (without the URL, which may hold a password) when it is not one. */
export function postgresTarget(url: string): PostgresTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new EdgewatchError('CONFIG_INVALID', 'EDGEWATCH_DB: not a valid PostgreSQL URL (write postgres://user:password@host:5432/database)');
  }
  return {
    url,
    host: parsed.hostname || 'localhost',
    port: parsed.port || '5432',
    database: decodeURIComponent(parsed.pathname.replace(/^\//, '')) || decodeURIComponent(parsed.username) || 'postgres',
    user: decodeURIComponent(parsed.username),
    password: parsed.password === '' ? undefined : decodeURIComponent(parsed.password),
  };
}

/** Where the database is, as it may be shown: never the password. */
export function postgresLabel(target: PostgresTarget): string {
  return `postgres://${target.user ? `${target.user}@` : ''}${target.host}:${target.port}/${target.database}`;
}

/** An error of the driver as one line, the password taken out should a message ever carry it. */
function reason(target: PostgresTarget, error: unknown): string {
  return redact(describeError(error), [target.password]);
}

/** `work`, or an error once `ms` pass without an answer (a connection to a vanished host never answers). */
async function answerWithin<T>(work: Promise<T>, what: string, onTimeout: () => void = () => undefined): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new Error(`${what}: no answer within ${ANSWER_TIMEOUT_MS / 1000} s`));
    }, ANSWER_TIMEOUT_MS);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function connectionOptions(target: PostgresTarget, name: string): pg.ClientConfig {
  return { connectionString: target.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true, application_name: name };
}

export async function openPostgres(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  const target = postgresTarget(url);
  const where = `PostgreSQL at ${target.host}:${target.port} (database ${target.database})`;
  const pool = new pg.Pool({ ...connectionOptions(target, 'edgewatch'), max: POOL_SIZE });
  // An idle connection lost (the server restarted) is dropped by the pool, which opens another
  // for the next query; the daemon's check of the database reports the outage meanwhile.
  pool.on('error', () => undefined);
  // A connection that dies while kysely holds it (between two statements of a transaction) emits
  // 'error' with nobody listening, which would end the process: the next statement fails instead,
  // and the pool drops the connection when it comes back.
  pool.on('connect', (client) => client.on('error', () => undefined));
  try {
    await answerWithin(pool.query('select 1'), 'connect');
  } catch (cause) {
    await pool.end().catch(() => undefined);
    throw new EdgewatchError('STORE_FAILED', `cannot reach ${where}: ${reason(target, cause)}`);
  }
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  try {
    // kysely's Migrator runs them in one transaction under its advisory lock: processes starting
    // together wait for the first, then find nothing left to do.
    if (options.readonly) await requireMigrated(db, where);
    else await migrateToLatest(db);
  } catch (error) {
    await db.destroy();
    if (error instanceof EdgewatchError) throw new EdgewatchError(error.code, redact(error.message, [target.password]));
    throw new EdgewatchError('STORE_FAILED', `${where}: ${reason(target, error)}`);
  }
  return storeOf(db, { kind: 'postgres', label: postgresLabel(target), cluster: advisoryLocks(target, pool) });
}

/** For the commands that only read: a database behind this version's migrations is an error, not migrated. */
async function requireMigrated(db: Kysely<Database>, where: string): Promise<void> {
  const { rows } = await sql<{ exists: boolean }>`select to_regclass('kysely_migration') is not null as exists`.execute(db);
  const applied = new Set(rows[0]?.exists ? (await sql<{ name: string }>`select name from kysely_migration`.execute(db)).rows.map((row) => row.name) : []);
  const pending = (await migrationFiles()).map((m) => m.name).filter((name) => !applied.has(name));
  if (pending.length > 0) {
    throw new EdgewatchError(
      'STORE_FAILED',
      `${where} needs a migration to this version of edgewatch (${pending.join(', ')}): run a command that writes to it, such as edgewatch poll --once, first`,
    );
  }
}

/** The advisory lock key of a source (stable across processes and versions). */
function lockKey(source: string): number {
  return createHash('sha256').update(source).digest().readInt32BE(0);
}

/**
 * Leaders by session advisory locks, held on one connection of their own (not the pool's, which
 * comes and goes): while it lives, its sources stay led; when it dies, this process has lost them
 * and the server has freed them for another.
 */
function advisoryLocks(target: PostgresTarget, pool: pg.Pool): Cluster {
  let client: pg.Client | undefined;
  let connecting: Promise<pg.Client> | undefined;
  const led = new Map<string, Date>();

  const drop = (lost: pg.Client): void => {
    if (client === lost) {
      client = undefined;
      led.clear();
    }
    void lost.end().catch(() => undefined);
  };

  const connection = (): Promise<pg.Client> => {
    if (client) return Promise.resolve(client);
    connecting ??= (async () => {
      const fresh = new pg.Client(connectionOptions(target, 'edgewatch leader'));
      fresh.on('error', () => drop(fresh));
      fresh.on('end', () => drop(fresh));
      try {
        await answerWithin(fresh.connect(), 'connect', () => drop(fresh));
        // The server notices within half a minute that a leader's host vanished (no FIN sent),
        // and frees its sources, instead of after the system's two hours.
        await fresh.query('set tcp_keepalives_idle = 10; set tcp_keepalives_interval = 5; set tcp_keepalives_count = 3');
      } catch (error) {
        drop(fresh);
        throw new Error(`cannot reach PostgreSQL at ${target.host}:${target.port}: ${reason(target, error)}`);
      }
      client = fresh;
      return fresh;
    })().finally(() => {
      connecting = undefined;
    });
    return connecting;
  };

  /** A statement on the locks' connection; one that fails or hangs loses the connection and every lead. */
  const ask = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> => {
    const conn = await connection();
    try {
      return (await answerWithin(conn.query<R>(text, values), 'lead', () => drop(conn))).rows;
    } catch (error) {
      drop(conn);
      throw new Error(`lost PostgreSQL at ${target.host}:${target.port}: ${reason(target, error)}`);
    }
  };

  return {
    async lead(source, now) {
      // Held while the connection lives: asking again would stack the lock (a session lock counts).
      if (led.has(source)) {
        await ask('select 1');
        return led.has(source);
      }
      const [row] = await ask<{ ok: boolean }>('select pg_try_advisory_lock($1, $2) as ok', [LOCK_NAMESPACE, lockKey(source)]);
      if (row?.ok && client) led.set(source, now);
      return led.has(source);
    },
    led: () => led,
    async giveUp() {
      if (client) drop(client);
    },
    async check() {
      try {
        await answerWithin(pool.query('select 1'), 'check');
      } catch (error) {
        throw new Error(`cannot reach PostgreSQL at ${target.host}:${target.port}: ${reason(target, error)}`);
      }
    },
    async close() {
      if (client) await client.end().catch(() => undefined);
      client = undefined;
      led.clear();
    },
  };
}
