// A second `npm start` on the same database: the built-in sandbox's world continues where it
// stopped (its seed and clock are kept with the database), so the demo keeps firing and nothing
// that already happened (a KPI actual landing) happens again.
import { rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { getJson, startDaemonChild, waitFor, type DaemonChild } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/pipeline.ts';

let dir: string;
let daemon: DaemonChild | undefined;

beforeEach(() => {
  dir = tempDir('edgewatch-restart-');
});

afterEach(async () => {
  await daemon?.kill();
  rmSync(dir, { recursive: true, force: true });
});

const EVENTS_RULES = ['politics-edge-over-10', 'edge-moves-5', 'confidence-rises'];

it('continues the sandbox world on a second start: events alerts within a minute, no KPI actual appears twice, /healthz 200', async () => {
  const dbPath = path.join(dir, 'edgewatch.db');
  const env = { EDGEWATCH_DB: dbPath, EDGEWATCH_PORT: '0' };
  const query = <T>(sql: string): T[] => {
    const db = new Database(dbPath, { readonly: true });
    try {
      return db.prepare(sql).all() as T[];
    } finally {
      db.close();
    }
  };
  const actualsLanded = () => query<{ entity: string }>("SELECT entity FROM alerts WHERE rule = 'kpi-actual-landed'");

  daemon = await startDaemonChild(env);
  // KPI actuals land within the first simulated hour (digested, so read from the database).
  await waitFor('a KPI actual alert', () => actualsLanded().length > 0, 60_000);
  expect((await daemon.signal('SIGTERM')).code).toBe(0);
  const before = actualsLanded().length;

  daemon = await startDaemonChild(env);
  expect(daemon.logs().some((l) => l.msg.startsWith("the sandbox's world continues where it stopped"))).toBe(true);
  const started = Date.now();
  const isEventsAlert = (line: string) => EVENTS_RULES.some((rule) => line.includes(`] ${rule} `));
  await waitFor('an events alert after the second start', () => daemon!.stdout().find(isEventsAlert), 60_000);
  expect((Date.now() - started) / 1000).toBeLessThan(60);
  await waitFor('/healthz 200', async () => (await getJson(`${daemon!.url}healthz`)).status === 200, 20_000);
  // Every actual landed once: none re-appeared after the restart.
  const landed = actualsLanded().map((a) => a.entity);
  expect(landed.length).toBeGreaterThanOrEqual(before);
  expect(new Set(landed).size).toBe(landed.length);
  expect((await daemon.signal('SIGTERM')).code).toBe(0);
}, 180_000);
