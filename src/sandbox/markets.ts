// The market-search view of the world (api/market-search-and-baskets.md): every event's markets as
// of the last nightly refresh, their prices over time, their similarity and clusters, and the
// edge ranking. A market ticker is its event ticker plus an outcome suffix.
import { SERIES } from './catalog.ts';
import { iso, marketBook, marketTicker, outcomes, snapshotAt, type SimEvent, type Snapshot } from './events.ts';
import { between, clamp, round, rngFor, uuidFrom } from './random.ts';
import type { SimWorld } from './world.ts';

const DAY = 86_400_000;
const TAU = 2 * Math.PI;

/**
 * Prices before an event's first snapshot: two waves, the slow one shared by the markets of one
 * series (so that a theme's markets move together, as correlations show).
 */
interface Wave {
  slowDays: number;
  slowPhase: number;
  slowAmp: number;
  fastDays: number;
  fastPhase: number;
  fastAmp: number;
}

export interface SimMarket {
  ticker: string;
  ev: SimEvent;
  /** The outcome's index in its event. */
  index: number;
  outcome: string;
  /** The event's snapshot as of the refresh. */
  snapshot: Snapshot;
  /** Last price, 0-1, as of the refresh. */
  price: number;
  tokens: ReadonlySet<string>;
  /** Thematic cluster id: one per series. */
  thematic: number;
  /** Behavioral cluster id; null for markets too young to have one (events added after the start). */
  behavioral: number | null;
  wave: Wave;
}

export interface MarketView {
  refreshedAt: number;
  runId: string;
  /** Every venuea event known at the refresh, with its snapshot then. */
  events: ReadonlyArray<{ ev: SimEvent; snapshot: Snapshot }>;
  /** By upper-case ticker. */
  eventsByTicker: ReadonlyMap<string, { ev: SimEvent; snapshot: Snapshot }>;
  markets: readonly SimMarket[];
  /** By upper-case ticker. */
  byTicker: ReadonlyMap<string, SimMarket>;
}

export const BEHAVIORAL_LABELS = ['Quiet drifters', 'Slow trenders', 'Steady movers', 'Swingers', 'High volatility'] as const;
const BEHAVIORAL_BASE = 101;

/** The scoring run of a refresh. */
export function scoringRunId(seed: number, refreshedAt: number): string {
  return uuidFrom(seed, 'scoring-run', refreshedAt);
}

const pricesOf = new WeakMap<Snapshot, number[]>();

/** Every outcome's price (0-1) at a snapshot, as the event detail shows it. */
function outcomePrice(ev: SimEvent, s: Snapshot, index: number): number {
  let prices = pricesOf.get(s);
  if (!prices) pricesOf.set(s, (prices = outcomes(ev, s).map((o) => o.market_probability / 100)));
  return prices[index]!;
}

function waveOf(seed: number, ev: SimEvent, index: number): Wave {
  const theme = rngFor(seed, 'wave', ev.series.series);
  const own = rngFor(seed, 'wave', ev.n, index);
  const sign = own() < 0.8 ? 1 : -1;
  return {
    slowDays: between(theme, 6, 30),
    slowPhase: between(theme, 0, TAU),
    slowAmp: sign * between(own, 0.03, 0.12),
    fastDays: between(own, 0.5, 2),
    fastPhase: between(own, 0, TAU),
    fastAmp: between(own, 0.005, 0.03),
  };
}

function waveAt(w: Wave, time: number): number {
  return w.slowAmp * Math.sin((TAU * time) / (w.slowDays * DAY) + w.slowPhase) + w.fastAmp * Math.sin((TAU * time) / (w.fastDays * DAY) + w.fastPhase);
}

/** A market's price (0-1) at a time up to the refresh: its event's snapshots, before them the waves. */
export function priceAt(m: SimMarket, time: number): number {
  const first = m.ev.snapshots[0]!;
  const s = snapshotAt(m.ev, time);
  if (s) return outcomePrice(m.ev, s, m.index);
  const anchor = outcomePrice(m.ev, first, m.index);
  return round(clamp(anchor + waveAt(m.wave, time) - waveAt(m.wave, first.captured_at), 0.01, 0.99), 4);
}

const STOP_WORDS = new Set(['in', 'on', 'the', 'of', 'by', 'vs', 'for', 'and', 'at', 'to']);

/** The words a text is matched on: lower case, no stop words, no bare numbers (dates differ, themes do not). */
export function tokens(text: string): Set<string> {
  return new Set(text.toLowerCase().split(/[^a-z0-9$%]+/).filter((t) => t.length >= 2 && !STOP_WORDS.has(t) && !/^\d+$/.test(t)));
}

/** Cosine distance of two word sets: 0 for the same words, 1 for none shared. */
export function distance(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 1;
  let shared = 0;
  for (const t of a) if (b.has(t)) shared++;
  return round(1 - shared / Math.sqrt(a.size * b.size), 4);
}

export function marketTitle(m: SimMarket): string {
  return `${m.ev.name}: ${m.outcome}`;
}

