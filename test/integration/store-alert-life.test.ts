// An alert's life (timers, resolutions and their notices, source health, silences, the agent's
// answers and its daily limit), the market-search feeds and the status page's reads of an entity
// in the store, on SQLite and PostgreSQL: the same repository functions, the same answers.
import { beforeEach, expect, it } from 'vitest';
import { alertId, causeKey, noticeId } from '../../src/core/alert-id.ts';
import type { Plan } from '../../src/core/plan.ts';
import {
  activeSilences,
  alertsOnEntity,
  applyPlan,
  claimSends,
  dueSends,
  dueTimers,
  entityCounts,
  entityHistory,
  entityRuleStates,
  expireSilence,
  feedSnapshots,
  getEntity,
  insertSilence,
  listAlerts,
  markPollError,
  pendingDwell,
  polledFeeds,
  recordSourceHealth,
  saveExplanation,
  settleSends,
  silencesEndingAfter,
  takeAgentQuestion,
  type Send,
  type Store,
} from '../../src/store/index.ts';
import { describeStores } from '../helpers/databases.ts';

const T0 = new Date('2026-11-21T18:00:00.000Z');
const at = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);
const ID = alertId(causeKey('r', 'events', 'A', 1));

/** Entity A's first snapshot, an alert on it to `hook`, and a dwell timer of rule `slow`. */
function firing(): Plan {
  return {
    source: 'events',
    at: T0.toISOString(),
    snapshots: [{ key: 'A', seq: 1, text: JSON.stringify({ event_ticker: 'A', edge_pp: 12 }) }],
    memory: [],
    alerts: [
      {
        seq: 1,
        alert: {
          id: ID,
          rule: 'r',
          severity: 'warning',
          source: 'events',
          entity: 'A',
          trigger: 'crosses',
          fired_at: '2026-11-21T18:00:00Z',
          summary: 'A crossed',
          changes: [{ field: 'edge_pp', from: 8, to: 12 }],
          current: { event_ticker: 'A', edge_pp: 12 },
        },
      },
    ],
    deliveries: [{ alertId: ID, channel: 'hook', status: 'pending' }],
    timers: [{ rule: 'slow', key: 'A', kind: 'dwell', dueAt: at(600).toISOString(), cause: '1', from: 8 }],
  };
}

/** Entity A back below: the alert resolved, the dwell cleared. */
function resolving(): Plan {
  return {
    source: 'events',
    at: at(60).toISOString(),
    snapshots: [{ key: 'A', seq: 2, text: JSON.stringify({ event_ticker: 'A', edge_pp: 3 }) }],
    memory: [],
    alerts: [],
    deliveries: [],
    clearedTimers: [{ rule: 'slow', key: 'A' }],
    resolutions: [{ id: 'RES1', alertId: ID, resolvedAt: at(60).toISOString(), summary: 'A back below', changes: [{ field: 'edge_pp', from: 12, to: 3 }], seq: 2 }],
  };
}

