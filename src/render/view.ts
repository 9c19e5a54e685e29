// The alert as a reader sees it: titles, change lines and facts, already formatted.
// Templates get this `view` beside the raw `alert`, so they stay short and logic-free.
import { entityTitle } from '../core/entity-title.ts';
import { DASH, dateTime, formatDelta, formatValue, kpiValue, percent, signedPp, words } from '../core/format.ts';
import { isMarketSource, type Alert, type Change, type MarketSourceName, type Severity } from '../core/types.ts';
import { isRecord } from '../core/values.ts';
import { fieldLabel } from './labels.ts';
import type { DigestMessage } from './types.ts';

export interface Fact {
  label: string;
  value: string;
}

export interface ChangeLine {
  field: string;
  label: string;
  from: string;
  to: string;
  /** Signed difference, for pp and probability fields. */
  delta?: string;
  /** `added` triggers: the elements the list gained, one line (`two legs close within 7 days`). */
  added?: string;
  /** `Edge: +8.1 pp → +12.3 pp (+4.2 pp)` */
  text: string;
}

export interface AlertView {
  id: string;
  rule: string;
  entity: string;
  source: string;
  trigger: string;
  severity: Severity;
  severity_label: string;
  severity_icon: string;
  fired_at: string;
  /** What the alert is about: the event name, company and KPI, report title or run. */
  title: string;
  summary: string;
  /** The summary, prefixed with the title unless it already names it. */
  headline: string;
  changes: ChangeLine[];
  facts: Fact[];
  /** One compact line for lists and digests. */
  line: string;
  /** A sentence the reader must not miss (a refund, a new report). */
  note?: string;
  /** The API's one-line view, plain text. */
  takeaway?: string;
  /** HTML from the API (rich text); only ever output through `safe_html` or `to_text`. */
  richtext?: string;
  link?: string;
  /** The research agent's cited answer (`explain`), when there is one; citations only with http(s) links. */
  explanation?: { agent: string; text: string; citations: Array<{ order: number; name: string; url: string }> };
}

export interface DigestView {
  id: string;
  rule: string;
  title: string;
  count: number;
  created_at: string;
  items: AlertView[];
}

/** Every field of an alert's view, of a digest's, and of the alert itself: what templates may name (`validate` warns of others). */
const ALERT_VIEW_FIELDS: Record<keyof AlertView, true> = {
  id: true, rule: true, entity: true, source: true, trigger: true, severity: true, severity_label: true, severity_icon: true, fired_at: true,
  title: true, summary: true, headline: true, changes: true, facts: true, line: true, note: true, takeaway: true, richtext: true, link: true, explanation: true,
};
const DIGEST_VIEW_FIELDS: Record<keyof DigestView, true> = { id: true, rule: true, title: true, count: true, created_at: true, items: true };
const ALERT_FIELDS: Record<keyof Alert, true> = {
  id: true, rule: true, severity: true, source: true, entity: true, trigger: true, fired_at: true, summary: true, changes: true, current: true, explanation: true,
};
const DIGEST_FIELDS: Record<keyof DigestMessage, true> = { id: true, rule: true, alerts: true, created_at: true };

/** The variables an alert template (or a digest template) is given, each with the fields it has. */
export const TEMPLATE_VARIABLES = {
  alert: { alert: Object.keys(ALERT_FIELDS), view: Object.keys(ALERT_VIEW_FIELDS) },
  digest: { digest: Object.keys(DIGEST_FIELDS), view: Object.keys(DIGEST_VIEW_FIELDS) },
} as const satisfies Record<string, Record<string, string[]>>;

const SEVERITY_ICONS: Record<Severity, string> = { info: 'ℹ️', warning: '⚠️', critical: '🚨' };

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function httpUrl(value: unknown): string | undefined {
  const text = str(value);
  return text !== undefined && /^https?:\/\//i.test(text) ? text : undefined;
}

