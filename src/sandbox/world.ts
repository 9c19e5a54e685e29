// The simulated world: events, reports, generation runs and KPI rows on a simulated clock.
// All movement comes from one seeded stream consumed only by advance(), so a seed and a
// sequence of advance() calls always give the same world.
import { randomUUID } from 'node:crypto';
import {
  createEvent, latest, nextSnapshot, patchedSnapshot, trustLabelFor,
  type ReportVersion, type SimEvent, type Snapshot, type Venue,
} from './events.ts';
import { marketView } from './markets.ts';
import { createKpi, driftKpi, edgeRelative, land, landedValue, newsworthiness, settle, type SimKpi } from './kpis.ts';
import { between, hash, mulberry32, pick, rngFor, uuidFrom, type Rng } from './random.ts';
import type { SandboxWorld } from './types.ts';

export interface WorldOptions {
  seed: number;
  events: number;
  kpis: number;
  startTime: number;
  credits: number;
}

export interface GenerationRun {
  run_id: string;
  event: SimEvent;
  status: 'processing' | 'completed' | 'failed';
  finish_at: number;
  fails: boolean;
}

/** Position in the events list: newest captured first, ties by history id. */
export interface EventKey {
  captured_at: number;
  history_id: number;
}

export const GENERATION_COST = 3;
const MINUTE = 60_000;
// Per event and simulated minute: with 60 events, ten minutes move about five of them. Trust
// changes and new events are rarer, so that the example rules fire a few alerts a real minute on
// the built-in sandbox (test/integration/demo-pace.test.ts measures it).
const SNAPSHOT_RATE = 0.008;
const TRUST_RATE = 0.0002;
const NEW_EVENT_RATE = 0.00005;
const KPI_DRIFT_RATE = 0.03;
const MAX_HISTORY = 500;
/**
 * The market-search data (markets, edge, rankings, clusters, candles) refreshes nightly upstream.
 * The sandbox's night comes every 30 simulated minutes (15 s at the demo's speed), so that rules
 * on it fire within a demo's first minutes; each refresh first syncs for a minute, when those
 * endpoints answer 503 as the API does before its nightly sync completes.
 */
export const MARKET_REFRESH_MINUTES = 30;
export const MARKET_SYNC_MINUTES = 1;

function compareKey(a: EventKey, b: EventKey): number {
  return a.captured_at - b.captured_at || a.history_id - b.history_id;
}

interface OrderEntry extends EventKey {
  ev: SimEvent;
}

function entryOf(ev: SimEvent): OrderEntry {
  const s = latest(ev);
  return { ev, captured_at: s.captured_at, history_id: s.history_id };
}

function isLive(entry: OrderEntry): boolean {
  return latest(entry.ev).history_id === entry.history_id;
}

export class SimWorld {
  now: number;
  readonly startTime: number;
  /** Bumped on every change to events or KPIs: lets views cache sorted orders. */
  version = 0;
  readonly seed: number;
  private readonly rng: Rng;
  private nextHistoryId = 100_001;
  private readonly events: SimEvent[] = [];
  private readonly byKey = new Map<string, SimEvent>();
  /**
   * The list index: entries ascending by (captured_at, history_id), the newest last. A new
   * snapshot appends an entry and leaves the old one stale (skipped when read, dropped by
   * compaction), so a move costs O(1) and a page O(log n + page).
   */
  private order: OrderEntry[] = [];
  private stale = 0;
  private readonly taken = new Set<string>();
  readonly kpis: SimKpi[] = [];
  private readonly kpiById = new Map<string, SimKpi>();
  private readonly runs = new Map<string, GenerationRun>();
  private runCount = 0;
  private versionCount = 0;
  private creditBalance: number;
  /**
   * The events generated at the start. Movement rates follow it; and only their markets have the
   * long price history a behavioral cluster needs.
   */
  readonly baseSize: number;
  /** When a test hook last refreshed the market-search data by hand, and how many times it did. */
  private forcedRefresh = -Infinity;
  private forcedRefreshes = 0;

