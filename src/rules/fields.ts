// The fields a rule may name, per source, as the research API names them: read from the API's
// schemas (src/api/schemas.ts), so that a field added there can be used in rules. Unknown fields
// are validation errors: a typo must not silently disable an alert.
import { z } from 'zod';
import { BacktestSummary, BasketValidation, ClusterPeer, MarketRow, ModelEdgeRow, RankingRow, SimilarMarket } from '../api/market-schemas.ts';
import { EventRow, KpiRow, KpiValue, RunStatus } from '../api/schemas.ts';
import { editDistance } from '../core/suggest.ts';
import type { SourceName } from '../core/types.ts';

/**
 * What a field holds. `kpi-value` is the API's `{value, unit, formatted}` object (dotted into
 * by `.value`, `.unit`, `.formatted`); `object` and `array` accept any dotted path below them.
 */
export type FieldKind = 'number' | 'string' | 'boolean' | 'ordinal' | 'kpi-value' | 'object' | 'array';

/** Ordinal orders, best first. */
export const ORDINAL_ORDERS: Readonly<Record<string, readonly string[]>> = {
  trust_label: ['Strong', 'Good', 'Caution', 'High Risk', 'Avoid'],
  evidence_grade: ['A', 'B', 'C', 'D'],
  liquidity_tier: ['high', 'medium', 'low'],
};

/**
 * The fields of an API schema and what each holds. A field named like an ordinal order is
 * ordinal; the API's `{value, unit, formatted}` object is a KPI value.
 */
function fieldsOf(schema: z.ZodObject): Record<string, FieldKind> {
  return Object.fromEntries(Object.entries<z.core.$ZodType>(schema.shape).map(([name, field]) => [name, kindOf(name, field)]));
}

function kindOf(name: string, schema: z.core.$ZodType): FieldKind {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) return kindOf(name, schema.unwrap());
  if (schema === KpiValue) return 'kpi-value';
  if (Object.hasOwn(ORDINAL_ORDERS, name)) return 'ordinal';
  if (schema instanceof z.ZodNumber) return 'number';
  if (schema instanceof z.ZodBoolean) return 'boolean';
  if (schema instanceof z.ZodArray) return 'array';
  if (schema instanceof z.ZodString) return 'string';
  return 'object';
}

// Each source's snapshot: the API's row, plus what its poller adds (src/sources).
const EVENT_FIELDS = { ...fieldsOf(EventRow), abs_edge_pp: 'number' } satisfies Record<string, FieldKind>;
const KPI_FIELDS = { ...fieldsOf(KpiRow), detail: 'object' } satisfies Record<string, FieldKind>;
const REPORT_FIELDS = {
  ...EVENT_FIELDS,
  run_id: 'string',
  trust_score: 'number',
  trust_label: 'ordinal',
  title: 'string',
  venue: 'string',
} satisfies Record<string, FieldKind>;
const RUN_FIELDS = { ...fieldsOf(RunStatus), title: 'string', trust_label: 'ordinal' } satisfies Record<string, FieldKind>;
/** A ranking row and its place in the ranking (1 first; null once the event left it). */
const RANKING_FIELDS = { ...fieldsOf(RankingRow), rank: 'number' } satisfies Record<string, FieldKind>;
/** A similar market, or a cluster peer (which has no event_ticker or category). */
const SIMILAR_FIELDS = { ...fieldsOf(ClusterPeer), ...fieldsOf(SimilarMarket) };
/** A basket: its backtest summary and its validation, lists of clashes and duplicates counted. */
const BASKET_FIELDS = {
  basket: 'string',
  timeframe: 'string',
  ...fieldsOf(BacktestSummary),
  ...fieldsOf(BasketValidation.pick({ total_stake_usd: true, max_pairwise_correlation: true, max_leg_pct: true, warnings: true })),
  calendar_clashes: 'number',
  duplicate_underliers: 'number',
} satisfies Record<string, FieldKind>;

/** Top-level snapshot fields per source. */
export const SOURCE_FIELDS: Readonly<Record<SourceName, Readonly<Record<string, FieldKind>>>> = {
  events: EVENT_FIELDS,
  kpis: KPI_FIELDS,
  reports: REPORT_FIELDS,
  runs: RUN_FIELDS,
  edge: fieldsOf(ModelEdgeRow),
  rankings: RANKING_FIELDS,
  markets: fieldsOf(MarketRow),
  similar: SIMILAR_FIELDS,
  baskets: BASKET_FIELDS,
};

/**
 * A rank of null is an event out of its ranking: for `crosses`, below every rank, so that leaving
 * the top 10 re-arms `below: 11` and fires `above: 20`.
 */
export function nullIsUnranked(source: SourceName, path: string): boolean {
  return source === 'rankings' && path === 'rank';
}

const KPI_VALUE_FIELDS = fieldsOf(KpiValue);

/** The ordinal order for a field path (by its last segment), or undefined when it is not ordinal. */
export function ordinalOrder(path: string): readonly string[] | undefined {
  const last = path.slice(path.lastIndexOf('.') + 1);
  return Object.hasOwn(ORDINAL_ORDERS, last) ? ORDINAL_ORDERS[last] : undefined;
}