function changeLine(change: Change): ChangeLine {
  const label = fieldLabel(change.field);
  if (change.added !== undefined) {
    const added = change.added.map((item) => (typeof item === 'string' ? item : JSON.stringify(item))).join('; ');
    return { field: change.field, label, from: formatValue(change.field, change.from), to: formatValue(change.field, change.to), added, text: `${label} added: ${added}` };
  }
  const from = formatValue(change.field, change.from);
  const to = formatValue(change.field, change.to);
  const delta = formatDelta(change.field, change.from, change.to);
  const text = `${label}: ${from} → ${to}${delta !== undefined ? ` (${delta})` : ''}`;
  return delta !== undefined ? { field: change.field, label, from, to, delta, text } : { field: change.field, label, from, to, text };
}

/** Change lines a message shows: the trigger's own change first, then at most this many in all. */
export const MAX_CHANGE_LINES = 6;

/**
 * What a reader sees of the changes: the first (the trigger's field) always; of the rest, those
 * that read differently once formatted (a new history id or an equal-length list says nothing),
 * and no HTML fields (their sanitized text is shown on its own, not as escaped markup).
 */
export function readableChanges(lines: ChangeLine[]): ChangeLine[] {
  const [own, ...rest] = lines;
  if (own === undefined) return [];
  const shown = rest.filter((line) => line.from !== line.to && !line.field.endsWith('_richtext') && !HIDDEN_CHANGES.has(line.field));
  return [own, ...shown].slice(0, MAX_CHANGE_LINES);
}

// Bookkeeping fields of a snapshot that change on every capture and mean nothing to a reader.
const HIDDEN_CHANGES = new Set(['history_id', 'captured_at', 'snapshot_at', 'updated_at']);

function push(facts: Fact[], label: string, value: string | undefined): void {
  if (value !== undefined && value !== '' && value !== DASH) facts.push({ label, value });
}

const STRONG_GRADES = new Set(['A', 'B']);

/** Provenance of the model probability; `recalibrated` with grade A or B is the independent signal. */
export function probabilitySource(current: Record<string, unknown>): string | undefined {
  const rows = Array.isArray(current.outcome_probabilities) ? current.outcome_probabilities.filter(isRecord) : [];
  const many = rows.length > 1;
  const strong = rows.find(
    (r) => r.model_probability_source === 'recalibrated' && STRONG_GRADES.has(String(r.evidence_grade)),
  );
  if (strong !== undefined) {
    const outcome = many && str(strong.outcome_name) !== undefined ? ` (${String(strong.outcome_name)})` : '';
    return `independent signal: recalibrated, grade ${String(strong.evidence_grade)}${outcome}`;
  }
  const top = str(current.model_probability_source) !== undefined ? current : rows.find((r) => str(r.model_probability_source));
  const source = top !== undefined ? str(top.model_probability_source) : undefined;
  const grade = top !== undefined ? str(top.evidence_grade) : str(current.evidence_grade);
  if (source === undefined && grade === undefined) return undefined;
  if (source === 'recalibrated' && grade !== undefined && STRONG_GRADES.has(grade)) {
    return `independent signal: recalibrated, grade ${grade}`;
  }
  const parts = [source !== undefined ? `probability source: ${words(source)}` : undefined, grade !== undefined ? `grade ${grade}` : undefined];
  return parts.filter((p) => p !== undefined).join(', ');
}

function modelVsMarket(current: Record<string, unknown>): string | undefined {
  const model = num(current.model_probability);
  const market = num(current.market_probability);
  if (model === undefined || market === undefined) return undefined;
  const edge = num(current.edge_pp) ?? model - market;
  return `${percent(model)} vs ${percent(market)} (edge ${signedPp(edge)})`;
}

function eventFacts(current: Record<string, unknown>, facts: Fact[]): void {
  push(facts, 'Model vs market', modelVsMarket(current));
  const confidence = num(current.confidence_score);
  push(facts, 'Confidence', confidence !== undefined ? formatValue('confidence_score', confidence) : undefined);
  push(facts, 'Signal', probabilitySource(current));
  push(facts, 'Closes', str(current.close_time) !== undefined ? dateTime(String(current.close_time)) : undefined);
  push(facts, 'Category', str(current.series_category));
}