function behavioralOf(world: SimWorld, ev: SimEvent, wave: Wave): number | null {
  if (ev.n >= world.baseSize) return null;
  const swing = Math.abs(wave.slowAmp) + wave.fastAmp;
  return BEHAVIORAL_BASE + Math.min(BEHAVIORAL_LABELS.length - 1, Math.floor(((swing - 0.035) / 0.115) * BEHAVIORAL_LABELS.length));
}

/** The view as of any refresh time (marketView caches the last one). */
export function buildView(world: SimWorld, refreshedAt: number): MarketView {
  const events: Array<{ ev: SimEvent; snapshot: Snapshot }> = [];
  const markets: SimMarket[] = [];
  for (const ev of world.allEvents()) {
    // The market-search document covers one exchange.
    if (ev.venue !== 'venuea') continue;
    const snapshot = snapshotAt(ev, refreshedAt);
    if (!snapshot) continue;
    events.push({ ev, snapshot });
    ev.series.outcomes.forEach((outcome, index) => {
      const wave = waveOf(world.seed, ev, index);
      markets.push({
        ticker: marketTicker(ev, index),
        ev,
        index,
        outcome,
        snapshot,
        price: outcomePrice(ev, snapshot, index),
        // The outcome whole too: "Lab A" and "Lab B" differ though their words barely do.
        tokens: new Set([...tokens(`${ev.name} ${outcome} ${ev.series.category} ${ev.series.series}`), outcome.toLowerCase()]),
        thematic: SERIES.indexOf(ev.series) + 1,
        behavioral: behavioralOf(world, ev, wave),
        wave,
      });
    });
  }
  return {
    refreshedAt,
    runId: scoringRunId(world.seed, refreshedAt),
    events,
    eventsByTicker: new Map(events.map((e) => [e.ev.ticker.toUpperCase(), e])),
    markets,
    byTicker: new Map(markets.map((m) => [m.ticker.toUpperCase(), m])),
  };
}

const views = new WeakMap<SimWorld, { key: string; view: MarketView }>();

/** The view as of the last refresh, built once per refresh: snapshots taken since do not change it. */
export function marketView(world: SimWorld): MarketView {
  const key = world.marketDataKey();
  const cached = views.get(world);
  if (cached?.key === key) return cached.view;
  const view = buildView(world, world.marketSync().refreshedAt);
  views.set(world, { key, view });
  return view;
}

/** The market's status as of the refresh. */
export function marketStatus(m: SimMarket, asOf: number): string {
  if (m.ev.eligibility === 'open') return m.ev.close_time <= asOf ? 'closed' : 'open';
  return m.ev.eligibility;
}

export function marketRow(m: SimMarket, asOf: number): Record<string, unknown> {
  const book = marketBook(m.ev, m.snapshot, m.index, m.price);
  const openInterest = Math.round(m.snapshot.total_open_interest / (m.index + 2));
  return {
    market_ticker: m.ticker,
    event_ticker: m.ev.ticker,
    series_ticker: m.ev.series.series,
    title: marketTitle(m),
    subtitle: m.outcome,
    status: marketStatus(m, asOf),
    close_time: iso(m.ev.close_time),
    last_price: m.price,
    yes_bid: book.yes_bid,
    yes_ask: book.yes_ask,
    no_bid: book.no_bid,
    no_ask: book.no_ask,
    volume: book.volume,
    volume_24h: book.volume_24h,
    liquidity: Math.round(openInterest * m.price + book.volume_24h / 10),
    open_interest: openInterest,
    category: m.ev.series.category,
    event_name: m.ev.name,
  };
}

export function volume24h(m: SimMarket): number {
  return marketBook(m.ev, m.snapshot, m.index, m.price).volume_24h;
}

export interface ClusterInfo {
  cluster_id: number;
  label: string;
  description: string;
  size: number;
}

/** The market's cluster of a kind, with its members; undefined when it has none. */
export function clusterOf(view: MarketView, m: SimMarket, kind: 'thematic' | 'behavioral'): { cluster: ClusterInfo; members: SimMarket[] } | undefined {
  const id = kind === 'thematic' ? m.thematic : m.behavioral;
  if (id === null) return undefined;
  const members = view.markets.filter((other) => (kind === 'thematic' ? other.thematic : other.behavioral) === id);
  const label = kind === 'thematic' ? m.ev.series.theme : BEHAVIORAL_LABELS[id - BEHAVIORAL_BASE]!;
  const description = kind === 'thematic'
    ? `Markets on ${m.ev.series.theme.toLowerCase()} (${m.ev.series.category})`
    : `Markets whose 30-day daily returns move like ${label.toLowerCase()}`;
  return { cluster: { cluster_id: id, label, description, size: members.length }, members };
}

/** How far two markets' price behaviour lies apart (behavioral peers). */
export function behaviorDistance(a: SimMarket, b: SimMarket): number {
  return round(Math.abs(Math.abs(a.wave.slowAmp) - Math.abs(b.wave.slowAmp)) + Math.abs(a.wave.fastAmp - b.wave.fastAmp), 4);
}