describeStores("an alert's life", (db) => {
  let store: Store;
  beforeEach(async () => {
    store = await db().open();
  });

  const settled = (send: Send) => ({ send, status: 'delivered' as const, nextAttemptAt: null, error: null, deliveredAt: at(62).toISOString(), durationMs: 3 });

  it('keeps timers by due time, and clears them with the plan that resolves the alert', async () => {
    await applyPlan(store, firing());
    expect(await dueTimers(store, 'events', at(599))).toEqual([]);
    expect(await dueTimers(store, 'events', at(600))).toEqual([{ rule: 'slow', key: 'A', kind: 'dwell', dueAt: at(600).toISOString(), cause: '1', from: 8 }]);
    expect(await pendingDwell(store, 'slow', 'events', 'A')).toMatchObject({ cause: '1' });
    await applyPlan(store, resolving());
    expect(await dueTimers(store, 'events', at(600))).toEqual([]);
    expect(await pendingDwell(store, 'slow', 'events', 'A')).toBeUndefined();
  });

  it("resolves an alert once, with a notice to each of its channels, claimed with a lease as deliveries are", async () => {
    await applyPlan(store, firing());
    await applyPlan(store, resolving());
    await applyPlan(store, resolving());
    expect((await listAlerts(store, 10)).map((a) => a.resolved_at)).toEqual([at(60).toISOString()]);
    const notices = (await dueSends(store, at(61))).filter((send) => send.kind === 'notice');
    expect(notices.map((send) => `${send.channel} ${send.kind === 'notice' && send.notice.kind}`)).toEqual(['hook resolved']);

    // Claimed by a process that dies mid-send: another sends it again once the lease ran out, not before.
    const dead = 2 ** 22 + 17;
    expect(await claimSends(store, notices, at(61), dead, at(91))).toHaveLength(1);
    const other = await db().open();
    const early = (await dueSends(other, at(90))).filter((send) => send.kind === 'notice');
    expect(early).toHaveLength(db().kind === 'sqlite' ? 1 : 0);
    const [late] = (await dueSends(other, at(91))).filter((send) => send.kind === 'notice');
    expect(late).toMatchObject({ kind: 'notice', id: notices[0]!.id, attempts: 1, claimedBy: dead });
    expect(await claimSends(other, [late!], at(91), process.pid, at(121))).toHaveLength(1);
    await settleSends(other, [settled(late!)]);
    expect(await db().rows("SELECT status, CAST(attempts AS integer) AS attempts, claimed_by, claimed_until FROM notices")).toEqual([
      { status: 'delivered', attempts: 2, claimed_by: null, claimed_until: null },
    ]);
  });

  it('records a source degraded once per outage, with a health notice per channel, and its recovery', async () => {
    await markPollError(store, 'events', at(1), 'HTTP 503');
    const change = (status: 'degraded' | 'recovered') => ({ source: 'events' as const, status, error: status === 'degraded' ? 'HTTP 503' : null, channels: ['hook', 'ops'], noticeId: (cause: string) => noticeId(`events\u0000${cause}`) });
    expect(await recordSourceHealth(store, change('degraded'), at(2))).toBe(true);
    expect(await recordSourceHealth(store, change('degraded'), at(3))).toBe(false);
    expect(await recordSourceHealth(store, change('recovered'), at(4))).toBe(true);
    const kinds = (await dueSends(store, at(5))).flatMap((send) => (send.kind === 'notice' && send.notice.kind === 'health' ? [`${send.channel} ${send.notice.status}`] : []));
    expect(kinds.sort()).toEqual(['hook degraded', 'hook recovered', 'ops degraded', 'ops recovered']);
  });

  it('keeps silences: active ones, those that ended lately, and one expired early', async () => {
    const silence = (id: string, start: number, end: number) => ({ id, matchers: { rule: 'r*' }, starts_at: at(start).toISOString(), ends_at: at(end).toISOString(), comment: null, created_by: 'test' });
    await insertSilence(store, silence('S1', 0, 100), at(0));
    await insertSilence(store, silence('S2', 50, 200), at(0));
    expect((await activeSilences(store, at(10))).map((s) => s.id)).toEqual(['S1']);
    expect((await activeSilences(store, at(60))).map((s) => s.id)).toEqual(['S1', 'S2']);
    expect(await expireSilence(store, 'S2', at(70))).toBe(true);
    expect(await expireSilence(store, 'S2', at(71))).toBe(false);
    expect((await activeSilences(store, at(80))).map((s) => s.id)).toEqual(['S1']);
    expect((await silencesEndingAfter(store, at(60))).map((s) => s.id).sort()).toEqual(['S1', 'S2']);
  });

  it("stores the agent's answer once, and counts its questions against the day's limit", async () => {
    await applyPlan(store, firing());
    await saveExplanation(store, ID, { agent: 'a', text: 'first', citations: [] }, at(1));
    await saveExplanation(store, ID, { agent: 'a', text: 'second', citations: [] }, at(2));
    expect(await db().rows('SELECT explanation FROM alerts')).toEqual([{ explanation: JSON.stringify({ agent: 'a', text: 'first', citations: [] }) }]);
    expect([await takeAgentQuestion(store, at(0), 2), await takeAgentQuestion(store, at(1), 2), await takeAgentQuestion(store, at(2), 2)]).toEqual([true, true, false]);
    expect(await takeAgentQuestion(store, new Date('2026-11-22T00:00:01Z'), 2)).toBe(true);
  });

  it("keeps a market-search feed's entities apart from its source's, and knows the feeds polled", async () => {
    const feedPlan: Plan = {
      source: 'rankings',
      feed: 'rankings:top-edge',
      at: T0.toISOString(),
      snapshots: [{ key: 'E1', seq: 1, text: JSON.stringify({ event_ticker: 'E1', rank: 1 }) }],
      memory: [],
      alerts: [],
      deliveries: [],
    };
    await applyPlan(store, feedPlan, { polledFeeds: ['rankings:top-edge'] });
    expect(await feedSnapshots(store, 'rankings:top-edge')).toEqual(new Map([['E1', { event_ticker: 'E1', rank: 1 }]]));
    expect(await feedSnapshots(store, 'rankings')).toEqual(new Map());
    expect(await polledFeeds(store, ['rankings:top-edge', 'rankings:other'])).toEqual(new Set(['rankings:top-edge']));
  });
});

describeStores("the status page's reads of an entity", (db) => {
  it('reads its latest snapshot, its versions oldest first, the rules memory of it and its alerts', async () => {
    const store = await db().open();
    await applyPlan(store, { ...firing(), memory: [{ rule: 'r', key: 'A', state: { armed: false, lastFiredAt: T0.toISOString() } }] });
    await applyPlan(store, resolving());
    expect(await getEntity(store, 'events', 'A')).toMatchObject({ seq: 2, data: JSON.stringify({ event_ticker: 'A', edge_pp: 3 }) });
    expect(await getEntity(store, 'events', 'B')).toBeUndefined();
    expect((await entityHistory(store, 'events', 'A', 10)).map((v) => [v.seq, JSON.parse(v.data) as unknown])).toEqual([
      [1, { event_ticker: 'A', edge_pp: 12 }],
      [2, { event_ticker: 'A', edge_pp: 3 }],
    ]);
    expect((await entityHistory(store, 'events', 'A', 1)).map((v) => v.seq)).toEqual([2]);
    expect(await entityRuleStates(store, 'events', 'A')).toEqual([{ rule: 'r', armed: 0, last_fired_at: T0.toISOString() }]);
    expect(await entityCounts(store)).toEqual(new Map([['events', 1]]));
    expect(await alertsOnEntity(store, 'events', 'A', ['r'])).toEqual([{ id: ID, rule: 'r', severity: 'warning', fired_at: '2026-11-21T18:00:00Z', seq: 1, summary: 'A crossed' }]);
  });
});
