// `backtest`: each event's recorded history (GET /predictions/events/{t}/history) replayed, oldest
// first, through the live cycle's per-page ingest on a throwaway store (replay.ts): baseline at the
// first snapshot, then re-arm, cooldown and filters exactly as polling judges them. Nothing is sent
// and no stored state changes. The range and the report are pure functions; runBacktest reads.
import type { ApiClient } from '../api/index.ts';
import type { Snapshot } from '../core/types.ts';
import { matchesFilter, type Rule } from '../rules/index.ts';
import { errorStatus, eventSnapshot } from '../sources/index.ts';
import { openReplay } from './replay.ts';

export const MAX_BACKTEST_DAYS = 90;
export const DEFAULT_BACKTEST_DAYS = 7;
const DAY_MS = 86_400_000;
/** History is read a day at a time: bounded windows give predictable page sizes. */
const WINDOW_MS = DAY_MS;
const PAGE_SIZE = 200;
/** Events replayed at once; their requests share the client's own bounded concurrency. */
const EVENTS_AT_ONCE = 8;
/** Alerts listed one by one per rule in the text report. */
export const LISTED_ALERTS = 10;

export interface BacktestRange {
  from: Date;
  to: Date;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** `2026-11-20T12:00:00Z`: an ISO time in whole seconds, as the API and the webhook contract write times. */
export function isoSeconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * The range of `--days N` (default 7, ending now) or `--from ISO [--to ISO]` (`--to` default now),
 * or a one-line error: an unreadable value, `--from` after `--to`, a range over 90 days.
 */
export function backtestRange(args: { days?: string; from?: string; to?: string }, now: Date): ({ ok: true } & BacktestRange) | { ok: false; error: string } {
  const fail = (error: string) => ({ ok: false as const, error });
  if (args.days !== undefined && (args.from !== undefined || args.to !== undefined)) {
    return fail('--days goes alone: give --days N, or --from ISO [--to ISO]');
  }
  if (args.to !== undefined && args.from === undefined) return fail('--to goes with --from: give --from ISO [--to ISO]');
  if (args.from === undefined) {
    const text = args.days ?? String(DEFAULT_BACKTEST_DAYS);
    const days = /^\d+$/.test(text) ? Number(text) : NaN;
    if (!Number.isInteger(days) || days < 1) return fail(`--days takes a whole number of days from 1 to ${MAX_BACKTEST_DAYS}, not ${JSON.stringify(text)}`);
    if (days > MAX_BACKTEST_DAYS) return fail(`--days ${days}: a backtest covers at most ${MAX_BACKTEST_DAYS} days`);
    return { ok: true, from: new Date(now.getTime() - days * DAY_MS), to: now };
  }
  const time = (option: string, text: string): Date | string => {
    const ms = ISO_DATE.test(text.trim()) ? Date.parse(text.trim()) : NaN;
    return Number.isNaN(ms) ? `${option} ${JSON.stringify(text)} is not an ISO time (e.g. 2026-11-01 or 2026-11-01T12:00:00Z)` : new Date(ms);
  };
  const from = time('--from', args.from);
  if (typeof from === 'string') return fail(from);
  const to = args.to === undefined ? now : time('--to', args.to);
  if (typeof to === 'string') return fail(to);
  if (from > to) return fail(`--from ${isoSeconds(from)} is after --to ${isoSeconds(to)}`);
  const days = (to.getTime() - from.getTime()) / DAY_MS;
  if (days > MAX_BACKTEST_DAYS) {
    return fail(`the range ${isoSeconds(from)} to ${isoSeconds(to)} is ${Math.ceil(days)} days: a backtest covers at most ${MAX_BACKTEST_DAYS}`);
  }
  return { ok: true, from, to };
}

/** The day-long windows that cover a range, bounds inclusive (a snapshot on a bound is read twice and kept once). */
export function historyWindows(range: BacktestRange): Array<{ from: string; to: string }> {
  const windows: Array<{ from: string; to: string }> = [];
  for (let start = range.from.getTime(); ; start += WINDOW_MS) {
    const end = Math.min(start + WINDOW_MS, range.to.getTime());
    windows.push({ from: new Date(start).toISOString(), to: new Date(end).toISOString() });
    if (end >= range.to.getTime()) return windows;
  }
}

export interface BacktestAlert {
  entity: string;
  /** The captured_at of the snapshot that fired it. */
  fired_at: string;
  summary: string;
}

/** What `backtest --json` prints. */
export interface BacktestReport {
  from: string;
  to: string;
  rules: Array<{ rule: string; entities: number; alerts: BacktestAlert[] }>;
}

export interface BacktestResult {
  report: BacktestReport;
  /**
   * Per rule, the alerts an `unless` entry inhibited (recorded, never sent): not among the report's
   * alerts, whose shape the contract fixes; the text report lists them apart.
   */
  inhibited: Map<string, BacktestAlert[]>;
  /** Events whose history answered 404: skipped, and counted in the output. */
  skipped: string[];
}

export interface BacktestProgress {
  /** Set once the events to replay are known. */
  total?: number;
  /** Events replayed so far. */
  done?: number;
}

export interface BacktestOptions {
  api: Pick<ApiClient, 'eventPages' | 'eventHistoryPages'>;
  /** The events rules to replay. */
  rules: readonly Rule[];
  range: BacktestRange;
  /** Replay these events (for every rule) instead of those each rule's filter matches. */
  entities?: readonly string[];
  onProgress?: (progress: BacktestProgress) => void;
}

type HistoryRow = Record<string, unknown> & { history_id: number; captured_at: string };

/** One event's history within the range, oldest first, every window and page read. */
async function eventHistory(api: BacktestOptions['api'], ticker: string, range: BacktestRange): Promise<HistoryRow[]> {
  const windows = await Promise.all(
    historyWindows(range).map(async (window) => {
      const rows: HistoryRow[] = [];
      const pages = api.eventHistoryPages(ticker, { capturedFrom: window.from, capturedTo: window.to, includeAnalysis: true, excludeEmptyModel: false, limit: PAGE_SIZE });
      for await (const page of pages) rows.push(...page.rows);
      return rows;
    }),
  );
  const byId = new Map<number, HistoryRow>();
  for (const row of windows.flat()) byId.set(row.history_id, row);
  return [...byId.values()].sort((a, b) => Date.parse(a.captured_at) - Date.parse(b.captured_at) || a.history_id - b.history_id);
}

/**
 * A history row as polling would have stored it: the list row's fields that the history does not
 * carry (eligibility, has_history, research, ...) are taken from the event's latest snapshot.
 */
function replayedSnapshot(row: HistoryRow, latest: Snapshot | undefined): Snapshot {
  return eventSnapshot(latest === undefined ? row : { ...latest, ...row });
}

/** Replays the history of every event some rule could match; returns what fired, per rule. */
export async function runBacktest(options: BacktestOptions): Promise<BacktestResult> {
  const { api, rules, range } = options;
  // The events list: the latest snapshot of every event, to choose each rule's events by its filter.
  const latest = new Map<string, Snapshot>();
  for await (const page of api.eventPages({ includeEligibility: true })) {
    for (const row of page.rows) latest.set(row.event_ticker, eventSnapshot(row));
  }
  const wanted = options.entities ?? [...latest.keys()];
  const rulesOf = new Map<string, Rule[]>();
  for (const ticker of wanted) {
    const snapshot = latest.get(ticker);
    const matching = options.entities ? [...rules] : rules.filter((rule) => snapshot !== undefined && matchesFilter(rule.filter, snapshot));
    if (matching.length > 0) rulesOf.set(ticker, matching);
  }
  const tickers = [...rulesOf.keys()];
  options.onProgress?.({ total: tickers.length, done: 0 });

  const fired = new Map<string, BacktestAlert[]>(rules.map((rule) => [rule.name, []]));
  const inhibited = new Map<string, BacktestAlert[]>(rules.map((rule) => [rule.name, []]));
  const skipped: string[] = [];
  const replay = await openReplay();
  let done = 0;
  try {
    const replayEvent = async (ticker: string): Promise<void> => {
      let rows: HistoryRow[];
      try {
        rows = await eventHistory(api, ticker, range);
      } catch (error) {
        if (errorStatus(error) !== 404) throw error;
        skipped.push(ticker);
        return;
      }
      const eventRules = rulesOf.get(ticker) ?? [];
      for (const [i, row] of rows.entries()) {
        const item = { key: ticker, data: replayedSnapshot(row, latest.get(ticker)) };
        const polled = await replay.poll('events', [item], eventRules, new Date(row.captured_at), i === 0);
        for (const alert of polled.alerts) fired.get(alert.rule)?.push({ entity: ticker, fired_at: row.captured_at, summary: alert.summary });
        for (const alert of polled.inhibited) inhibited.get(alert.rule)?.push({ entity: ticker, fired_at: row.captured_at, summary: alert.summary });
      }
    };
    let next = 0;
    let failed = false;
    const worker = async (): Promise<void> => {
      // After a failure the other workers stop too: the command ends with that failure.
      while (next < tickers.length && !failed) {
        try {
          await replayEvent(tickers[next++]!);
        } catch (error) {
          failed = true;
          throw error;
        }
        options.onProgress?.({ done: ++done });
      }
    };
    await Promise.all(Array.from({ length: Math.min(EVENTS_AT_ONCE, tickers.length) }, worker));
  } finally {
    await replay.close();
  }

  const byTime = (a: BacktestAlert, b: BacktestAlert) => Date.parse(a.fired_at) - Date.parse(b.fired_at) || (a.entity < b.entity ? -1 : a.entity > b.entity ? 1 : 0);
  return {
    report: {
      from: isoSeconds(range.from),
      to: isoSeconds(range.to),
      rules: rules.map((rule) => ({
        rule: rule.name,
        entities: tickers.filter((ticker) => rulesOf.get(ticker)!.includes(rule) && !skipped.includes(ticker)).length,
        alerts: fired.get(rule.name)!.sort(byTime),
      })),
    },
    inhibited: new Map([...inhibited].map(([rule, alerts]) => [rule, alerts.sort(byTime)])),
    skipped: skipped.sort(),
  };
}

/** `2026-11-18 04:12 UTC` */
function shortTime(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

const plural = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** The first alerts, one a line with time, entity and summary; a count of the rest. */
function listedAlerts(alerts: readonly BacktestAlert[], rest: string): string[] {
  const width = Math.max(...alerts.slice(0, LISTED_ALERTS).map((a) => a.entity.length));
  const lines = alerts.slice(0, LISTED_ALERTS).map((alert) => `  ${shortTime(alert.fired_at)}  ${alert.entity.padEnd(width)}  ${alert.summary}`);
  if (alerts.length > LISTED_ALERTS) lines.push(`  ... and ${alerts.length - LISTED_ALERTS} more${rest}`);
  return lines;
}

/**
 * The text report: per rule, the alerts in total and per day (UTC), then the first ones with time
 * and summary; then those inhibited by `unless`, apart.
 */
export function formatBacktest(result: BacktestResult): string[] {
  const { report } = result;
  const lines = [`backtest from ${shortTime(report.from)} to ${shortTime(report.to)}`];
  for (const { rule, entities, alerts } of report.rules) {
    lines.push('', `${rule}: ${plural(alerts.length, 'alert')} from ${plural(entities, 'event')}`);
    if (alerts.length > 0) {
      const perDay = new Map<string, number>();
      for (const alert of alerts) {
        const day = shortTime(alert.fired_at).slice(0, 10);
        perDay.set(day, (perDay.get(day) ?? 0) + 1);
      }
      lines.push(`  per day: ${[...perDay].map(([day, n]) => `${day} ${n}`).join(', ')}`);
      lines.push(...listedAlerts(alerts, ' (--json lists them all)'));
    }
    const held = result.inhibited.get(rule) ?? [];
    if (held.length > 0) {
      lines.push(`  and ${inhibitedCount(held.length)}, not counted above nor in --json:`, ...listedAlerts(held, ''));
    }
  }
  return lines;
}

/** `2 alerts inhibited by unless (recorded, never sent)` */
export function inhibitedCount(n: number): string {
  return `${plural(n, 'alert')} inhibited by unless (recorded, never sent)`;
}

/** The line that counts the events skipped because their history answered 404; none when none was. */
export function skippedLine(skipped: readonly string[]): string | undefined {
  if (skipped.length === 0) return undefined;
  const shown = skipped.slice(0, 10).join(', ');
  return `${plural(skipped.length, 'event')} skipped: the API has no history for ${skipped.length === 1 ? 'it' : 'them'} (404): ${shown}${skipped.length > 10 ? ', ...' : ''}`;
}
