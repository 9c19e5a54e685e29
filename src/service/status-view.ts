// What the status page's API answers, as pure functions of what the store and the daemon hold:
// sources, rules (trigger in words, firings per hour, digest times), alert queries, an entity's
// fields and the history of one of them. No I/O, no clock (`now` is a parameter).
import { formatDuration } from '../core/duration.ts';
import { entityTitle } from '../core/entity-title.ts';
import { formatValue, oneLine } from '../core/format.ts';
import { SEVERITIES, type Snapshot, type SourceName } from '../core/types.ts';
import { digestDueAt } from '../notify/digests.ts';
import { htmlToText } from '../render/index.ts';
import { filterInWords, getPath, thresholdOf, triggerField, triggerInWords, type Digest, type Rule } from '../rules/index.ts';
import type { AlertFilter, AlertListing, OpenBatch, StoredVersion } from '../store/index.ts';
import type { AlertJson, DigestJson, EntityJson, HistoryJson, RuleJson, SourceJson, SourceState } from './api-types.ts';
import type { HealthReport } from './health.ts';

/** A query parameter that cannot be used: names it and says what it takes. */
export interface BadParameter {
  ok: false;
  message: string;
}

type Parsed<T> = ({ ok: true } & T) | BadParameter;

export function sourceViews(health: HealthReport, entities: ReadonlyMap<string, number>): SourceJson[] {
  return Object.entries(health.sources).map(([name, s]) => {
    const failing = s.key_refused || (s.last_error_at !== null && (s.last_success_at === null || s.last_error_at > s.last_success_at));
    const standby = !s.leader && health.database.kind === 'postgres';
    const state: SourceState = standby ? 'standby' : s.stale ? 'stale' : failing ? 'failing' : s.idle ? 'idle' : s.last_success_at === null ? 'waiting' : 'ok';
    return {
      name,
      state,
      interval_seconds: s.interval_seconds,
      last_success_at: s.last_success_at,
      last_error_at: s.last_error_at,
      last_error: s.last_error,
      recovered: !failing && s.last_error_at !== null && s.last_success_at !== null,
      key_refused: s.key_refused,
      entities: entities.get(name) ?? 0,
      leader: s.leader,
    };
  });
}

const HOUR_MS = 3_600_000;
export const CHART_HOURS = 24;

/** The first of the last 24 UTC hours, the current one included. */
export function hoursFrom(now: Date): Date {
  return new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS - (CHART_HOURS - 1) * HOUR_MS);
}

/** One rule's alerts per hour (`2026-11-21T18` buckets, from alertsPerHour) over the last 24 hours, oldest first. */
export function hourlyFirings(rows: ReadonlyArray<{ rule: string; hour: string; count: number }>, rule: string, now: Date): number[] {
  const first = hoursFrom(now).getTime();
  const counts = new Array<number>(CHART_HOURS).fill(0);
  for (const row of rows) {
    if (row.rule !== rule) continue;
    const index = Math.round((Date.parse(`${row.hour}:00:00Z`) - first) / HOUR_MS);
    if (index >= 0 && index < CHART_HOURS) counts[index]! += row.count;
  }
  return counts;
}

/** `18:00` in the time zone. */
function clock(at: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(at);
}

/** When the rule's digest goes next (its oldest open batch's time, else the next one from now), in words. */
export function digestView(rule: string, digest: Digest, batches: readonly OpenBatch[], now: Date): DigestJson {
  const opened = batches.filter((batch) => batch.rule === rule).map((batch) => new Date(batch.openedAt));
  const due = opened.length > 0 ? new Date(Math.min(...opened.map((at) => digestDueAt(digest, at).getTime()))) : digestDueAt(digest, now);
  const zone = digest.timezone ?? 'UTC';
  let waitingFor: string;
  if (digest.cron !== undefined) waitingFor = `the ${clock(due, zone)} ${zone} digest`;
  else if (opened.length > 0) waitingFor = `the digest due at ${clock(due, 'UTC')} UTC`;
  else waitingFor = `the digest ${formatDuration(digest.windowMs ?? 0)} after the first alert`;
  return {
    cron: digest.cron ?? null,
    timezone: digest.cron !== undefined ? zone : null,
    window_seconds: digest.windowMs === undefined ? null : digest.windowMs / 1000,
    next_at: due.toISOString(),
    waiting_for: waitingFor,
  };
}

export interface RuleFacts {
  lastFired: ReadonlyMap<string, string>;
  perHour: ReadonlyArray<{ rule: string; hour: string; count: number }>;
  batches: readonly OpenBatch[];
  now: Date;
}

export function ruleView(rule: Rule, facts: RuleFacts): RuleJson {
  const threshold = thresholdOf(rule.trigger);
  const firings = hourlyFirings(facts.perHour, rule.name, facts.now);
  return {
    name: rule.name,
    description: rule.description ?? null,
    source: rule.source,
    severity: rule.severity,
    trigger: { ...rule.trigger },
    trigger_text: triggerInWords(rule.trigger),
    field: triggerField(rule.trigger) ?? null,
    threshold: threshold ? { side: threshold.side, value: threshold.value, rearm_at: threshold.rearmAt, abs: threshold.abs } : null,
    filter: Object.fromEntries(rule.filter.map((clause) => [clause.field, Object.fromEntries(clause.conditions.map((c) => [c.op, c.value]))])),
    filter_text: filterInWords(rule.filter),
    notify: rule.notify,
    cooldown_seconds: rule.cooldownMs === undefined ? null : rule.cooldownMs / 1000,
    digest: rule.digest ? digestView(rule.name, rule.digest, facts.batches, facts.now) : null,
    last_fired_at: facts.lastFired.get(rule.name) ?? null,
    alerts_24h: firings.reduce((sum, n) => sum + n, 0),
    firings_per_hour: firings,
    hours_from: hoursFrom(facts.now).toISOString(),
  };
}

