import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { assessHealth, type DatabaseStatus, type RulesStatus, type SourceStatus } from '../../src/service/health.ts';
import { createScheduler } from '../../src/service/scheduler.ts';

const T0 = Date.parse('2026-11-21T12:00:00Z');
const rulesOk: RulesStatus = { failedAtStart: false, problems: [], loadedAt: new Date(T0).toISOString(), rules: 3, channels: 1, lastReload: undefined };

const sqlite: DatabaseStatus = { kind: 'sqlite', ok: true, error: null };
/** Alone on its database: every source led from the start. */
const alone = (sources: readonly SourceStatus[]) => new Map(sources.map((s) => [s.source, T0]));

function source(patch: Partial<SourceStatus>): SourceStatus {
  return { source: 'events', intervalMs: 10_000, lastSuccessAt: null, lastErrorAt: null, lastError: null, lastOkAt: undefined, lastErrorStatus: undefined, idle: false, ...patch };
}

describe('assessHealth', () => {
  it.each([
    { name: 'fresh after start, before any poll', s: source({}), now: T0 + 20_000, reason: undefined },
    { name: 'no good poll two intervals after start', s: source({ lastErrorStatus: 503 }), now: T0 + 20_001, reason: /^source events never polled successfully since the start 20 s ago/, never: true },
    { name: 'no poll for three intervals since start', s: source({}), now: T0 + 30_001, reason: /^source events stale: no successful poll for 30 s/, never: true },
    { name: 'recent success', s: source({ lastOkAt: T0 + 50_000 }), now: T0 + 60_000, reason: undefined },
    { name: 'one failure after a success, within three intervals', s: source({ lastOkAt: T0 + 1_000, lastErrorStatus: 503 }), now: T0 + 25_000, reason: undefined },
    { name: 'last success past three intervals', s: source({ lastOkAt: T0 + 10_000 }), now: T0 + 40_001, reason: /stale/ },
    { name: 'idle (nothing to check) counts as good', s: source({ source: 'runs', idle: true, lastOkAt: T0 + 55_000 }), now: T0 + 60_000, reason: undefined },
    { name: 'idle from the first poll is not "never polled"', s: source({ source: 'reports', idle: true, lastOkAt: T0 + 5 }), now: T0 + 25_000, reason: undefined },
    { name: 'a success from before this start counts from the start', s: source({ lastOkAt: T0 - 3_600_000 }), now: T0 + 1_000, reason: undefined },
    { name: 'key refused (401) at once', s: source({ lastErrorStatus: 401 }), now: T0 + 1_000, reason: /^source events: the API refused the key \(HTTP 401\): check EDGEWATCH_API_KEY$/ },
    { name: 'key refused (403) after a success', s: source({ lastOkAt: T0 + 1_000, lastErrorStatus: 403 }), now: T0 + 2_000, reason: /HTTP 403.*EDGEWATCH_API_KEY/ },
  ])('$name', ({ s, now, reason, never = false }) => {
    const { httpStatus, report } = assessHealth({ sources: [s], rules: rulesOk, database: sqlite, leads: alone([s]), startedAt: T0, now });
    expect(httpStatus).toBe(reason ? 503 : 200);
    if (reason) expect(report.reasons).toEqual([expect.stringMatching(reason)]);
    else expect(report.reasons).toEqual([]);
    const entry = report.sources[s.source]!;
    expect(entry.key_refused).toBe(s.lastErrorStatus === 401 || s.lastErrorStatus === 403);
    expect(entry.never_succeeded).toBe(never);
  });

  it.each([
    { name: 'not led: the process that leads it answers for it', leads: new Map<string, number>(), now: T0 + 600_000, reason: undefined, leader: false },
    { name: 'taken over: fresh from when it took the lead', leads: new Map([['events', T0 + 100_000]]), now: T0 + 110_000, reason: undefined, leader: true },
    {
      name: 'taken over: no good poll two intervals after the lead',
      leads: new Map([['events', T0 + 100_000]]),
      now: T0 + 120_001,
      reason: /^source events never polled successfully since this process took it over 20 s ago/,
      leader: true,
    },
  ])('$name', ({ leads, now, reason, leader }) => {
    // A good poll of its own, long before: it led the source then, lost it, and leads it again.
    const s = source({ lastOkAt: T0 + 5_000 });
    const { httpStatus, report } = assessHealth({ sources: [s], rules: rulesOk, database: { kind: 'postgres', ok: true, error: null }, leads, startedAt: T0, now });
    expect(report.reasons).toEqual(reason ? [expect.stringMatching(reason)] : []);
    expect(httpStatus).toBe(reason ? 503 : 200);
    expect(report.sources.events!.leader).toBe(leader);
    expect(report.leads).toEqual(leader ? ['events'] : []);
  });

  it('answers 503 while the database cannot be reached, naming why', () => {
    const database: DatabaseStatus = { kind: 'postgres', ok: false, error: 'cannot reach PostgreSQL at db.internal:5432: connect ECONNREFUSED' };
    const { httpStatus, report } = assessHealth({ sources: [source({})], rules: rulesOk, database, leads: new Map(), startedAt: T0, now: T0 + 1_000 });
    expect(httpStatus).toBe(503);
    expect(report.reasons).toEqual(['database unreachable: cannot reach PostgreSQL at db.internal:5432: connect ECONNREFUSED']);
    expect(report.database).toEqual(database);
  });

  it('answers 503 when the rules failed to load at start, not after a failed reload', () => {
    const failedAtStart = assessHealth({ sources: [], rules: { ...rulesOk, failedAtStart: true, problems: ['r.yaml:1:1: x'] }, database: sqlite, leads: new Map(), startedAt: T0, now: T0 });
    expect(failedAtStart.httpStatus).toBe(503);
    expect(failedAtStart.report.reasons).toEqual(['rules failed to load at start']);
    const failedReload = assessHealth({ sources: [], rules: { ...rulesOk, lastReload: { at: 'now', ok: false, problems: ['r.yaml:2:3: y'] } }, database: sqlite, leads: new Map(), startedAt: T0, now: T0 });
    expect(failedReload.httpStatus).toBe(200);
    expect(failedReload.report.rules.last_reload).toMatchObject({ ok: false, problems: ['r.yaml:2:3: y'] });
  });
});

describe('createScheduler', () => {
  it('never overlaps a task with itself, and stop() waits for the run in flight', async () => {
    const scheduler = createScheduler();
    let running = 0;
    let maxRunning = 0;
    let runs = 0;
    scheduler.every('slow', 10, async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await sleep(45);
      running--;
      runs++;
    });
    await sleep(120);
    await scheduler.stop();
    const after = runs;
    expect(maxRunning).toBe(1);
    expect(runs).toBeGreaterThanOrEqual(1);
    expect(running).toBe(0);
    await sleep(40);
    expect(runs).toBe(after);
  });

  it('reports a throwing task and keeps scheduling it', async () => {
    const errors: string[] = [];
    const scheduler = createScheduler({ onError: (name, error) => errors.push(`${name}: ${(error as Error).message}`) });
    scheduler.every('bad', 10, async () => {
      throw new Error('boom');
    });
    await sleep(55);
    await scheduler.stop();
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(errors[0]).toBe('bad: boom');
  });
});
