// The status API's pure parts: sources' states, firings per hour, digest times in words, queries.
import { describe, expect, it } from 'vitest';
import { DigestSchema } from '../../src/rules/schema.ts';
import type { HealthReport } from '../../src/service/health.ts';
import { digestView, hourlyFirings, hoursFrom, parseAlertQuery, readableFields, sourceViews } from '../../src/service/status-view.ts';

type SourceHealth = HealthReport['sources'][string];
const healthy: SourceHealth = {
  leader: true,
  interval_seconds: 300,
  last_success_at: '2026-11-21T18:00:00.000Z',
  last_error_at: null,
  last_error: null,
  idle: false,
  staleness_seconds: 10,
  stale: false,
  key_refused: false,
  never_succeeded: false,
};

describe('sourceViews', () => {
  it.each([
    { name: 'ok', source: healthy, state: 'ok', recovered: false },
    { name: 'failing after a success', source: { ...healthy, last_error_at: '2026-11-21T18:05:00.000Z', last_error: 'HTTP 500' }, state: 'failing', recovered: false },
    { name: 'recovered after an error', source: { ...healthy, last_error_at: '2026-11-21T17:55:00.000Z', last_error: 'HTTP 500' }, state: 'ok', recovered: true },
    { name: 'never succeeded', source: { ...healthy, last_success_at: null, last_error_at: '2026-11-21T17:55:00.000Z', last_error: 'HTTP 500' }, state: 'failing', recovered: false },
    { name: 'key refused', source: { ...healthy, key_refused: true }, state: 'failing', recovered: false },
    { name: 'stale', source: { ...healthy, stale: true }, state: 'stale', recovered: false },
    { name: 'idle', source: { ...healthy, idle: true, last_success_at: null }, state: 'idle', recovered: false },
    { name: 'not polled yet', source: { ...healthy, last_success_at: null }, state: 'waiting', recovered: false },
  ])('$name', ({ source, state, recovered }) => {
    const health = { sources: { 'any-source': source } } as unknown as HealthReport;
    expect(sourceViews(health, new Map([['any-source', 7]]))).toEqual([expect.objectContaining({ name: 'any-source', state, recovered, entities: 7 })]);
  });
});

describe('hourlyFirings', () => {
  it('counts a rule alerts in the last 24 UTC hours, oldest first, the current hour last', () => {
    const now = new Date('2026-11-21T18:40:00Z');
    expect(hoursFrom(now).toISOString()).toBe('2026-11-20T19:00:00.000Z');
    const rows = [
      { rule: 'a', hour: '2026-11-21T18', count: 3 },
      { rule: 'a', hour: '2026-11-20T19', count: 1 },
      { rule: 'a', hour: '2026-11-20T18', count: 9 }, // before the window
      { rule: 'b', hour: '2026-11-21T18', count: 5 },
    ];
    const counts = hourlyFirings(rows, 'a', now);
    expect(counts).toHaveLength(24);
    expect(counts[0]).toBe(1);
    expect(counts[23]).toBe(3);
    expect(counts.reduce((x, y) => x + y, 0)).toBe(4);
  });
});

describe('digestView', () => {
  const now = new Date('2026-11-21T12:34:00Z');
  it('says which cron digest an alert waits for, in the rule time zone', () => {
    expect(digestView('r', DigestSchema.parse({ cron: '0 18 * * *' }), [], now)).toEqual({
      cron: '0 18 * * *',
      timezone: 'UTC',
      window_seconds: null,
      next_at: '2026-11-21T18:00:00.000Z',
      waiting_for: 'the 18:00 UTC digest',
    });
    expect(digestView('r', DigestSchema.parse({ cron: '0 18 * * *', timezone: 'Europe/London' }), [], now).waiting_for).toBe('the 18:00 Europe/London digest');
  });

  it('gives a window digest the time its open batch is due', () => {
    const digest = DigestSchema.parse({ window: '15m' });
    const batch = { rule: 'r', channel: 'c', openedAt: '2026-11-21T12:30:00.000Z', firstId: 1, size: 2 };
    expect(digestView('r', digest, [batch], now)).toMatchObject({ window_seconds: 900, next_at: '2026-11-21T12:45:00.000Z', waiting_for: 'the digest due at 12:45 UTC' });
    expect(digestView('r', digest, [{ ...batch, rule: 'other' }], now).waiting_for).toBe('the digest 15m after the first alert');
  });
});

describe('parseAlertQuery', () => {
  it.each([
    { query: '', result: { ok: true, filter: {}, limit: 50 } },
    { query: 'rule=a&entity=K%2F1&severity=critical&status=dead&before=X&limit=500', result: { ok: true, filter: { rule: 'a', entity: 'K/1', severity: 'critical', status: 'dead', before: 'X' }, limit: 500 } },
    { query: 'limit=501', result: { ok: false, message: 'limit: expected a whole number from 1 to 500, got "501"' } },
    { query: 'limit=1.5', result: { ok: false, message: 'limit: expected a whole number from 1 to 500, got "1.5"' } },
    { query: 'status=sent', result: { ok: false, message: 'status: expected one of pending, delivered, dead, silenced, inhibited, digest, got "sent"' } },
  ])('$query', ({ query, result }) => {
    expect(parseAlertQuery(new URLSearchParams(query))).toEqual(result);
  });
});

describe('readableFields', () => {
  it('formats values as messages do, and rich text as its text', () => {
    expect(readableFields({ edge_pp: 12.34, near_settled: true, summary_richtext: '<p>Model <em>up</em> &amp; away</p>', actual: { formatted: '1.2M' } })).toEqual([
      { field: 'edge_pp', text: '+12.3 pp' },
      { field: 'near_settled', text: 'yes' },
      { field: 'summary_richtext', text: 'Model up & away' },
      { field: 'actual', text: '1.2M' },
    ]);
  });
});