/** `analysis.surprise` from the KPI detail attached under `current.detail`; absent until reported. */
export function kpiSurprise(current: Record<string, unknown>): string | undefined {
  const detail = isRecord(current.detail) ? current.detail : undefined;
  const analysis = detail !== undefined && isRecord(detail.analysis) ? detail.analysis : undefined;
  const surprise = analysis?.surprise;
  if (surprise === null || surprise === undefined) return undefined;
  if (typeof surprise === 'string') return surprise;
  const shown = kpiValue(surprise);
  if (shown === undefined) return undefined;
  const fraction = isRecord(surprise) ? num(surprise.percent) : undefined;
  if (fraction === undefined) return shown;
  const pct = fraction * 100;
  return `${shown} (${pct > 0 ? '+' : ''}${pct.toFixed(1)}%)`;
}

function kpiActualSource(current: Record<string, unknown>): string | undefined {
  const detail = isRecord(current.detail) ? current.detail : undefined;
  const actual = detail !== undefined && isRecord(detail.actual) ? detail.actual : undefined;
  const method = str(actual?.source_method) ?? str(current.actual_source);
  const sources = Array.isArray(actual?.sources)
    ? actual.sources.filter(isRecord).map((s) => str(s.name)).filter((n) => n !== undefined)
    : [];
  if (method === undefined && sources.length === 0) return undefined;
  const verified = actual?.verified === true ? ', verified' : '';
  const names = sources.length > 0 ? ` (${sources.join(', ')})` : '';
  return `${method !== undefined ? words(method) : 'sources'}${verified}${names}`;
}

function kpiFacts(current: Record<string, unknown>, facts: Fact[]): void {
  push(facts, 'Actual', kpiValue(current.actual));
  push(facts, 'Market-implied', kpiValue(current.market_implied));
  push(facts, 'Model', kpiValue(current.octagon_estimate_value));
  push(facts, 'Surprise', kpiSurprise(current));
  push(facts, 'Actual source', kpiActualSource(current));
  if (current.actual === null || current.actual === undefined) {
    push(facts, 'Edge (model - market)', kpiValue(current.edge_absolute_value));
    push(facts, 'Signal', str(current.signal) !== undefined ? words(String(current.signal)) : undefined);
  }
  push(facts, 'Model vs market', modelVsMarket(current));
  const when = str(current.reported_at) ?? str(current.expected_report_date);
  push(facts, str(current.reported_at) !== undefined ? 'Reported' : 'Expected report', when !== undefined ? dateTime(when) : undefined);
  push(facts, 'Closes', str(current.close_time) !== undefined ? dateTime(String(current.close_time)) : undefined);
}

function trustText(label: unknown, score: unknown): string {
  const l = str(label) ?? DASH;
  const s = num(score);
  return s !== undefined ? `${l} (${Math.round(s)})` : l;
}

/** Trust label and score read as one change: `Good (72) → Caution (55)`. */
function trustChanges(changes: Change[], current: Record<string, unknown>): ChangeLine[] {
  const label = changes.find((c) => c.field === 'trust_label');
  if (label === undefined) return changes.map(changeLine);
  const score = changes.find((c) => c.field === 'trust_score');
  const from = trustText(label.from, score !== undefined ? score.from : undefined);
  const to = trustText(label.to, score !== undefined ? score.to : current.trust_score);
  const merged: ChangeLine = { field: 'trust_label', label: 'Trust', from, to, text: `Trust: ${from} → ${to}` };
  return [merged, ...changes.filter((c) => c !== label && c !== score).map(changeLine)];
}

function reportFacts(current: Record<string, unknown>, facts: Fact[]): void {
  push(facts, 'Trust', current.trust_label !== undefined ? trustText(current.trust_label, current.trust_score) : undefined);
  push(facts, 'Event', str(current.event_ticker));
  eventFacts(current, facts);
}

const RUN_NOTES: Record<string, string> = {
  failed: 'The generation failed; the 3 credits are refunded automatically.',
  completed: 'A new report version is ready to read.',
};

