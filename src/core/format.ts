// Display formatting of API values, for a trader reading at a glance: the one formatter of
// summaries (rules) and messages (render). Pure.
import { isRecord } from './values.ts';

export const DASH = '—';

/** `model_probability_source` -> `model probability source`. */
export function words(text: string): string {
  return text.replace(/[_-]+/g, ' ').trim();
}

/** Text on one line: runs of white space (line breaks included) as one space. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function fixed(n: number, digits = 1): string {
  return n.toFixed(digits);
}

/** Percentage points with a sign: `+12.3 pp`, `-4.0 pp`. */
export function signedPp(n: number): string {
  const sign = n > 0 ? '+' : n < 0 ? '-' : '';
  return `${sign}${fixed(Math.abs(n))} pp`;
}

/** A probability on the 0-100 scale: `62.4%`. */
export function percent(n: number): string {
  return `${fixed(n)}%`;
}

function compactNumber(n: number): string {
  const abs = Math.abs(n);
  if (abs >= 1e9) return `${fixed(n / 1e9)}B`;
  if (abs >= 1e6) return `${fixed(n / 1e6)}M`;
  if (abs >= 1e3) return `${fixed(n / 1e3)}K`;
  return Number.isInteger(n) ? String(n) : fixed(n, 2);
}

/** A KPI value object `{value, unit, formatted}` as shown: its `formatted`, else value and unit. */
export function kpiValue(value: unknown): string | undefined {
  if (!isRecord(value)) return typeof value === 'number' ? compactNumber(value) : undefined;
  if (typeof value.formatted === 'string' && value.formatted !== '') return value.formatted;
  if (typeof value.value === 'number') {
    const unit = typeof value.unit === 'string' ? value.unit : '';
    return unit === '' ? compactNumber(value.value) : `${compactNumber(value.value)} ${unit}`;
  }
  return undefined;
}

/** Market prices, fractions 0-1 (api/market-search-and-baskets.md), shown in cents. */
const PRICE_FIELDS = new Set(['last_price', 'yes_bid', 'yes_ask', 'no_bid', 'no_ask']);
/** Basket backtest statistics, fractions (-0.123 is a 12.3% drawdown), shown as percents. */
const FRACTION_FIELDS = new Set(['total_return', 'annualized_return', 'max_drawdown', 'win_rate']);

/** A price 0-1 in cents: `42¢`, `42.5¢`. */
export function cents(price: number): string {
  const c = Math.round(price * 1000) / 10;
  return `${Number.isInteger(c) ? c : c.toFixed(1)}¢`;
}

/** A fraction as a percent with a sign when negative: `-12.3%`, `4.0%`. */
function fractionPercent(n: number): string {
  return percent(n * 100);
}

/**
 * A threshold of a trigger as written in a summary: prices and fractions as they are shown
 * (`55¢`, `-10.0%`); other numbers as written, with ` pp` for percentage points.
 */
export function formatThreshold(field: string, n: number): string {
  const name = field.split('.').pop() ?? field;
  if (PRICE_FIELDS.has(name) || FRACTION_FIELDS.has(name)) return formatValue(field, n);
  return `${n}${name.endsWith('_pp') ? ' pp' : ''}`;
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;

/** `2026-12-10T19:00:00Z` -> `2026-12-10 19:00 UTC`; other text unchanged. */
export function dateTime(value: string): string {
  if (!ISO_TIME.test(value)) return value;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** One value of a named field, formatted for display. */
export function formatValue(field: string, value: unknown): string {
  if (value === null || value === undefined) return DASH;
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'number') {
    const name = field.split('.').pop() ?? field;
    if (name.startsWith('abs_') && name.endsWith('_pp')) return `${fixed(value)} pp`;
    if (name.endsWith('_pp')) return signedPp(value);
    if (name.endsWith('_probability')) return percent(value);
    if (name === 'confidence_score') return `${Number.isInteger(value) ? value : fixed(value)}/10`;
    if (name === 'trust_score' || name === 'newsworthiness') return String(Math.round(value));
    if (PRICE_FIELDS.has(name)) return cents(value);
    if (FRACTION_FIELDS.has(name)) return fractionPercent(value);
    if (name.endsWith('_pct')) return percent(value);
    if (name === 'rank') return `#${value}`;
    return compactNumber(value);
  }
  if (typeof value === 'string') {
    if (ISO_TIME.test(value)) return dateTime(value);
    // Labels (above_market, market_baseline) read as words; free text is left alone.
    if (/^[a-z]+(_[a-z]+)+$/.test(value)) return words(value);
    return value;
  }
  if (isRecord(value)) return kpiValue(value) ?? DASH;
  if (Array.isArray(value)) return `${value.length} item${value.length === 1 ? '' : 's'}`;
  return String(value);
}

/** The signed difference of two numbers of a field, when that helps (pp and probabilities). */
export function formatDelta(field: string, from: unknown, to: unknown): string | undefined {
  if (typeof from !== 'number' || typeof to !== 'number') return undefined;
  const name = field.split('.').pop() ?? field;
  if (name.endsWith('_pp') || name.endsWith('_probability')) return signedPp(to - from);
  if (PRICE_FIELDS.has(name)) return `${to >= from ? '+' : '-'}${cents(Math.abs(to - from))}`;
  return undefined;
}
