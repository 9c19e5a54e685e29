// Simulated KPI prediction markets: board rows and detail bundles.
import { COMPANIES, formatKpi, type CompanySpec, type KpiSpec } from './catalog.ts';
import { iso } from './events.ts';
import { between, clamp, gauss, pick, rngFor, round, type Rng } from './random.ts';

export type ActualMethod = 'octagon_deep_research' | 'company_report' | 'market_ladder_reconstruction' | 'market_settlement_value';

export interface SimKpi {
  id: string;
  kpi_id: string;
  company: CompanySpec;
  spec: KpiSpec;
  year: number;
  quarter: number;
  status: 'active' | 'settled';
  close_time: number;
  expected_report_date: number;
  market_value: number;
  model_value: number;
  guidance: number | null;
  market_probability: number;
  model_probability: number;
  liquidity_tier: 'high' | 'medium' | 'low';
  strike_count: number;
  volume: number;
  market_as_of: number;
  snapshot_at: number;
  /** The market median when the market closed: the surprise is measured against it. */
  pre_report_market: number | null;
  actual: { value: number; method: ActualMethod; reported_at: number } | null;
  /** When the world lands the actual on its own; null once landed or never. */
  actual_due: number | null;
  /** Board-row fields patched through a test hook. */
  extra: Record<string, unknown>;
}

const DAY = 86_400_000;
/** Shares of the board at the start: settled already, and closing within the first simulated hours. */
const SETTLED_SHARE = 0.12;
const CLOSING_SOON_SHARE = 0.1;
/** Simulated minutes from a market's close to its actual landing: spread, so actuals land one by one. */
const ACTUAL_DELAY_MINUTES = [30, 720] as const;
/** For a market that closed days before the start and still waits for its actual: soon. */
const OVERDUE_ACTUAL_MINUTES = [10, 240] as const;

function actualDue(rng: Rng, now: number, [low, high]: readonly [number, number]): number {
  return now + Math.floor(between(rng, low, high)) * 60_000;
}

export function createKpi(seed: number, n: number, now: number, taken: Set<string>): SimKpi {
  const rng = rngFor(seed, 'kpi', n);
  const company = pick(rng, COMPANIES);
  const spec = pick(rng, company.kpis);
  const r = rng();
  // A spread of states: mostly active, some closing within the first simulated hours, some settled or reported.
  const closingSoon = r >= SETTLED_SHARE && r < SETTLED_SHARE + CLOSING_SOON_SHARE;
  const closeOffset = r < SETTLED_SHARE ? -between(rng, 0.05, 5) * DAY : closingSoon ? between(rng, 5, 240) * 60_000 : between(rng, 0.5, 90) * DAY;
  const close_time = Math.floor((now + closeOffset) / 60_000) * 60_000;
  const d = new Date(close_time);
  const quarter = Math.floor(d.getUTCMonth() / 3) + 1;
  const year = d.getUTCFullYear();
  const base = `${company.ticker.toLowerCase()}-${spec.kpi}-${year}q${quarter}`;
  const id = taken.has(base) ? `evt_${(n + 1).toString(36).padStart(6, '0')}${Math.floor(rng() * 1e6).toString(36)}` : base;
  taken.add(id);
  const market_value = spec.base * between(rng, 0.9, 1.1);
  const market_probability = round(r < SETTLED_SHARE + CLOSING_SOON_SHARE ? between(rng, 85, 96.5) : between(rng, 10, 90), 1);
  const settled = close_time <= now;
  const tier = pick(rng, ['high', 'medium', 'low'] as const);
  const kpi: SimKpi = {
    id,
    kpi_id: `kpi_${company.ticker.toLowerCase()}_${spec.kpi.replace(/-/g, '_')}`,
    company,
    spec,
    year,
    quarter,
    status: settled ? 'settled' : 'active',
    close_time,
    expected_report_date: close_time + Math.floor(between(rng, 0, 2)) * DAY,
    market_value,
    model_value: market_value * (1 + gauss(rng) * 0.02),
    guidance: rng() < 0.4 ? market_value * between(rng, 0.95, 1.02) : null,
    market_probability,
    model_probability: round(clamp(market_probability + gauss(rng) * 6, 1, 99), 1),
    liquidity_tier: tier,
    strike_count: 3 + Math.floor(rng() * 8),
    volume: Math.round(between(rng, 1e3, tier === 'high' ? 5e6 : 5e5)),
    market_as_of: now - Math.floor(between(rng, 0, 3 * DAY) / 60_000) * 60_000,
    snapshot_at: now,
    pre_report_market: settled ? market_value : null,
    actual: null,
    actual_due: null,
    extra: {},
  };
  if (settled) {
    if (rng() < 0.6) kpi.actual = { value: landedValue(kpi, rng), method: pick(rng, METHODS), reported_at: close_time + 3_600_000 };
    else kpi.actual_due = actualDue(rng, now, OVERDUE_ACTUAL_MINUTES);
  }
  return kpi;
}