/** A market's prices in cents: `last 42¢ · yes 41¢/43¢ · no 57¢/59¢` (bid/ask). */
function marketPrices(current: Record<string, unknown>): string | undefined {
  const price = (field: string) => (num(current[field]) === undefined ? undefined : formatValue(field, current[field]));
  const pair = (side: 'yes' | 'no') => {
    const bid = price(`${side}_bid`);
    const ask = price(`${side}_ask`);
    return bid !== undefined && ask !== undefined ? `${side} ${bid}/${ask}` : undefined;
  };
  const last = price('last_price');
  const parts = [last !== undefined ? `last ${last}` : undefined, pair('yes'), pair('no')].filter((p) => p !== undefined);
  return parts.length > 0 ? parts.join(' · ') : undefined;
}

/** A field's value as its name says to show it, or undefined when absent. */
function shown(current: Record<string, unknown>, field: string): string | undefined {
  const value = current[field];
  return value === null || value === undefined ? undefined : formatValue(field, value);
}

/** The facts a market-search source's alert shows, by source. */
const MARKET_FACTS: Record<MarketSourceName, (current: Record<string, unknown>, facts: Fact[]) => void> = {
  edge: edgeFacts,
  rankings: rankingFacts,
  markets: marketFacts,
  similar: similarFacts,
  baskets: basketFacts,
};

function edgeFacts(current: Record<string, unknown>, facts: Fact[]): void {
  push(facts, 'Model vs market', modelVsMarket(current));
  push(facts, 'Confidence', shown(current, 'confidence_score'));
  push(facts, 'Expected return', shown(current, 'expected_return'));
  push(facts, 'Market', str(current.market_ticker) ?? str(current.input_ticker));
  push(facts, 'Event', str(current.event_ticker));
  push(facts, 'Category', str(current.series_category));
}

function rankingFacts(current: Record<string, unknown>, facts: Fact[]): void {
  push(facts, 'Rank', current.rank === null ? 'out of the ranking' : shown(current, 'rank'));
  edgeFacts(current, facts);
}

function marketFacts(current: Record<string, unknown>, facts: Fact[]): void {
  push(facts, 'Prices', marketPrices(current));
  push(facts, 'Volume 24h', shown(current, 'volume_24h'));
  push(facts, 'Open interest', shown(current, 'open_interest'));
  push(facts, 'Status', str(current.status));
  push(facts, 'Closes', str(current.close_time) !== undefined ? dateTime(String(current.close_time)) : undefined);
  push(facts, 'Market', str(current.market_ticker));
  push(facts, 'Category', str(current.category));
}

function similarFacts(current: Record<string, unknown>, facts: Fact[]): void {
  push(facts, 'Distance', num(current.distance) === undefined ? undefined : `${String(current.distance)} (0 is closest)`);
  push(facts, 'Market', str(current.market_ticker));
  push(facts, 'Event', str(current.event_ticker));
  push(facts, 'Category', str(current.category));
}

function basketFacts(current: Record<string, unknown>, facts: Fact[]): void {
  const timeframe = str(current.timeframe);
  push(facts, timeframe !== undefined ? `Return (${timeframe})` : 'Return', shown(current, 'total_return'));
  push(facts, 'Max drawdown', shown(current, 'max_drawdown'));
  push(facts, 'Sharpe', num(current.sharpe) === undefined ? undefined : (current.sharpe as number).toFixed(2));
  push(facts, 'Final NAV', num(current.final_nav) === undefined ? undefined : (current.final_nav as number).toFixed(4));
  push(facts, 'Max pairwise correlation', num(current.max_pairwise_correlation) === undefined ? undefined : (current.max_pairwise_correlation as number).toFixed(2));
  push(facts, 'Largest leg', shown(current, 'max_leg_pct'));
  const warnings = Array.isArray(current.warnings) ? current.warnings.filter((w): w is string => typeof w === 'string') : [];
  push(facts, 'Warnings', warnings.join('; '));
}

