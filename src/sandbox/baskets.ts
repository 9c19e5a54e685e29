// Basket arithmetic of api/market-search-and-baskets.md, pure: NAV candles and backtest statistics
// from price functions, Pearson correlation, calendar clashes and the validation of a hand-built
// basket with its warnings. market-routes.ts feeds it the world's prices.
import { iso } from './events.ts';
import { round } from './random.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export const TIMEFRAME_SPECS = {
  '1w': { lookbackDays: 7, binMs: 3 * HOUR, periodsPerYear: 2922 },
  '1m': { lookbackDays: 30, binMs: 12 * HOUR, periodsPerYear: 731 },
  '3m': { lookbackDays: 90, binMs: DAY, periodsPerYear: 365 },
  '6m': { lookbackDays: 180, binMs: 3 * DAY, periodsPerYear: 122 },
  '1y': { lookbackDays: 365, binMs: 7 * DAY, periodsPerYear: 52 },
} as const;
export type Timeframe = keyof typeof TIMEFRAME_SPECS;

export interface Candle {
  /** Unix seconds of the bin's start. */
  time: number;
  open: number;
  high: number;
  low: number;
  close: number;
}

/** Points sampled inside each bin for its high and low (open and close among them). */
const SAMPLES_PER_BIN = 4;

/**
 * NAV candles of a basket from `start` to `end`, in bins aligned to multiples of `binMs`: the NAV
 * is the weighted sum of each leg's price relative to its price at the first bin (so it starts
 * at 1). Weights are renormalized to sum to 1.
 */
export function navCandles(prices: ReadonlyArray<(time: number) => number>, weights: readonly number[], start: number, end: number, binMs: number): Candle[] {
  const first = Math.ceil(start / binMs) * binMs;
  const total = weights.reduce((sum, w) => sum + w, 0);
  const base = prices.map((price) => price(first));
  const nav = (time: number): number => prices.reduce((sum, price, i) => sum + (weights[i]! / total) * (price(time) / base[i]!), 0);
  const candles: Candle[] = [];
  for (let open = first; open < end; open += binMs) {
    const close = Math.min(open + binMs, end);
    const points: number[] = [];
    for (let k = 0; k <= SAMPLES_PER_BIN; k++) points.push(nav(open + ((close - open) * k) / SAMPLES_PER_BIN));
    candles.push({
      time: open / 1000,
      open: round(points[0]!, 6),
      high: round(Math.max(...points), 6),
      low: round(Math.min(...points), 6),
      close: round(points[SAMPLES_PER_BIN]!, 6),
    });
  }
  return candles;
}

export interface BacktestSummary {
  total_return: number;
  annualized_return: number;
  sharpe: number | null;
  max_drawdown: number;
  win_rate: number;
  first_nav: number;
  final_nav: number;
  observation_count: number;
}

/** The document's backtest statistics over NAV observations (at least one). */
export function backtestSummary(navs: readonly number[], periodsPerYear: number): BacktestSummary {
  const first = navs[0]!;
  const final = navs[navs.length - 1]!;
  const returns = navs.slice(1).map((nav, i) => nav / navs[i]! - 1);
  const n = returns.length;
  const totalReturn = final / first - 1;
  const mean = n === 0 ? 0 : returns.reduce((sum, r) => sum + r, 0) / n;
  const deviation = n < 2 ? 0 : Math.sqrt(returns.reduce((sum, r) => sum + (r - mean) ** 2, 0) / (n - 1));
  let peak = first;
  let maxDrawdown = 0;
  for (const nav of navs) {
    peak = Math.max(peak, nav);
    maxDrawdown = Math.min(maxDrawdown, nav / peak - 1);
  }
  return {
    total_return: round(totalReturn, 6),
    annualized_return: round(n === 0 ? 0 : (1 + totalReturn) ** (periodsPerYear / n) - 1, 6),
    sharpe: deviation > 0 ? round((mean / deviation) * Math.sqrt(periodsPerYear), 4) : null,
    max_drawdown: round(maxDrawdown, 6),
    win_rate: round(n === 0 ? 0 : returns.filter((r) => r > 0).length / n, 4),
    first_nav: round(first, 6),
    final_nav: round(final, 6),
    observation_count: navs.length,
  };
}

/** Pearson correlation; null with fewer than 3 paired observations or a constant series. */
export function pearson(a: readonly number[], b: readonly number[]): number | null {
  const n = Math.min(a.length, b.length);
  if (n < 3) return null;
  let sa = 0;
  let sb = 0;
  for (let i = 0; i < n; i++) {
    sa += a[i]!;
    sb += b[i]!;
  }
  const ma = sa / n;
  const mb = sb / n;
  let cov = 0;
  let va = 0;
  let vb = 0;
  for (let i = 0; i < n; i++) {
    const da = a[i]! - ma;
    const db = b[i]! - mb;
    cov += da * db;
    va += da * da;
    vb += db * db;
  }
  // Below this the series is flat up to float noise.
  if (va < 1e-18 || vb < 1e-18) return null;
  return round(Math.max(-1, Math.min(1, cov / Math.sqrt(va * vb))), 4);
}

export interface ClashLeg {
  ticker: string;
  closeTime: number;
}

export interface CalendarClash {
  window_start: string;
  window_end: string;
  market_tickers: string[];
}

/**
 * Groups of two or more legs whose close times fall within one window of `windowMs`, the window
 * sliding from each leg's close; a group inside the previous one is not repeated.
 */