const METHODS: readonly ActualMethod[] = ['market_settlement_value', 'octagon_deep_research', 'company_report'];

export function landedValue(k: SimKpi, rng: Rng): number {
  return k.market_value * (1 + gauss(rng) * 0.03);
}

/** One minute of market movement: rows near close drift toward 0 or 100, so near_settled flips. */
export function driftKpi(k: SimKpi, rng: Rng, now: number): void {
  const closing = k.close_time - now < 6 * 3_600_000;
  const push = closing ? Math.sign(k.market_probability - 50) * between(rng, 0, 4) : 0;
  k.market_probability = round(clamp(k.market_probability + push + gauss(rng) * 2, 0.5, 99.5), 1);
  k.model_probability = round(clamp(k.model_probability + gauss(rng) * 1.5, 0.5, 99.5), 1);
  k.market_value *= 1 + gauss(rng) * 0.004;
  k.model_value *= 1 + gauss(rng) * 0.003;
  k.volume += Math.round(between(rng, 0, 5e3));
  k.market_as_of = now;
  k.snapshot_at = now;
}

export function settle(k: SimKpi, now: number, rng: Rng | null): void {
  k.status = 'settled';
  k.actual = null;
  k.pre_report_market = k.market_value;
  k.snapshot_at = now;
  // Only the world's own movement schedules an actual; a test hook leaves it to landActual().
  k.actual_due = rng ? actualDue(rng, now, ACTUAL_DELAY_MINUTES) : null;
}

export function land(k: SimKpi, value: number, method: ActualMethod, now: number): void {
  if (k.status !== 'settled') settle(k, now, null);
  k.actual = { value, method, reported_at: now };
  k.actual_due = null;
  k.snapshot_at = now;
}

const kv = (k: SimKpi, value: number | null): Record<string, unknown> | null =>
  value === null ? null : { value: round(value, k.spec.scale === '%' ? 2 : 0), unit: k.spec.unit, formatted: formatKpi(value, k.spec.scale) };

function periodOf(k: SimKpi): { code: string; label: string; kind: string; start: string; end: string } {
  const start = Date.UTC(k.year, (k.quarter - 1) * 3, 1);
  const end = Date.UTC(k.year, k.quarter * 3, 0);
  return { code: `${k.year}Q${k.quarter}`, label: `Q${k.quarter} ${k.year}`, kind: 'quarter', start: iso(start).slice(0, 10), end: iso(end).slice(0, 10) };
}

export function nearSettled(k: SimKpi): boolean {
  return k.market_probability >= 97 || k.market_probability <= 3;
}

export function newsworthiness(k: SimKpi, now: number): number {
  const edge = Math.abs(k.model_value / k.market_value - 1) * 100;
  const tier = k.liquidity_tier === 'high' ? 30 : k.liquidity_tier === 'medium' ? 18 : 6;
  const days = Math.abs(k.expected_report_date - now) / DAY;
  return Math.round(clamp(edge * 8, 0, 40) + tier + clamp(30 - days, 0, 30));
}

export function edgeRelative(k: SimKpi): number {
  return k.model_value / k.market_value - 1;
}

export function isReported(k: SimKpi): boolean {
  return k.status === 'settled' && k.actual !== null;
}

export function boardRow(k: SimKpi, now: number): Record<string, unknown> {
  const period = periodOf(k);
  const edge = k.model_value - k.market_value;
  const edgePp = round(k.model_probability - k.market_probability, 1);
  const rel = edgeRelative(k);
  return {
    id: k.id,
    kpi_id: k.kpi_id,
    company_name: k.company.name,
    company_ticker: k.company.ticker,
    kpi_name: k.spec.title,
    period: period.code,
    period_label: period.label,
    period_kind: period.kind,
    status: k.status,
    expected_report_date: iso(k.expected_report_date).slice(0, 10),
    market_implied: kv(k, k.market_value),
    market_implied_as_of: iso(k.market_as_of),
    octagon_estimate_value: kv(k, k.model_value),
    edge_absolute_value: kv(k, edge),
    edge_market_age_days: Math.max(0, Math.trunc((k.snapshot_at - k.market_as_of) / DAY)),
    actual: k.actual ? kv(k, k.actual.value) : null,
    company_guidance: kv(k, k.guidance),
    model_probability: k.model_probability,
    market_probability: k.market_probability,
    edge_pp: edgePp,
    signal: rel > 0.005 ? 'above_market' : rel < -0.005 ? 'below_market' : 'in_line',
    near_settled: nearSettled(k),
    newsworthiness: newsworthiness(k, now),
    liquidity_tier: k.liquidity_tier,
    strike_count: k.strike_count,
    strike_period: 'quarter',
    actual_source: k.actual?.method ?? null,
    reported_at: k.actual ? iso(k.actual.reported_at) : k.status === 'settled' ? iso(k.expected_report_date) : null,
    close_time: iso(k.close_time),
    ...k.extra,
  };
}