function runFacts(current: Record<string, unknown>, facts: Fact[]): void {
  push(facts, 'Status', str(current.status));
  const venue = str(current.venue);
  const ticker = str(current.event_ticker);
  push(facts, 'Event', ticker !== undefined ? (venue !== undefined ? `${venue}/${ticker}` : ticker) : undefined);
  push(facts, 'Run', str(current.run_id));
}

/** Everything a template needs to show one alert, formatted. */
export function alertView(alert: Alert): AlertView {
  const current = alert.current;
  const facts: Fact[] = [];
  const entity = entityTitle(alert.source, current, alert.entity);
  let title = entity;
  let changes: ChangeLine[];
  let note: string | undefined;
  let line: string | undefined;

  switch (alert.source) {
    case 'events':
      changes = alert.changes.map(changeLine);
      eventFacts(current, facts);
      break;
    case 'kpis': {
      changes = alert.changes.map(changeLine);
      kpiFacts(current, facts);
      const parts = [
        `actual ${kpiValue(current.actual) ?? DASH}`,
        `market-implied ${kpiValue(current.market_implied) ?? DASH}`,
        `model ${kpiValue(current.octagon_estimate_value) ?? DASH}`,
      ];
      const surprise = kpiSurprise(current);
      line = `${title}: ${parts.join(' vs ')}${surprise !== undefined ? `, surprise ${surprise}` : ''}`;
      break;
    }
    case 'reports':
      changes = trustChanges(alert.changes, current);
      reportFacts(current, facts);
      break;
    case 'runs': {
      const status = str(current.status) ?? 'updated';
      const event = str(current.event_ticker) ?? alert.entity;
      title = `Report generation ${status}: ${event}`;
      changes = alert.changes.map(changeLine);
      runFacts(current, facts);
      note = RUN_NOTES[status];
      break;
    }
    default:
      changes = alert.changes.map(changeLine);
      if (isMarketSource(alert.source)) MARKET_FACTS[alert.source](current, facts);
  }

  const takeaway = str(current.key_takeaway);
  const richtext =
    str(current.executive_summary_richtext) ?? str(current.short_answer_richtext) ?? str(current.current_state_summary_richtext);
  const link = httpUrl(current.event_url) ?? httpUrl(current.requested_url);
  const headline = headlineOf(alert.summary, entity, title);
  const view: AlertView = {
    id: alert.id,
    rule: alert.rule,
    entity: alert.entity,
    source: alert.source,
    trigger: alert.trigger,
    severity: alert.severity,
    severity_label: alert.severity.toUpperCase(),
    severity_icon: SEVERITY_ICONS[alert.severity],
    fired_at: dateTime(alert.fired_at),
    title,
    summary: alert.summary,
    headline,
    changes: readableChanges(changes),
    facts,
    line: line ?? headline,
  };
  if (note !== undefined) view.note = note;
  if (takeaway !== undefined) view.takeaway = takeaway;
  if (richtext !== undefined) view.richtext = richtext;
  if (link !== undefined) view.link = link;
  if (alert.explanation) {
    const { agent, text, citations } = alert.explanation;
    view.explanation = { agent, text, citations: citations.filter((c) => httpUrl(c.url) !== undefined) };
  }
  return view;
}

/**
 * The summary led by the message's title. A summary starts with the entity's title, which the
 * message's title replaces (a run's reads `Report generation completed: ...`), so that the
 * entity is named once.
 */
function headlineOf(summary: string, entity: string, title: string): string {
  const prefix = `${entity}: `;
  if (summary.startsWith(prefix)) return `${title}: ${summary.slice(prefix.length)}`;
  return summary.startsWith(title) ? summary : `${title}: ${summary}`;
}

export function digestView(digest: DigestMessage): DigestView {
  const count = digest.alerts.length;
  return {
    id: digest.id,
    rule: digest.rule,
    title: `${digest.rule}: ${count} alert${count === 1 ? '' : 's'}`,
    count,
    created_at: dateTime(digest.created_at),
    items: digest.alerts.map(alertView),
  };
}