export function calendarClashes(legs: readonly ClashLeg[], windowMs: number): CalendarClash[] {
  const sorted = [...legs].sort((a, b) => a.closeTime - b.closeTime || (a.ticker < b.ticker ? -1 : 1));
  const clashes: CalendarClash[] = [];
  let lastEnd = -1;
  for (let i = 0; i < sorted.length; i++) {
    const start = sorted[i]!.closeTime;
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1]!.closeTime - start <= windowMs) j++;
    if (j > i && j > lastEnd) {
      clashes.push({ window_start: iso(start), window_end: iso(start + windowMs), market_tickers: sorted.slice(i, j + 1).map((leg) => leg.ticker) });
      lastEnd = j;
    }
  }
  return clashes;
}

export interface ValidationLeg {
  ticker: string;
  stake: number;
  /** Undefined when the market is unknown. */
  market?: {
    eventTicker: string;
    closeTime: number;
    thematic: number;
    behavioral: number | null;
    volume24h: number;
    /** Side-adjusted prices over the correlation window, oldest first. */
    series: readonly number[];
  };
}

export interface ValidationOptions {
  bankroll: number | null;
  /** Warning threshold on a pair's correlation; none when undefined. */
  maxCorrelation: number | undefined;
  clashWindowDays: number;
  /** The data's time: legs closed by then do not clash. */
  asOf: number;
}

/** A market traded less than this in 24 h gets a thin-market warning. */
export const THIN_VOLUME_24H = 1000;
/** A leg over this share (percent) of the bankroll gets a concentration warning. */
export const LEG_SHARE_WARNING = 25;
const NUMBER_WORDS = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
const countWord = (n: number): string => NUMBER_WORDS[n] ?? String(n);

function groupBy(legs: readonly ValidationLeg[], key: (leg: ValidationLeg) => string | undefined): Record<string, string[]> {
  const groups: Record<string, string[]> = {};
  for (const leg of legs) {
    const k = key(leg);
    if (k !== undefined) (groups[k] ??= []).push(leg.ticker);
  }
  return groups;
}

/**
 * The validate response for resolved legs. Warnings are stable sentences: the same condition
 * gives the same text at every refresh (no numbers that drift), so a watcher sees one appear and
 * disappear.
 */
export function validateBasket(legs: readonly ValidationLeg[], options: ValidationOptions): Record<string, unknown> {
  const known = legs.filter((leg) => leg.market !== undefined);
  const totalStake = legs.reduce((sum, leg) => sum + leg.stake, 0);
  const denominator = options.bankroll ?? totalStake;
  const maxLegPct = denominator > 0 ? round((Math.max(...legs.map((leg) => leg.stake)) / denominator) * 100, 2) : 0;

  const pairs: Array<{ ticker_a: string; ticker_b: string; correlation: number | null }> = [];
  for (let i = 0; i < known.length; i++) {
    for (let j = i + 1; j < known.length; j++) {
      pairs.push({ ticker_a: known[i]!.ticker, ticker_b: known[j]!.ticker, correlation: pearson(known[i]!.market!.series, known[j]!.market!.series) });
    }
  }
  const correlations = pairs.map((p) => p.correlation).filter((c): c is number => c !== null);
  const windowDays = options.clashWindowDays;
  const clashes = calendarClashes(
    known.filter((leg) => leg.market!.closeTime > options.asOf).map((leg) => ({ ticker: leg.ticker, closeTime: leg.market!.closeTime })),
    windowDays * DAY,
  );
  const byEvent = groupBy(known, (leg) => leg.market!.eventTicker);
  const duplicates = Object.entries(byEvent)
    .map(([event_ticker, tickers]) => ({ event_ticker, market_tickers: [...new Set(tickers)] }))
    .filter((d) => d.market_tickers.length > 1);

  const warnings: string[] = [];
  for (const clash of clashes) warnings.push(`${countWord(clash.market_tickers.length)} legs close within ${windowDays} day${windowDays === 1 ? '' : 's'}`);
  for (const p of pairs) {
    if (options.maxCorrelation !== undefined && p.correlation !== null && p.correlation > options.maxCorrelation) {
      warnings.push(`high correlation between ${p.ticker_a} and ${p.ticker_b} (above ${options.maxCorrelation})`);
    }
  }
  for (const d of duplicates) warnings.push(`${countWord(d.market_tickers.length)} legs on one event: ${d.event_ticker}`);
  if (options.bankroll !== null && maxLegPct > LEG_SHARE_WARNING) warnings.push(`a leg is over ${LEG_SHARE_WARNING}% of the bankroll`);
  for (const leg of known) if (leg.market!.volume24h < THIN_VOLUME_24H) warnings.push(`thin market: ${leg.ticker} traded under ${THIN_VOLUME_24H} in 24 h`);
  for (const leg of legs) if (leg.market === undefined) warnings.push(`unknown market: ${leg.ticker}`);

  return {
    total_stake_usd: round(totalStake, 2),
    bankroll_usd: options.bankroll,
    max_leg_pct: maxLegPct,
    cluster_breakdown_thematic: groupBy(known, (leg) => String(leg.market!.thematic)),
    cluster_breakdown_behavioral: groupBy(known, (leg) => (leg.market!.behavioral === null ? undefined : String(leg.market!.behavioral))),
    unassigned_market_tickers: legs.filter((leg) => leg.market === undefined).map((leg) => leg.ticker),
    max_pairwise_correlation: correlations.length === 0 ? null : round(Math.max(...correlations.map(Math.abs)), 4),
    pairwise_correlations: pairs,
    calendar_clashes: clashes,
    duplicate_underliers: duplicates,
    warnings: [...new Set(warnings)],
  };
}