  constructor(options: WorldOptions) {
    this.seed = options.seed;
    this.now = options.startTime;
    this.startTime = options.startTime;
    this.creditBalance = options.credits;
    this.baseSize = options.events;
    this.rng = mulberry32(hash(options.seed, 'movement'));
    this.generateEvents(options.events);
    const kpiIds = new Set<string>();
    for (let i = 0; i < options.kpis; i++) {
      const k = createKpi(this.seed, i, this.now, kpiIds);
      this.kpis.push(k);
      this.kpiById.set(k.id, k);
    }
  }

  private generateEvents(count: number): void {
    const all: Array<{ ev: SimEvent; s: Snapshot }> = [];
    for (let i = 0; i < count; i++) {
      const venue: Venue = rngFor(this.seed, 'venue', i)() < 0.1 ? 'venueb' : 'venuea';
      const ev = createEvent(this.seed, i, this.now, this.taken, venue);
      const rng = rngFor(this.seed, 'history', i);
      const snapshots = rng() < 0.4 ? 2 + Math.floor(rng() * 3) : 1;
      let t = this.now - Math.floor(rng() * 3 * 1440) * MINUTE;
      const times = [t];
      for (let j = 1; j < snapshots; j++) times.unshift((t -= Math.floor(between(rng, 6, 24) * 60) * MINUTE));
      ev.snapshots[0]!.captured_at = times[0]!;
      for (let j = 1; j < snapshots; j++) ev.snapshots.push(nextSnapshot(ev.snapshots[j - 1]!, rng, times[j]!, 0));
      for (const s of ev.snapshots) all.push({ ev, s });
      if (rng() < 0.65) {
        const versions = 1 + Math.floor(rng() * 3);
        for (let j = 0; j < versions; j++) {
          const score = Math.round(between(rng, 30, 92));
          ev.reports.push({
            run_id: uuidFrom(this.seed, 'report', i, j),
            captured_at: latest(ev).captured_at - (versions - 1 - j) * 2 * 3_600_000,
            snapshot: latest(ev),
            trust_score: score,
            trust_label: trustLabelFor(score),
          });
        }
      }
      this.events.push(ev);
      this.byKey.set(ev.ticker.toLowerCase(), ev);
    }
    // History ids follow capture time, so the list order is also history-id order.
    all.sort((a, b) => a.s.captured_at - b.s.captured_at || a.ev.n - b.ev.n);
    for (const { s } of all) s.history_id = this.nextHistoryId++;
    this.order = this.events.map(entryOf).sort(compareKey);
  }

  // ---- reading ----

  findEvent(key: string): SimEvent | undefined {
    return this.byKey.get(key.toLowerCase());
  }

