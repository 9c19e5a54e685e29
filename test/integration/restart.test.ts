// A second `npm start` on the same database: the built-in sandbox's world continues where it
// stopped (its seed and clock are kept with the database), so the demo keeps firing and nothing
// that already happened (a KPI actual landing) happens again.
import { rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { getJson, startDaemonChild, type DaemonChild } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/files.ts';
import { waitFor } from '../helpers/wait.ts';

let dir: string;
let daemon: DaemonChild | undefined;

beforeEach(() => {
  dir = tempDir('edgewatch-restart-');
});

afterEach(async () => {
  await daemon?.kill();
  rmSync(dir, { recursive: true, force: true });
});

it('continues the sandbox world on a second start: new snapshots at once, alerts soon, no KPI actual appears twice, /healthz 200', async () => {
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
  const actualsLanded = () => query<{ entity: string }>("SELECT entity FROM alerts WHERE rule = 'kpi-actual-landed'").map((a) => a.entity);
  const eventsWatermark = () => query<{ watermark: string }>("SELECT watermark FROM source_state WHERE source = 'events'")[0]?.watermark ?? '';

  daemon = await startDaemonChild(env);
  // A KPI actual lands within the first simulated hours (digested, so read from the database).
  await waitFor('a KPI actual alert', () => actualsLanded().length > 0, 120_000);
  expect((await daemon.signal('SIGTERM')).code).toBe(0);
  const watermark = eventsWatermark();
  const landedBefore = actualsLanded();

  daemon = await startDaemonChild(env);
  expect(daemon.logs().some((l) => l.msg.startsWith("the sandbox's world continues where it stopped"))).toBe(true);
  // The world moves on from where it was: the first polls already see newer snapshots.
  await waitFor('events newer than before the restart', () => eventsWatermark() > watermark, 30_000);
  // A few alerts a minute: one comes well within two.
  await daemon.waitForLog('an alert fired after the restart', (l) => / alert\(s\) fired/.test(l.msg), 120_000);
  await waitFor('/healthz 200', async () => (await getJson(`${daemon!.url}healthz`)).status === 200, 20_000);
  expect((await daemon.signal('SIGTERM')).code).toBe(0);
  // Every actual landed once: none appeared again after the restart.
  const landed = actualsLanded();
  expect(landed).toEqual(expect.arrayContaining(landedBefore));
  expect(new Set(landed).size).toBe(landed.length);
}, 360_000);