function trend(k: SimKpi, value: number, now: number, salt: string): Array<{ as_of: string; value: number }> {
  const rng = rngFor('trend', k.id, salt);
  const days = 7;
  return Array.from({ length: days }, (_, i) => ({
    as_of: iso(Math.floor(now / DAY) * DAY - (days - 1 - i) * DAY),
    value: round(value * (1 + gauss(rng) * 0.01 * (days - 1 - i) / days), 2),
  }));
}

export function kpiDetail(k: SimKpi, now: number): Record<string, unknown> {
  const row = boardRow(k, now);
  const rel = edgeRelative(k);
  const surprise = k.actual && k.pre_report_market !== null ? k.actual.value - k.pre_report_market : null;
  const edgePp = round(k.model_probability - k.market_probability, 1);
  const status = isReported(k) ? 'reported' : k.status === 'settled' ? 'settled' : k.expected_report_date - now < 3 * DAY ? 'imminent' : 'scheduled';
  return {
    event_id: k.id,
    kpi_id: k.kpi_id,
    company: { name: k.company.name, ticker: k.company.ticker, exchange: k.company.exchange, sector: k.company.sector, industry: k.company.industry },
    kpi: { title: k.spec.title, description: `${k.company.name} ${k.spec.title.toLowerCase()} as reported for the period.`, unit: k.spec.unit, type: k.spec.type, directionality: 'higher_is_better' },
    period: periodOf(k),
    prediction_market_estimate: { central: row.market_implied, as_of: iso(k.market_as_of), trend: trend(k, k.market_value, now, 'market'), liquidity_tier: k.liquidity_tier, source: 'aggregated_prediction_markets' },
    octagon_model_estimate: { central: row.octagon_estimate_value, confidence: 60 + (k.strike_count % 30), as_of: iso(k.snapshot_at), trend: trend(k, k.model_value, now, 'model'), methodology_url: 'https://docs.example.com/kpi-methodology' },
    actual: k.actual
      ? {
          value: kv(k, k.actual.value),
          reported_at: iso(k.actual.reported_at),
          precision: k.actual.method === 'market_settlement_value' ? 'rounded' : 'exact',
          range: { low: kv(k, k.market_value * 0.97), high: kv(k, k.market_value * 1.03) },
          verified: k.actual.method === 'company_report',
          sources: [{ name: `${k.company.name} investor relations`, url: `https://investors.example.com/${k.company.ticker.toLowerCase()}` }],
          source_method: k.actual.method,
        }
      : null,
    analysis: {
      edge_vs_market: { ...(kv(k, k.model_value - k.market_value) ?? {}), percent: round(rel, 4), direction: rel >= 0 ? 'above' : 'below', signal: row.signal, model_as_of: iso(k.snapshot_at), market_as_of: iso(k.market_as_of) },
      edge_vs_consensus: k.guidance === null ? null : { ...kv(k, k.model_value - k.guidance), percent: round(k.model_value / k.guidance - 1, 4) },
      surprise: surprise === null || k.pre_report_market === null ? null : { ...kv(k, surprise), percent: round(surprise / k.pre_report_market, 4), direction: surprise >= 0 ? 'beat' : 'miss' },
      model_accuracy: k.actual ? { error: kv(k, k.model_value - k.actual.value), percent: round(k.model_value / k.actual.value - 1, 4) } : null,
      near_settled: nearSettled(k),
      probability_signal: { model_probability: k.model_probability, market_probability: k.market_probability, edge_pp: edgePp, badge: Math.abs(edgePp) < 2 ? 'confirms' : edgePp > 0 ? 'leads' : 'rich', model_as_of: iso(k.snapshot_at), market_as_of: iso(k.market_as_of) },
      newsworthiness: row.newsworthiness,
    },
    editorial: {
      status,
      expected_report_date: iso(k.expected_report_date).slice(0, 10),
      date_confirmed: k.quarter % 2 === 0,
      change_since_last: null,
      headline: `${k.company.name} ${k.spec.title.toLowerCase()}: market ${formatKpi(k.market_value, k.spec.scale)}, model ${formatKpi(k.model_value, k.spec.scale)}`,
      summary: `<p>The model sits ${rel >= 0 ? 'above' : 'below'} the market on ${k.spec.title.toLowerCase()}.</p>`,
      chart_url: `https://charts.example.com/${k.id}.png`,
      octagon_report_link: null,
      permalink: `https://app.example.com/kpi/${k.id}`,
      tags: [k.company.sector.toLowerCase(), k.spec.type],
      peers: [],
    },
    as_of: iso(now),
  };
}
