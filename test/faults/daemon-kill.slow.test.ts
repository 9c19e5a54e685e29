// 30 SIGKILLs of the daemon (`edgewatch run`) at random points of a long scripted scenario: the
// sandbox moves by world hooks between phases, the daemon polls every second and delivers to a
// webhook receiver that records every request. At the end, the stored alerts equal those of an
// in-process pipeline polled once per phase over the same scenario, every stored alert was
// delivered, and every redelivery carried the same id. Slow (about a minute): `npm run test:faults`.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.ts';
import { BIN, REPO, startSandboxWithRules } from '../helpers/cli.ts';
import { answer, startWebhookReceiver } from '../helpers/receivers.ts';
import { openSql } from '../helpers/sql.ts';
import { alertKeys, mulberry32, sample, killTestRules, startReferenceRun } from './harness.ts';
import { waitFor } from '../helpers/wait.ts';

const KILLS = 30;

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  cleanup = [];
});

const stderrOf = new WeakMap<ChildProcess, string>();

function startDaemon(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [BIN, 'run'], {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  stderrOf.set(child, '');
  child.stderr?.on('data', (chunk: Buffer) => stderrOf.set(child, (stderrOf.get(child)! + chunk.toString()).slice(-20_000)));
  return child;
}

/** Resolves once the daemon has logged 'started' (its signal handlers are installed by then). */
async function untilStarted(child: ChildProcess): Promise<void> {
  await waitFor('the daemon started', () => {
    const text = stderrOf.get(child) ?? '';
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the daemon exited before it started:\n${text.slice(-2000)}`);
    return text.includes('"msg":"started"');
  }, 20_000);
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

describe('daemon crashes', () => {
  it(`delivers every alert of an uninterrupted run, with stable ids, across ${KILLS} SIGKILLs`, { timeout: 240_000 }, async () => {
    // The webhook receiver: every request recorded.
    const receiver = await startWebhookReceiver(answer(204));
    cleanup.push(() => receiver.close());
    const hookUrl = receiver.url;

    const scene = await startSandboxWithRules({
      sandbox: { seed: 5, events: 400, kpis: 20 },
      dirPrefix: 'edgewatch-daemon-kill-',
      rules: killTestRules(hookUrl),
    });
    cleanup.push(() => scene.close());
    const { sandbox, dir } = scene;

    // The reference: an in-process pipeline on its own database, polled once per phase.
    const reference = await startReferenceRun(scene);
    cleanup.push(() => reference.close());
    expect(reference.problems).toEqual([]);
    const referencePoll = reference.poll;

    const dbPath = path.join(dir, 'daemon.db');
    const env = {
      ...scene.env,
      EDGEWATCH_DB: dbPath,
      EDGEWATCH_TEMPLATES: path.join(REPO, 'templates'),
      EDGEWATCH_PORT: '0',
      EDGEWATCH_POLL_EVENTS: '1s',
      EDGEWATCH_POLL_KPIS: '1h',
      EDGEWATCH_POLL_REPORTS: '1h',
      EDGEWATCH_POLL_RUNS: '1h',
      EDGEWATCH_LOG_LEVEL: 'info',
    };
    let daemon = startDaemon(env);
    cleanup.push(async () => {
      if (daemon.exitCode === null && daemon.signalCode === null) {
        daemon.kill('SIGKILL');
        await exited(daemon);
      }
    });

    // Both take their baseline of the same world before anything moves.
    expect((await referencePoll()).failures).toEqual([]);
    const stored = async (): Promise<{ alerts: string[]; undelivered: number; baseline: boolean }> => {
      const store = await openStore(dbPath, { busyTimeoutMs: 2000 });
      const sql = openSql(dbPath);
      try {
        const undelivered = sql.prepare<[], { n: number }>("SELECT count(*) AS n FROM deliveries WHERE status <> 'delivered'").get()!.n;
        const baseline = sql.prepare("SELECT 1 FROM source_state WHERE source = 'events' AND baseline_at IS NOT NULL").get() !== undefined;
        return { alerts: alertKeys(sql), undelivered, baseline };
      } finally {
        sql.close();
        await store.close();
      }
    };
    for (let i = 0; i < 100 && !(await stored()).baseline; i++) await sleep(200);
    expect((await stored()).baseline).toBe(true);

    // Phases: each changes entities that no other phase touches (so that a poll missed while the
    // daemon was down merges nothing), then the daemon is killed at a random point and restarted.
    const rng = mulberry32(99);
    const movers = sample(rng, sandbox.world.eventTickers(), KILLS * 6);
    let kills = 0;
    for (let phase = 0; phase < KILLS; phase++) {
      for (const t of movers.slice(phase * 6, phase * 6 + 6)) sandbox.world.updateEvent(t, { edge_pp: rng() < 0.5 ? 4 : 15 + rng() * 10 });
      sandbox.world.addEvent();
      expect((await referencePoll()).failures).toEqual([]);
      await sleep(200 + rng() * 1800);
      daemon.kill('SIGKILL');
      expect((await exited(daemon)).signal).toBe('SIGKILL');
      kills++;
      daemon = startDaemon(env);
    }

    // Uninterrupted to the end: it catches up and delivers everything.
    const referenceSql = openSql(reference.dbPath);
    const expected = alertKeys(referenceSql);
    referenceSql.close();
    let state = await stored();
    for (let i = 0; i < 150 && (state.alerts.length < expected.length || state.undelivered > 0); i++) {
      await sleep(200);
      state = await stored();
    }
    // The last start may still be loading: a SIGTERM before Node has run any of edgewatch's code
    // ends the process by the signal, which is Node's doing, not the daemon's.
    await untilStarted(daemon);
    daemon.kill('SIGTERM');
    expect((await exited(daemon)).code).toBe(0);

    expect(kills).toBe(KILLS);
    expect(expected.length).toBeGreaterThan(KILLS);
    expect(state.alerts).toEqual(expected);
    expect(state.undelivered).toBe(0);
    const storedIds = expected.map((k) => k.split(' ')[2]!).sort();
    const headerIds = receiver.requests.map((request) => String(request.headers['webhook-id']));
    expect([...new Set(headerIds)].sort()).toEqual(storedIds);
    // A redelivery carries the same id in its header and body.
    for (const request of receiver.requests) expect(String(request.headers['webhook-id'])).toBe(request.json().id);
  });
});
