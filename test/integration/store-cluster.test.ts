// Several processes on one database: migrations applied once when they start together, one leader
// per source (PostgreSQL advisory locks on a connection of their own), and a database that cannot
// be reached named by host and port, never by its password.
import { readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { expect, it } from 'vitest';
import { checkDatabase, describeStore, leadSource, ledSources, MIGRATIONS_DIR, openStore } from '../../src/store/index.ts';
import { describeStores } from '../helpers/databases.ts';
import { waitFor } from '../helpers/wait.ts';

const NOW = new Date('2026-11-21T18:00:00.000Z');
const MIGRATIONS = readdirSync(MIGRATIONS_DIR).filter((file) => file.endsWith('.ts')).length;

describeStores('processes sharing a database', (db) => {
  it('applies the migrations once when several processes open a new database together', async () => {
    // SQLite's opens block the thread while they wait for the write lock: one process's at a time.
    const stores = db().kind === 'postgres' ? await Promise.all([1, 2, 3, 4].map(() => db().open())) : [await db().open(), await db().open()];
    expect(stores.map((store) => describeStore(store).kind)).toEqual(stores.map(() => db().kind));
    expect(await db().rows('SELECT CAST(count(*) AS integer) AS n FROM kysely_migration')).toEqual([{ n: MIGRATIONS }]);
  });

  it('leads each source from one process at a time; another takes it once the leader is gone', async () => {
    const first = await db().open();
    const second = await db().open();
    expect(await leadSource(first, 'events', NOW)).toBe(true);
    expect(await leadSource(first, 'events', NOW)).toBe(true);
    expect(await leadSource(second, 'kpis', NOW)).toBe(true);
    if (db().kind === 'sqlite') {
      // One process per SQLite file: each store leads every source it polls.
      expect(await leadSource(second, 'events', NOW)).toBe(true);
      return;
    }
    expect(await leadSource(second, 'events', NOW)).toBe(false);
    expect([...ledSources(first).keys()]).toEqual(['events']);
    await first.close();
    expect(await leadSource(second, 'events', NOW)).toBe(true);
    expect([...ledSources(second).keys()].sort()).toEqual(['events', 'kpis']);
  });

  it('loses its sources when its leader connection dies, and another process takes them', async () => {
    const first = await db().open();
    const second = await db().open();
    expect(await leadSource(first, 'events', NOW)).toBe(true);
    if (db().kind === 'sqlite') return expect(await leadSource(second, 'events', NOW)).toBe(true);
    // The server ends the first process's leader connection (as it does when its host vanished).
    await db().exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'edgewatch leader'");
    await waitFor('the lead given up', () => ledSources(first).size === 0);
    expect(await leadSource(second, 'events', NOW)).toBe(true);
    // The first process reconnects at its next try, and finds the source led.
    expect(await leadSource(first, 'events', NOW)).toBe(false);
  });
});

describeStores('a database that cannot be reached', (db) => {
  it('is named by host and port at open, never by its password', async () => {
    await db().exec('SELECT 1'); // creates the SQLite file
    if (db().kind === 'sqlite') {
      // A file stands where its folder should be.
      await expect(openStore(path.join(db().target, 'edgewatch.db'))).rejects.toThrow(/^cannot open database .*: .* is a file, not a folder$/);
      return;
    }
    const closed = await closedPort();
    const url = db().server!.urlOf('edgewatch', { password: 'pw-sekrit-42', port: closed });
    const error = await openStore(url).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).toMatch(new RegExp(`^cannot reach PostgreSQL at 127\\.0\\.0\\.1:${closed} \\(database edgewatch\\): .*ECONNREFUSED`));
    expect(error?.message).not.toContain('sekrit');
    expect(error?.message.split('\n')).toHaveLength(1);

    const wrong = await openStore(db().server!.urlOf('postgres', { password: 'pw-sekrit-42' })).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(wrong?.message).toMatch(/^cannot reach PostgreSQL at 127\.0\.0\.1:\d+ \(database postgres\): .*password authentication failed/);
    expect(wrong?.message).not.toContain('sekrit');
  });

  it('goes on after the server ended its connections: the pool opens new ones', async () => {
    const store = await db().open();
    await checkDatabase(store);
    if (db().kind === 'sqlite') return;
    await db().exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'edgewatch' AND pid <> pg_backend_pid()");
    // The pool drops the ended connections and opens new ones: the store goes on.
    await waitFor('the store answering again', () => checkDatabase(store).then(() => true, () => false));
  });
});

/** A port on which nothing listens. */
async function closedPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
