// Two `edgewatch run` processes on one PostgreSQL database (a real server: test/helpers/postgres.ts),
// either SIGKILLed at random moments, 24 times, and started again, while the sandbox's world moves
// between phases. At the end the alerts stored equal those of an uninterrupted SQLite run over the
// same world (none lost, none doubled), the webhook receiver accepted every delivery at least once,
// and it saw an id twice no more often than the kills hit a send (a send claimed and not yet
// settled, sent again with the same id once its lease ran out). Slow: `npm run test:faults`.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { claimLeaseMs } from '../../src/notify/outbox.ts';
import { BIN, REPO, startSandboxWithRules } from '../helpers/cli.ts';
import { childEnv } from '../helpers/daemon.ts';
import { startPostgres } from '../helpers/postgres.ts';
import { answer, startWebhookReceiver } from '../helpers/receivers.ts';
import { openSql } from '../helpers/sql.ts';
import { alertKeys, mulberry32, pick, sample, killTestRules, startReferenceRun } from './harness.ts';

const KILLS = 24;

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  cleanup = [];
});

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

describe('two processes on PostgreSQL, killed at random', () => {
  it(`store every alert once and deliver each at least once across ${KILLS} SIGKILLs of either`, { timeout: 300_000 }, async () => {
    // A slow receiver (0.4 s an answer), so that kills land in sends too: the receiver has a
    // request, the store a claim not yet settled.
    const receiver = await startWebhookReceiver((request, res) => void setTimeout(() => answer(204)(request, res), 400));
    cleanup.push(() => receiver.close());
    const scene = await startSandboxWithRules({
      sandbox: { seed: 5, events: 400, kpis: 20 },
      dirPrefix: 'edgewatch-pg-kill-',
      rules: killTestRules(receiver.url),
    });
    cleanup.push(() => scene.close());
    const { sandbox } = scene;
    const server = await startPostgres();
    cleanup.push(() => server.stop());
    const database = await server.createDatabase();
    const sql = new pg.Client({ connectionString: database });

    // The reference: one uninterrupted in-process run on SQLite, polled once per phase.
    const reference = await startReferenceRun(scene);
    cleanup.push(() => reference.close());
    expect(reference.problems).toEqual([]);
    const referencePoll = reference.poll;

    const env = (key: string) =>
      childEnv({
        ...scene.env,
        EDGEWATCH_DB: database,
        EDGEWATCH_API_KEY: key,
        EDGEWATCH_TEMPLATES: path.join(REPO, 'templates'),
        EDGEWATCH_PORT: '0',
        EDGEWATCH_POLL_EVENTS: '1s',
        EDGEWATCH_POLL_KPIS: '1h',
        EDGEWATCH_POLL_REPORTS: '1h',
        EDGEWATCH_POLL_RUNS: '1h',
        EDGEWATCH_LOG_LEVEL: 'error',
      });
    const start = (key: string): ChildProcess => {
      const child = spawn(process.execPath, [BIN, 'run'], { cwd: REPO, env: env(key), stdio: ['ignore', 'ignore', 'pipe'] });
      child.stderr?.resume();
      return child;
    };
    const processes = new Map([
      ['proc-a', start('proc-a')],
      ['proc-b', start('proc-b')],
    ]);
    cleanup.push(async () => {
      for (const child of processes.values()) {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        await exited(child);
      }
    });
    await sql.connect();
    cleanup.push(() => sql.end());
    const count = async (query: string): Promise<number> => Number((await sql.query<{ n: string }>(query)).rows[0]!.n);

    // Both runs take their baseline of the same world before anything moves.
    expect((await referencePoll()).failures).toEqual([]);
    for (let i = 0; i < 100; i++) {
      const ready = await count("SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 'source_state'");
      if (ready > 0 && (await count("SELECT count(*) AS n FROM source_state WHERE source = 'events' AND baseline_at IS NOT NULL")) > 0) break;
      await sleep(200);
    }
    expect(await count("SELECT count(*) AS n FROM source_state WHERE source = 'events' AND baseline_at IS NOT NULL")).toBe(1);

    // Phases: each changes entities no other phase touches, then one of the two processes, at
    // random, is killed at a random moment and started again.
    const rng = mulberry32(77);
    const movers = sample(rng, sandbox.world.eventTickers(), KILLS * 6);
    let kills = 0;
    let sendsHit = 0;
    for (let phase = 0; phase < KILLS; phase++) {
      for (const t of movers.slice(phase * 6, phase * 6 + 6)) sandbox.world.updateEvent(t, { edge_pp: rng() < 0.5 ? 4 : 15 + rng() * 10 });
      sandbox.world.addEvent();
      expect((await referencePoll()).failures).toEqual([]);
      await sleep(200 + rng() * 1800);
      const key = pick(rng, ['proc-a', 'proc-b']);
      const victim = processes.get(key)!;
      victim.kill('SIGKILL');
      await exited(victim);
      kills++;
      // What it was sending (claimed, not settled) may reach the receiver twice.
      sendsHit += await count(`SELECT (SELECT count(*) FROM deliveries WHERE claimed_by = ${victim.pid}) + (SELECT count(*) FROM digests WHERE claimed_by = ${victim.pid}) AS n`);
      processes.set(key, start(key));
    }

    // Then uninterrupted: they catch up, and what the killed processes held is sent again once its
    // lease runs out (claimLeaseMs: 30 s for a webhook).
    const referenceSql = openSql(reference.dbPath);
    const expected = alertKeys(referenceSql).sort();
    referenceSql.close();
    const stored = async () => (await sql.query<{ id: string; rule: string; entity: string }>('SELECT id, rule, entity FROM alerts')).rows.map((a) => `${a.rule} ${a.entity} ${a.id}`).sort();
    const undelivered = () => count("SELECT count(*) AS n FROM deliveries WHERE status <> 'delivered'");
    for (let i = 0; i < 600 && ((await stored()).length < expected.length || (await undelivered()) > 0); i++) await sleep(200);
    for (const child of processes.values()) {
      child.kill('SIGTERM');
      await exited(child);
      expect(child.exitCode).toBe(0);
    }

    expect(kills).toBe(KILLS);
    expect(expected.length).toBeGreaterThan(KILLS);
    expect(await stored()).toEqual(expected);
    expect(await undelivered()).toBe(0);
    const storedIds = expected.map((k) => k.split(' ')[2]!).sort();
    const received = receiver.requests.map((request) => String(request.headers['webhook-id']));
    expect([...new Set(received)].sort()).toEqual(storedIds);
    const duplicates = received.length - new Set(received).size;
    expect(duplicates).toBeLessThanOrEqual(sendsHit);
    // A send the kill hit goes again only once its lease ran out (the claim came shortly before
    // the first arrival), never earlier.
    const firstArrival = new Map<string, number>();
    for (const request of receiver.requests) {
      const id = String(request.headers['webhook-id']);
      const first = firstArrival.get(id);
      if (first === undefined) firstArrival.set(id, request.at);
      else expect(request.at - first).toBeGreaterThanOrEqual(claimLeaseMs('webhook') - 1000);
    }
    // A redelivery carries the same id in its header and body.
    for (const request of receiver.requests) expect(String(request.headers['webhook-id'])).toBe(request.json().id);
    console.log(`postgres kill test: ${kills} kills, ${sendsHit} sends hit, ${duplicates} duplicates at the receiver, ${expected.length} alerts`);
  });
});