/**
 * What a dotted path names in a source's snapshot: its kind (`unknown` below an open object),
 * or a message saying why the path does not exist.
 */
export type FieldCheck = { ok: true; kind: FieldKind | 'unknown' } | { ok: false; message: string };

export function checkField(source: SourceName, path: string): FieldCheck {
  const segments = path.split('.');
  // Messages quote the whole path as JSON, the one form in which a value from `${NAME}` is
  // recognized and shown as written.
  const quoted = JSON.stringify(path);
  if (path === '' || segments.some((s) => s === '')) return { ok: false, message: `${quoted} is not a field path` };
  const fields = SOURCE_FIELDS[source];
  const [first, ...rest] = segments as [string, ...string[]];
  const kind = Object.hasOwn(fields, first) ? fields[first] : undefined;
  if (kind === undefined) {
    return { ok: false, message: `unknown field ${quoted} for source ${source}${suggest(first, Object.keys(fields))}` };
  }
  if (rest.length === 0) return { ok: true, kind };
  if (kind === 'object' || kind === 'array') {
    return { ok: true, kind: ordinalOrder(path) ? 'ordinal' : 'unknown' };
  }
  if (kind === 'kpi-value') {
    const [second, ...deeper] = rest as [string, ...string[]];
    const sub = Object.hasOwn(KPI_VALUE_FIELDS, second) ? KPI_VALUE_FIELDS[second] : undefined;
    if (sub === undefined || deeper.length > 0) {
      return {
        ok: false,
        message: `unknown field ${quoted} for source ${source}: ${first} is a KPI value with value, unit and formatted`,
      };
    }
    return { ok: true, kind: sub };
  }
  return { ok: false, message: `unknown field ${quoted} for source ${source}: ${first} is a ${kind}, not an object` };
}

/** ` (did you mean a, b?)` naming the known names closest to `name`, or all of them when none is close. */
function suggest(name: string, known: string[]): string {
  const scored = known
    .map((candidate) => ({ candidate, distance: closeness(name, candidate) }))
    .filter((s) => s.distance <= Math.max(2, Math.floor(name.length / 3)))
    .sort(
      (a, b) =>
        a.distance - b.distance ||
        Math.abs(a.candidate.length - name.length) - Math.abs(b.candidate.length - name.length) ||
        a.candidate.localeCompare(b.candidate),
    )
    .slice(0, 3);
  if (scored.length > 0) return ` (did you mean ${scored.map((s) => s.candidate).join(', ')}?)`;
  return ` (known fields: ${[...known].sort().join(', ')})`;
}

/** Edit distance, with a containing name (edge vs edge_pp) counted as close. */
function closeness(a: string, b: string): number {
  if (a.length >= 3 && (b.includes(a) || a.includes(b))) return 1;
  return editDistance(a, b);
}

/**
 * Values the API documents for a field (api/research-data.md). A complete list is every value the
 * API writes; an open one (`series_category`: "such as politics, crypto, economics") shows how it
 * spells them: in lower case.
 */
const EVENT_VALUES = {
  series_category: { values: ['politics', 'crypto', 'economics'], complete: false },
  eligibility_status: { values: ['open', 'paused', 'unopened', 'closed', 'settled', 'unknown'], complete: true },
} as const;
export const DOCUMENTED_VALUES: Readonly<Record<SourceName, Readonly<Record<string, { values: readonly string[]; complete: boolean }>>>> = {
  events: EVENT_VALUES,
  kpis: {
    status: { values: ['active', 'settled'], complete: true },
    signal: { values: ['above_market', 'in_line', 'below_market'], complete: true },
    liquidity_tier: { values: ORDINAL_ORDERS.liquidity_tier!, complete: true },
  },
  reports: { ...EVENT_VALUES, trust_label: { values: ORDINAL_ORDERS.trust_label!, complete: true } },
  runs: { status: { values: ['processing', 'completed', 'failed'], complete: true }, trust_label: { values: ORDINAL_ORDERS.trust_label!, complete: true } },
  markets: {},
  edge: { series_category: EVENT_VALUES.series_category },
  rankings: { series_category: EVENT_VALUES.series_category },
  similar: {},
  baskets: {},
};

/**
 * Why a filter value is not one the API writes for the field (a filter compares exactly, so it would
 * never match), or undefined: outside a complete list, or spelled otherwise than an open list's.
 */
export function undocumentedValue(source: SourceName, field: string, value: unknown): string | undefined {
  const documented = Object.hasOwn(DOCUMENTED_VALUES[source], field) ? DOCUMENTED_VALUES[source][field] : undefined;
  if (documented === undefined || typeof value !== 'string' || documented.values.includes(value)) return undefined;
  const sameLetters = documented.values.find((known) => known.toLowerCase() === value.trim().toLowerCase());
  const listed = `${documented.values.join(', ')}${documented.complete ? '' : ', ...'}`;
  if (!documented.complete && sameLetters === undefined && value === value.toLowerCase()) return undefined;
  const hint = sameLetters !== undefined ? `: did you mean ${sameLetters}?` : documented.complete ? '' : ': the API writes it in lower case';
  return `${JSON.stringify(value)} is not a value the API writes for ${field} (${listed})${hint} (a filter compares values exactly)`;
}