export const ALERTS_PAGE = { default: 50, max: 500 } as const;
const DELIVERY_STATUSES = ['pending', 'delivered', 'dead', 'silenced', 'inhibited', 'digest'];

function oneOf(name: string, value: string, allowed: readonly string[]): string | undefined {
  return allowed.includes(value) ? undefined : `${name}: expected one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`;
}

/** A whole number in [1, max] from a query parameter, `fallback` when absent. */
export function parseLimit(query: URLSearchParams, fallback: number, max: number): Parsed<{ limit: number }> {
  const text = query.get('limit');
  if (text === null || text === '') return { ok: true, limit: fallback };
  const limit = Number(text);
  if (!/^\d+$/.test(text) || limit < 1 || limit > max) return { ok: false, message: `limit: expected a whole number from 1 to ${max}, got ${JSON.stringify(text)}` };
  return { ok: true, limit };
}

/** `/api/alerts?rule=&source=&entity=&severity=&status=&before=&limit=`: empty parameters count as absent. */
export function parseAlertQuery(query: URLSearchParams): Parsed<{ filter: AlertFilter; limit: number }> {
  const known = ['rule', 'source', 'entity', 'severity', 'status', 'before', 'limit'];
  const unknown = [...query.keys()].find((key) => !known.includes(key));
  if (unknown !== undefined) return { ok: false, message: `unknown parameter ${JSON.stringify(unknown)} (${known.join(', ')})` };
  const limit = parseLimit(query, ALERTS_PAGE.default, ALERTS_PAGE.max);
  if (!limit.ok) return limit;
  const filter: AlertFilter = {};
  for (const key of ['rule', 'source', 'entity', 'severity', 'status', 'before'] as const) {
    const value = query.get(key);
    if (value !== null && value !== '') filter[key] = value;
  }
  const problem =
    (filter.severity !== undefined ? oneOf('severity', filter.severity, SEVERITIES) : undefined) ??
    (filter.status !== undefined ? oneOf('status', filter.status, DELIVERY_STATUSES) : undefined);
  if (problem !== undefined) return { ok: false, message: problem };
  return { ok: true, filter, limit: limit.limit };
}

/** An alert as the API shows it: the `alerts --json` shape. */
export function alertView(alert: AlertListing): AlertJson {
  return alert;
}

/**
 * The entity's alerts whose condition has not cleared: for each crosses rule the rules' memory
 * holds disarmed (beyond its threshold, not re-armed since), its latest alert on the entity.
 */
export function openAlerts(alerts: readonly AlertListing[], states: ReadonlyArray<{ rule: string; armed: number }>, rules: readonly Rule[]): AlertListing[] {
  const crosses = new Set(rules.filter((rule) => rule.trigger.type === 'crosses').map((rule) => rule.name));
  const disarmed = new Set(states.filter((state) => state.armed === 0 && crosses.has(state.rule)).map((state) => state.rule));
  const open: AlertListing[] = [];
  for (const alert of alerts) {
    if (!disarmed.has(alert.rule)) continue;
    disarmed.delete(alert.rule); // newest first: the rule's latest only
    open.push(alert);
  }
  return open;
}

/** The snapshot's top-level fields as people read them, on one line each; rich text (HTML) as its text. */
export function readableFields(snapshot: Snapshot): Array<{ field: string; text: string }> {
  return Object.entries(snapshot).map(([field, value]) => ({
    field,
    text: oneLine(typeof value === 'string' && field.endsWith('_richtext') ? htmlToText(value) : formatValue(field, value)),
  }));
}

export function entityView(
  source: string,
  key: string,
  row: { seq: number; data: string; first_seen_at: string; updated_at: string },
  alerts: readonly AlertListing[],
  open: readonly AlertListing[],
  now: Date,
): EntityJson {
  const snapshot = JSON.parse(row.data) as Snapshot;
  return {
    now: now.toISOString(),
    source,
    key,
    // A source added since titles by its key.
    title: entityTitle(source as SourceName, snapshot, key) ?? key,
    seq: row.seq,
    first_seen_at: row.first_seen_at,
    updated_at: row.updated_at,
    snapshot,
    fields: readableFields(snapshot),
    alerts: alerts.map(alertView),
    open_alerts: open.map(alertView),
  };
}

/** A field's value in a snapshot as the chart reads it: numbers, strings and booleans as they are, anything else null. */
function pointValue(value: unknown): number | string | boolean | null {
  return typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean' ? value : null;
}

export function historyView(
  source: string,
  key: string,
  field: string,
  versions: readonly StoredVersion[],
  alerts: HistoryJson['alerts'],
  now: Date,
): HistoryJson {
  return {
    now: now.toISOString(),
    source,
    key,
    field,
    points: versions.map((version) => ({ seq: version.seq, at: version.stored_at, value: pointValue(getPath(JSON.parse(version.data), field)) })),
    alerts,
  };
}

/** The rules whose trigger watches `field` on `source`: their alerts are marked on its history. */
export function rulesWatching(rules: readonly Rule[], source: string, field: string): string[] {
  return rules.filter((rule) => rule.source === source && triggerField(rule.trigger) === field).map((rule) => rule.name);
}