  /** Index of the first event whose key is not below `key`. */
  private lowerBound(key: EventKey): number {
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKey(this.order[mid]!, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** A page of the events list after `cursor` (exclusive): O(log n + page) unless filtered. */
  eventsPage(cursor: EventKey | null, limit: number, hasHistory: boolean | undefined): { events: SimEvent[]; hasMore: boolean } {
    const events: SimEvent[] = [];
    let i = cursor ? this.lowerBound(cursor) - 1 : this.order.length - 1;
    for (; i >= 0; i--) {
      const entry = this.order[i]!;
      if (!isLive(entry)) continue;
      const ev = entry.ev;
      if (hasHistory !== undefined && ev.snapshots.length > 1 !== hasHistory) continue;
      if (events.length === limit) return { events, hasMore: true };
      events.push(ev);
    }
    return { events, hasMore: false };
  }

  allEvents(): readonly SimEvent[] {
    return this.events;
  }

  findRun(runId: string): GenerationRun | undefined {
    return this.runs.get(runId.toLowerCase());
  }

  findKpi(id: string): SimKpi | undefined {
    return this.kpiById.get(id);
  }

  credits(): number {
    return this.creditBalance;
  }

  /**
   * The market-search data's last completed refresh (its data is the world as of then), and
   * whether the next refresh is still syncing. The world's start counts as a completed refresh.
   */
  marketSync(): { refreshedAt: number; syncing: boolean } {
    const period = MARKET_REFRESH_MINUTES * MINUTE;
    const boundary = this.startTime + Math.floor((this.now - this.startTime) / period) * period;
    const syncing = boundary > this.startTime && this.now < boundary + MARKET_SYNC_MINUTES * MINUTE && this.forcedRefresh < boundary;
    return { refreshedAt: Math.max(syncing ? boundary - period : boundary, this.forcedRefresh), syncing };
  }

  /** The refresh times whose data may still be asked for by run id: the last one, then a day of scheduled ones. */
  recentRefreshes(): number[] {
    const { refreshedAt } = this.marketSync();
    const period = MARKET_REFRESH_MINUTES * MINUTE;
    const times = [refreshedAt];
    let scheduled = this.startTime + Math.floor((refreshedAt - this.startTime) / period) * period;
    for (let k = 0; k < (24 * 60) / MARKET_REFRESH_MINUTES && scheduled >= this.startTime; k++, scheduled -= period) {
      if (scheduled !== refreshedAt) times.push(scheduled);
    }
    return times;
  }

  /** A test hook: the market-search data refreshes now, without a sync. */
  refreshMarkets(): void {
    this.forcedRefresh = this.now;
    this.forcedRefreshes++;
    this.version++;
  }

  /**
   * Changes when the market-search data does: a refresh, by schedule or by hand, or a new event
   * (which the data shows from its next refresh, since its snapshots are all newer).
   */
  marketDataKey(): string {
    return `${this.marketSync().refreshedAt}|${this.forcedRefreshes}|${this.events.length}`;
  }

  // ---- changing ----

  private pushSnapshot(ev: SimEvent, s: Snapshot): void {
    ev.snapshots.push(s);
    // A long-running sandbox keeps a bounded history per event.
    if (ev.snapshots.length > MAX_HISTORY) ev.snapshots.shift();
    this.order.push(entryOf(ev));
    this.version++;
    if (++this.stale > this.events.length) {
      this.order = this.order.filter(isLive);
      this.stale = 0;
    }
  }

  private requireEvent(ticker: string): SimEvent {
    const ev = this.findEvent(ticker);
    if (!ev) throw new Error(`sandbox: no event ${ticker}`);
    return ev;
  }

  updateEvent(ticker: string, patch: Record<string, unknown>): void {
    const ev = this.requireEvent(ticker);
    this.applyEventPatch(ev, patch);
    this.pushSnapshot(ev, patchedSnapshot(latest(ev), patch, this.now, this.nextHistoryId++));
  }

  private applyEventPatch(ev: SimEvent, patch: Record<string, unknown>): void {
    if (typeof patch.eligibility_status === 'string') ev.eligibility = patch.eligibility_status as SimEvent['eligibility'];
    if (typeof patch.close_time === 'string') ev.close_time = Date.parse(patch.close_time);
    if (typeof patch.name === 'string') ev.name = patch.name;
    if (typeof patch.series_category === 'string') ev.series = { ...ev.series, category: patch.series_category };
  }

  addEvent(patch: Record<string, unknown> = {}): string {
    const n = this.events.length;
    const ev = createEvent(this.seed, n, this.now, this.taken, patch.venue === 'venueb' ? 'venueb' : 'venuea', true);
    this.applyEventPatch(ev, patch);
    const first = ev.snapshots.pop()!;
    ev.snapshots.push(patchedSnapshot(first, patch, this.now, this.nextHistoryId++));
    this.events.push(ev);
    this.byKey.set(ev.ticker.toLowerCase(), ev);
    this.order.push(entryOf(ev));
    this.version++;
    return ev.ticker;
  }

  setTrust(ticker: string, trust: { label: string; score: number } | null): void {
    const ev = this.requireEvent(ticker);
    if (trust === null) ev.reports = [];
    else this.addReport(ev, trust.score, trust.label);
    this.version++;
  }

  private addReport(ev: SimEvent, score: number, label: string): ReportVersion {
    const v: ReportVersion = {
      run_id: uuidFrom(this.seed, 'report-version', this.versionCount++),
      captured_at: this.now,
      snapshot: latest(ev),
      trust_score: score,
      trust_label: label,
    };
    ev.reports.push(v);
    return v;
  }

  /** Starts a generation run, charging its credits; the caller has checked the event is open. */
  startRun(ev: SimEvent): GenerationRun | 'insufficient_credits' {
    if (this.creditBalance < GENERATION_COST) return 'insufficient_credits';
    this.creditBalance -= GENERATION_COST;
    const n = this.runCount++;
    const rng = rngFor(this.seed, 'generation', n);
    const run: GenerationRun = {
      // Random, not derived from the seed: a sandbox started again on the same seed must not hand
      // out a run id that a database already recorded for an earlier run.
      run_id: randomUUID(),
      event: ev,
      status: 'processing',
      finish_at: this.now + Math.floor(between(rng, 5, 8.99)) * MINUTE,
      fails: rng() < 1 / 6,
    };
    this.runs.set(run.run_id, run);
    return run;
  }

  finishRun(runId: string, status: 'completed' | 'failed'): void {
    const run = this.findRun(runId);
    if (!run) throw new Error(`sandbox: no run ${runId}`);
    if (run.status !== 'processing') return;
    run.status = status;
    if (status === 'failed') this.creditBalance += GENERATION_COST;
    else {
      const last = run.event.reports[run.event.reports.length - 1]?.trust_score ?? 60;
      const score = Math.round(Math.min(98, Math.max(5, last + (rngFor(this.seed, 'run-trust', run.run_id)() - 0.5) * 30)));
      // The report version carries the run's own id, as generation does.
      run.event.reports.push({ run_id: run.run_id, captured_at: this.now, snapshot: latest(run.event), trust_score: score, trust_label: trustLabelFor(score) });
    }
    this.version++;
  }

  private requireKpi(id: string): SimKpi {
    const k = this.kpiById.get(id);
    if (!k) throw new Error(`sandbox: no KPI ${id}`);
    return k;
  }

  updateKpi(id: string, patch: Record<string, unknown>): void {
    const k = this.requireKpi(id);
    for (const [key, value] of Object.entries(patch)) {
      if (key === 'market_probability' && typeof value === 'number') k.market_probability = value;
      else if (key === 'model_probability' && typeof value === 'number') k.model_probability = value;
      else if (key === 'status' && (value === 'active' || value === 'settled')) k.status = value;
      else if (key === 'close_time' && typeof value === 'string') k.close_time = Date.parse(value);
      else if (key === 'liquidity_tier' && (value === 'high' || value === 'medium' || value === 'low')) k.liquidity_tier = value;
      else k.extra[key] = value;
    }
    k.snapshot_at = this.now;
    this.version++;
  }

  settleKpi(id: string): void {
    settle(this.requireKpi(id), this.now, null);
    this.version++;
  }

  landActual(id: string, value: number): void {
    land(this.requireKpi(id), value, 'company_report', this.now);
    this.version++;
  }

  // ---- movement ----

  advance(minutes: number): void {
    if (!Number.isFinite(minutes) || minutes < 0) throw new Error(`sandbox: cannot advance by ${minutes} minutes`);
    const target = Math.round(this.now + minutes * MINUTE);
    for (let next = (Math.floor(this.now / MINUTE) + 1) * MINUTE; next <= target; next += MINUTE) {
      this.now = next;
      this.step();
    }
    this.now = target;
  }

  private count(expected: number): number {
    return Math.floor(expected) + (this.rng() < expected % 1 ? 1 : 0);
  }

  /** One simulated minute. */
  private step(): void {
    const rng = this.rng;
    const n = this.events.length;
    // Rates follow the configured size, so that new events do not compound.
    const size = this.baseSize;
    for (let c = this.count(size * SNAPSHOT_RATE); c > 0; c--) {
      const ev = this.events[Math.floor(rng() * n)]!;
      if (ev.eligibility !== 'open') continue;
      if (ev.close_time <= this.now) {
        ev.eligibility = 'closed';
        this.version++;
        continue;
      }
      this.pushSnapshot(ev, nextSnapshot(latest(ev), rng, this.now, this.nextHistoryId++));
    }
    for (let c = this.count(size * TRUST_RATE); c > 0; c--) {
      const ev = this.events[Math.floor(rng() * n)]!;
      const last = ev.reports[ev.reports.length - 1]?.trust_score ?? 60;
      const score = Math.round(Math.min(98, Math.max(5, last + (rng() < 0.5 ? -1 : 1) * between(rng, 8, 22))));
      this.addReport(ev, score, trustLabelFor(score));
      this.version++;
    }
    for (let c = this.count(size * NEW_EVENT_RATE); c > 0; c--) this.addEvent();
    for (const run of this.runs.values()) {
      if (run.status === 'processing' && run.finish_at <= this.now) this.finishRun(run.run_id, run.fails ? 'failed' : 'completed');
    }
    const kpiCount = this.kpis.length;
    for (let c = this.count(kpiCount * KPI_DRIFT_RATE); c > 0 && kpiCount > 0; c--) {
      const k = this.kpis[Math.floor(rng() * kpiCount)]!;
      if (k.status === 'active') driftKpi(k, rng, this.now);
      this.version++;
    }
    for (const k of this.kpis) {
      if (k.status === 'active' && k.close_time <= this.now) {
        settle(k, this.now, rng);
        this.version++;
      } else if (k.status === 'settled' && k.actual === null && k.actual_due !== null && k.actual_due <= this.now) {
        land(k, landedValue(k, rng), pick(rng, ['market_settlement_value', 'octagon_deep_research', 'company_report'] as const), this.now);
        this.version++;
      }
    }
  }

  // ---- hooks ----

  hooks(): SandboxWorld {
    return {
      eventTickers: () => this.events.map((e) => e.ticker),
      updateEvent: (ticker, patch) => this.updateEvent(ticker, patch),
      addEvent: (patch) => this.addEvent(patch),
      eventVenue: (ticker) => this.requireEvent(ticker).venue,
      eventKey: (ticker) => {
        const ev = this.requireEvent(ticker);
        return ev.venue === 'venuea' ? ev.ticker : ev.slug;
      },
      setTrust: (ticker, trust) => this.setTrust(ticker, trust),
      kpiIds: () => this.kpis.map((k) => k.id),
      updateKpi: (id, patch) => this.updateKpi(id, patch),
      settleKpi: (id) => this.settleKpi(id),
      landActual: (id, value) => this.landActual(id, value),
      finishRun: (runId, status) => this.finishRun(runId, status),
      credits: () => this.creditBalance,
      refreshMarkets: () => this.refreshMarkets(),
      marketTickers: () => marketView(this).markets.map((m) => m.ticker),
    };
  }
}

export const KPI_SORTS = ['newsworthiness', 'volume', 'edge', 'abs_edge', 'edge_pp', 'report_date', 'reported_at', 'close_time'] as const;
export type KpiSort = (typeof KPI_SORTS)[number];

/** Sort value of a KPI row; every sort is descending except report_date. */
export function kpiSortValue(k: SimKpi, sort: KpiSort, now: number): number {
  switch (sort) {
    case 'newsworthiness': return newsworthiness(k, now);
    case 'volume': return k.volume;
    case 'edge': return edgeRelative(k);
    case 'abs_edge': return Math.abs(edgeRelative(k));
    case 'edge_pp': return k.model_probability - k.market_probability;
    case 'report_date': return k.expected_report_date;
    case 'reported_at': return k.actual?.reported_at ?? (k.status === 'settled' ? k.expected_report_date : -Infinity);
    case 'close_time': return k.close_time;
  }
}

