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
  return undefined;
}
