// Simulated events: their state (snapshots, report versions) and the JSON views the API serves.
import { MONTHS, MONTH_NAMES, SERIES, TAKEAWAYS, type SeriesSpec } from './catalog.ts';
import { between, clamp, gauss, pick, rngFor, round, uuidFrom, type Rng } from './random.ts';

export type Venue = 'venuea' | 'venueb';
export type EligibilityStatus = 'open' | 'paused' | 'unopened' | 'closed' | 'settled' | 'unknown';

export interface Snapshot {
  history_id: number;
  captured_at: number;
  confidence_score: number;
  model_probability: number | null;
  market_probability: number;
  edge_pp: number | null;
  expected_return: number | null;
  r_score: number | null;
  total_volume: number;
  total_open_interest: number;
  takeaway: number;
  /** Fields patched through a test hook; they override generated values in every view. */
  extra?: Record<string, unknown>;
}

export interface ReportVersion {
  run_id: string;
  captured_at: number;
  snapshot: Snapshot;
  trust_score: number | null;
  trust_label: string | null;
}

export interface SimEvent {
  /** Generation index: seeds the event's static text. */
  n: number;
  venue: Venue;
  ticker: string;
  slug: string;
  name: string;
  series: SeriesSpec;
  close_time: number;
  eligibility: EligibilityStatus;
  mutually_exclusive: boolean;
  /** Oldest first. */
  snapshots: Snapshot[];
  /** Report versions, oldest first; empty when none was generated. */
  reports: ReportVersion[];
}

export function trustLabelFor(score: number): string {
  if (score >= 80) return 'Strong';
  if (score >= 65) return 'Good';
  if (score >= 50) return 'Caution';
  if (score >= 35) return 'High Risk';
  return 'Avoid';
}

/** Keeps derived numbers consistent: edge = model - market, returns follow the edge. */
export function derive(s: Snapshot): Snapshot {
  if (s.model_probability === null) {
    s.edge_pp = null;
    s.expected_return = null;
    s.r_score = null;
    return s;
  }
  const model = s.model_probability;
  const market = s.market_probability;
  s.edge_pp = round(model - market, 1);
  s.expected_return = round(s.edge_pp >= 0 ? model / Math.max(market, 1) - 1 : (100 - model) / Math.max(100 - market, 1) - 1, 3);
  s.r_score = round((s.edge_pp / 10) * (s.confidence_score / 10) * Math.log10(10 + s.total_volume / 1e4), 2);
  return s;
}

export function latest(ev: SimEvent): Snapshot {
  return ev.snapshots[ev.snapshots.length - 1]!;
}

/** The event's snapshot as of a time (the newest captured then or before), or undefined when none was. */
export function snapshotAt(ev: SimEvent, time: number): Snapshot | undefined {
  let lo = 0;
  let hi = ev.snapshots.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ev.snapshots[mid]!.captured_at <= time) lo = mid + 1;
    else hi = mid;
  }
  return lo === 0 ? undefined : ev.snapshots[lo - 1];
}

const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');
export { iso };

/** A new event; its snapshots get history ids later, from the world's counter. */
export function createEvent(seed: number, n: number, now: number, taken: Set<string>, venue: Venue, forceOpen = false): SimEvent {
  const rng = rngFor(seed, 'event', n);
  const series = pick(rng, SERIES);
  const r = forceOpen ? (rng(), 0) : rng();
  const eligibility: EligibilityStatus = r < 0.82 ? 'open' : r < 0.9 ? 'closed' : r < 0.95 ? 'settled' : r < 0.98 ? 'paused' : 'unopened';
  const closed = eligibility === 'closed' || eligibility === 'settled';
  const close_time = Math.floor((now + (closed ? -between(rng, 1, 20) : between(rng, 0.2, 200)) * 86_400_000) / 60_000) * 60_000;
  const d = new Date(close_time);
  const name = series.title
    .replace('{month}', MONTH_NAMES[d.getUTCMonth()]!)
    .replace('{day}', String(d.getUTCDate()))
    .replace('{year}', String(d.getUTCFullYear()));
  const dateCode = `${String(d.getUTCFullYear()).slice(2)}${MONTHS[d.getUTCMonth()]}${String(d.getUTCDate()).padStart(2, '0')}`;
  let slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
  let ticker = venue === 'venuea' ? `${series.series}-${dateCode}` : slug;
  // Several events of one series can close on one day: suffix to keep keys unique.
  for (let k = 2; taken.has(ticker.toLowerCase()); k++) ticker = venue === 'venuea' ? `${series.series}-${dateCode}-${k}` : `${slug}-${k}`;
  if (venue === 'venueb') slug = ticker;
  taken.add(ticker.toLowerCase());
  const market = round(between(rng, 4, 96), 1);
  const snapshot = derive({
    history_id: 0,
    captured_at: now,
    confidence_score: round(between(rng, 2, 9.5), 1),
    model_probability: round(clamp(market + gauss(rng) * 6, 1, 99), 1),
    market_probability: market,
    edge_pp: null,
    expected_return: null,
    r_score: null,
    total_volume: Math.round(between(rng, 2e3, 4e6)),
    total_open_interest: Math.round(between(rng, 1e3, 1e6)),
    takeaway: Math.floor(rng() * TAKEAWAYS.length),
  });
  return { n, venue, ticker, slug, name, series, close_time, eligibility, mutually_exclusive: series.outcomes.length > 1 && rng() < 0.5, snapshots: [snapshot], reports: [] };
}

/** Confidence drifts; now and then (3% of snapshots) new research moves it by 2 to 3 points (up when below 7). */
function confidenceStep(confidence: number, rng: Rng): number {
  if (rng() < 0.03) return (confidence < 7 ? 1 : -1) * between(rng, 2, 3);
  return gauss(rng) * 0.4;
}

/** The next snapshot of a moving event: the edge drifts, and now and then crosses 10 pp either way. */
export function nextSnapshot(prev: Snapshot, rng: Rng, capturedAt: number, historyId: number): Snapshot {
  const market = round(clamp(prev.market_probability + gauss(rng) * 2.5, 1, 99), 1);
  const oldEdge = prev.edge_pp ?? 0;
  let edge = oldEdge + gauss(rng) * 2;
  if (rng() < 0.3) edge = Math.abs(oldEdge) < 10 ? (rng() < 0.5 ? -1 : 1) * between(rng, 10.5, 15) : Math.sign(oldEdge) * between(rng, 1, 7);
  return derive({
    history_id: historyId,
    captured_at: capturedAt,
    confidence_score: round(clamp(prev.confidence_score + confidenceStep(prev.confidence_score, rng), 0, 10), 1),
    model_probability: round(clamp(market + edge, 0.5, 99.5), 1),
    market_probability: market,
    edge_pp: null,
    expected_return: null,
    r_score: null,
    total_volume: Math.round(prev.total_volume + between(rng, 0, 2e4)),
    total_open_interest: Math.round(Math.max(0, prev.total_open_interest + gauss(rng) * 5e3)),
    takeaway: Math.floor(rng() * TAKEAWAYS.length),
  });
}

/** A snapshot with a test hook's patch applied: a patched edge alone moves the model probability. */
export function patchedSnapshot(prev: Snapshot, patch: Record<string, unknown>, capturedAt: number, historyId: number): Snapshot {
  const next: Snapshot = { ...prev, history_id: historyId, captured_at: capturedAt, extra: { ...prev.extra } };
  const num = (key: string): number | null | undefined => {
    const v = patch[key];
    return typeof v === 'number' || v === null ? v : undefined;
  };
  const market = num('market_probability');
  const model = num('model_probability');
  const edge = num('edge_pp');
  const confidence = num('confidence_score');
  if (typeof market === 'number') next.market_probability = market;
  if (typeof confidence === 'number') next.confidence_score = confidence;
  if (model !== undefined) next.model_probability = model;
  else if (typeof edge === 'number') next.model_probability = round(next.market_probability + edge, 1);
  for (const key of ['total_volume', 'total_open_interest'] as const) {
    const v = num(key);
    if (typeof v === 'number') next[key] = v;
  }
  derive(next);
  // An edge patched alone stays exactly as given even where the model hit a bound.
  if (typeof edge === 'number' && model === undefined) next.edge_pp = edge;
  // Event-level fields (applied by the world) and identity fields never become row overrides.
  const known = new Set([
    'market_probability', 'model_probability', 'edge_pp', 'confidence_score', 'total_volume', 'total_open_interest',
    'captured_at', 'history_id', 'event_ticker', 'venue', 'eligibility_status', 'close_time', 'name', 'series_category',
  ]);
  for (const [k, v] of Object.entries(patch)) if (!known.has(k)) next.extra![k] = v;
  return next;
}

// ---- views ----

interface OutcomeItem {
  market_ticker: string;
  outcome_name: string;
  model_probability: number;
  model_probability_source: string | null;
  evidence_grade: string | null;
  market_probability: number;
  reason: string | null;
}

const SOURCES = ['recalibrated', 'market_baseline', 'ladder_model'] as const;
const GRADES = ['A', 'B', 'C', 'D'] as const;

/** A market ticker: its event ticker plus an outcome suffix. */
export function marketTicker(ev: SimEvent, i: number): string {
  return `${ev.ticker.toUpperCase()}-${ev.series.outcomes.length > 1 ? `O${i + 1}` : 'YES'}`;
}

/** Per-outcome breakdown: the first outcome is the primary market of the snapshot. */
export function outcomes(ev: SimEvent, s: Snapshot): OutcomeItem[] {
  const rng = rngFor('outcomes', ev.n, s.history_id);
  return ev.series.outcomes.map((outcome_name, i) => {
    const market = i === 0 ? s.market_probability : round(between(rng, 2, 90), 1);
    const model = i === 0 ? (s.model_probability ?? market) : round(clamp(market + gauss(rng) * 4, 0.5, 99.5), 1);
    return {
      market_ticker: marketTicker(ev, i),
      outcome_name,
      model_probability: model,
      model_probability_source: pick(rng, SOURCES),
      evidence_grade: pick(rng, GRADES),
      market_probability: market,
      reason: `${outcome_name}: ${Math.abs(model - market) < 3 ? 'priced in line with evidence' : model > market ? 'evidence points higher than the price' : 'price runs ahead of evidence'}.`,
    };
  });
}

export function takeaway(ev: SimEvent, s: Snapshot): string {
  return TAKEAWAYS[s.takeaway % TAKEAWAYS.length]!.replace('{outcome}', ev.series.outcomes[0]!);
}

// toLocaleString is slow enough to show on 200-row pages.
function groupThousands(n: number): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

interface RichText {
  current_state_summary_richtext: string;
  short_answer_richtext: string;
  executive_summary_richtext: string;
}

function richtext(ev: SimEvent, s: Snapshot): RichText {
  const m = s.market_probability;
  const p = s.model_probability ?? m;
  return {
    current_state_summary_richtext: `<p>The market prices <strong>${ev.series.outcomes[0]}</strong> at ${m}%; volume ${groupThousands(s.total_volume)} contracts.</p>`,
    short_answer_richtext: `<p>Model: <em>${p}%</em> vs market ${m}% (${s.edge_pp === null ? 'no model' : `${s.edge_pp > 0 ? '+' : ''}${s.edge_pp} pp`}).</p>`,
    executive_summary_richtext: `<h3>${ev.name}</h3><ul><li>Confidence ${s.confidence_score}/10</li><li>${takeaway(ev, s)}</li></ul><p>Sources: <a href="https://news.example.com/${ev.slug}">coverage</a> &amp; filings.</p>`,
  };
}

function research(ev: SimEvent, s: Snapshot, summary: string): Record<string, unknown> {
  const source = { url: `https://news.example.com/${ev.slug}`, title: `${ev.name}: latest coverage`, lanes: ['traditional'] };
  const day = iso(s.captured_at).slice(0, 10);
  return {
    catalysts: {
      observed: [{
        date: day,
        date_readable: `${day.slice(8, 10)} ${MONTH_NAMES[Number(day.slice(5, 7)) - 1]} ${day.slice(0, 4)}`,
        direction: (s.edge_pp ?? 0) >= 0 ? 'drop' : 'spike',
        change_pct: round(Math.abs(s.edge_pp ?? 1) / 2, 1),
        price_before: round(clamp(s.market_probability + (s.edge_pp ?? 0) / 2, 0, 100), 1),
        price_after: s.market_probability,
        market_ticker: marketTicker(ev, 0),
        outcome_name: ev.series.outcomes[0],
        description: `Price move on ${ev.series.outcomes[0]}`,
        narrative: `<p>Move attributed to <em>new reporting</em>.</p>`,
        sources: [source],
      }],
      forward: { subtitle: 'Next catalyst', narrative: `<p>Resolution on ${iso(ev.close_time).slice(0, 10)}.</p>`, sources: [source] },
    },
    evidence: [{ slot: 'q1', question: `What drives ${ev.series.outcomes[0]}?`, findings: `<p>${takeaway(ev, s)}</p>`, table: null, sources: [source] }],
    current_state: { summary, sources: [source] },
    sources: [source],
  };
}

function baseFields(ev: SimEvent, s: Snapshot): Record<string, unknown> {
  return {
    history_id: s.history_id,
    run_id: runIdOf(s),
    captured_at: iso(s.captured_at),
    event_ticker: ev.ticker,
    name: ev.name,
    slug: ev.slug,
    series_category: ev.series.category,
    close_time: iso(ev.close_time),
    confidence_score: s.confidence_score,
    model_probability: s.model_probability,
    market_probability: s.market_probability,
    edge_pp: s.edge_pp,
    expected_return: s.expected_return,
    r_score: s.r_score,
    total_volume: s.total_volume,
    total_open_interest: s.total_open_interest,
  };
}

/** One export run per simulated minute: every snapshot captured in that minute shares its run_id. */
export function runIdOf(s: Snapshot): string {
  return uuidFrom('export-run', Math.floor(s.captured_at / 60_000));
}

// Rows are built as one literal each (no object spreads): list pages render hundreds per request.
export function listRow(ev: SimEvent, s: Snapshot, withEligibility: boolean): Record<string, unknown> {
  const text = richtext(ev, s);
  const row: Record<string, unknown> = {
    history_id: s.history_id,
    run_id: runIdOf(s),
    captured_at: iso(s.captured_at),
    event_ticker: ev.ticker,
    name: ev.name,
    slug: ev.slug,
    image_url: `https://images.example.com/series/${ev.series.series.toLowerCase()}.png`,
    series_category: ev.series.category,
    available_on_brokers: ev.n % 3 !== 0,
    mutually_exclusive: ev.mutually_exclusive,
    analysis_last_updated: iso(s.captured_at),
    confidence_score: s.confidence_score,
    model_probability: s.model_probability,
    market_probability: s.market_probability,
    edge_pp: s.edge_pp,
    expected_return: s.expected_return,
    r_score: s.r_score,
    total_volume: s.total_volume,
    total_open_interest: s.total_open_interest,
    close_time: iso(ev.close_time),
    key_takeaway: takeaway(ev, s),
    current_state_summary_richtext: text.current_state_summary_richtext,
    short_answer_richtext: text.short_answer_richtext,
    executive_summary_richtext: text.executive_summary_richtext,
    outcome_probabilities: outcomes(ev, s),
    has_history: ev.snapshots.length > 1,
    research: research(ev, s, text.current_state_summary_richtext),
  };
  if (withEligibility) {
    const open = ev.eligibility === 'open';
    row.eligible = open;
    row.eligibility_status = ev.eligibility;
    row.eligibility_reason = open ? null : `market is ${ev.eligibility}`;
  }
  return withExtra(row, s);
}

function withExtra(row: Record<string, unknown>, s: Snapshot): Record<string, unknown> {
  if (s.extra) for (const key of Object.keys(s.extra)) row[key] = s.extra[key];
  return row;
}

export function historyRow(ev: SimEvent, s: Snapshot, withAnalysis: boolean): Record<string, unknown> {
  const row = baseFields(ev, s);
  row.outcome_probabilities = outcomes(ev, s);
  if (withAnalysis) {
    const text = richtext(ev, s);
    row.key_takeaway = takeaway(ev, s);
    row.current_state_summary_richtext = text.current_state_summary_richtext;
    row.short_answer_richtext = text.short_answer_richtext;
    row.executive_summary_richtext = text.executive_summary_richtext;
  }
  return withExtra(row, s);
}

export function eventUrl(ev: SimEvent): string {
  return ev.venue === 'venuea'
    ? `https://venuea.example.com/markets/${ev.series.series.toLowerCase()}/${ev.slug}/${ev.ticker.toLowerCase()}`
    : `https://venueb.example.com/event/${ev.slug}`;
}

/** Volumes and quotes of an event's i-th market at a snapshot: the event detail and the market search agree. */
export function marketBook(ev: SimEvent, s: Snapshot, i: number, price: number): {
  volume: number; volume_24h: number; yes_bid: number; yes_ask: number; no_bid: number; no_ask: number;
} {
  const rng = rngFor('market', ev.n, s.history_id, i);
  return {
    volume: Math.round(s.total_volume / (i + 2)),
    volume_24h: Math.round(between(rng, 0, s.total_volume / 20)),
    yes_bid: round(clamp(price - 0.01, 0, 1), 2),
    yes_ask: round(clamp(price + 0.01, 0, 1), 2),
    no_bid: round(clamp(1 - price - 0.01, 0, 1), 2),
    no_ask: round(clamp(1 - price + 0.01, 0, 1), 2),
  };
}

export function detail(ev: SimEvent, s: Snapshot): Record<string, unknown> {
  const determined = ev.eligibility === 'settled';
  const markets = outcomes(ev, s).map((o, i) => {
    const status = determined ? 'determined' : ev.eligibility === 'closed' ? 'closed' : 'active';
    return {
      ...o,
      market_probability: determined ? (i === 0 ? 100 : 0) : o.market_probability,
      model_probability_source: determined ? 'determined' : o.model_probability_source,
      ...marketBook(ev, s, i, o.market_probability / 100),
      status,
    };
  });
  const { has_history: _h, research: _r, ...row } = listRow(ev, s, false);
  return {
    ...row,
    venue: ev.venue,
    title: ev.name,
    subtitle: `Resolves ${iso(ev.close_time).slice(0, 10)}`,
    event_url: eventUrl(ev),
    meta_category: ev.series.category,
    resolution_cadence: null,
    canonical_market_page: ev.reports.length > 0 ? `/research/${ev.series.category}/${ev.slug}` : null,
    total_volume_24h: Math.round(s.total_volume / 25),
    markets,
    series_ticker: ev.series.series,
    series_title: ev.series.title.replace(/ ?\{[a-z]+\},?/g, ''),
    series_frequency: 'custom',
    series_tags_raw: [ev.series.category],
    collateral_return_type: 'binary',
    strike_date: iso(ev.close_time),
    strike_period: null,
    fee_type: 'quadratic',
    fee_multiplier: 1,
    settlement_sources_raw: [{ name: 'Official source', url: 'https://example.com/settlement' }],
    additional_prohibitions_raw: [],
    contract_url: `${eventUrl(ev)}/contract`,
    contract_terms_url: `${eventUrl(ev)}/terms`,
    kalshi_event_url: eventUrl(ev),
    event_category_deprecated: ev.series.category,
    ...s.extra,
  };
}

function versionEntry(v: ReportVersion): Record<string, unknown> {
  return {
    run_id: v.run_id,
    captured_at: iso(v.captured_at),
    analysis_last_updated: iso(v.snapshot.captured_at),
    market_probability: v.snapshot.market_probability,
    model_probability: v.snapshot.model_probability,
    confidence_score: v.snapshot.confidence_score,
    total_volume: v.snapshot.total_volume,
    key_takeaway: null,
    trust_score: v.trust_score,
    trust_label: v.trust_label,
  };
}

export function reportRetrieval(ev: SimEvent, version: ReportVersion | undefined): Record<string, unknown> {
  const newest = ev.reports.slice(-6).reverse();
  const s = version?.snapshot;
  return {
    event_ticker: ev.ticker,
    venue: ev.venue,
    requested_url: eventUrl(ev),
    name: version ? ev.name : null,
    title: version ? ev.name : null,
    versions: newest.map((v) => ({ ...versionEntry(v), key_takeaway: takeaway(ev, v.snapshot) })),
    run_id: version?.run_id ?? null,
    markdown_report: version && s
      ? `# ${ev.name}\n\n**Trust score: ${version.trust_score ?? 'n/a'} (${version.trust_label ?? 'unrated'})**\n\n` +
        `Model ${s.model_probability}% vs market ${s.market_probability}% (edge ${s.edge_pp} pp), confidence ${s.confidence_score}/10.\n\n` +
        `## Key takeaway\n\n${takeaway(ev, s)}\n`
      : null,
    trust_score: version?.trust_score ?? null,
    trust_label: version?.trust_label ?? null,
    outcome_probabilities_json: s ? JSON.stringify(outcomes(ev, s)) : null,
  };
}

const PILLARS = [
  ['manipulation_resistance', 'Manipulation resistance'],
  ['information_fairness', 'Information fairness'],
  ['settlement_reliability', 'Settlement reliability'],
] as const;
const COMPONENTS = [
  ['liquidity', 'Liquidity'],
  ['move_quality', 'Move quality'],
  ['rule_clarity', 'Rule clarity'],
] as const;

export function trustScorecard(ev: SimEvent, v: ReportVersion, expand: Set<string>, now: number): Record<string, unknown> {
  const score = Math.round(v.trust_score ?? 0);
  const rng = rngFor('trust', v.run_id);
  const part = (): number => Math.round(clamp(score + gauss(rng) * 8, 0, 100));
  const capped = score < 50;
  const integrityScore = part();
  const tradeScore = part();
  const hour = Math.floor(now / 3_600_000) * 3_600_000;
  return {
    event_ticker: ev.ticker,
    venue: ev.venue,
    title: ev.name,
    run_id: v.run_id,
    trust_index: {
      score,
      label: v.trust_label ?? trustLabelFor(score),
      computed_at: iso(Math.max(hour, v.captured_at)),
      version: 'trust-2.3.0',
      caps: capped ? [{ key: 'settlement_reliability', name: 'Settlement reliability', floor: 40, ceiling: score }] : [],
      uncapped_score: capped ? Math.min(100, score + 9) : null,
      floors_breached: [],
      profile: {
        integrity: {
          key: 'integrity',
          name: 'Integrity',
          score: integrityScore,
          label: trustLabelFor(integrityScore),
          risk: { score: 100 - integrityScore, label: integrityScore >= 65 ? 'low' : integrityScore >= 45 ? 'moderate' : 'high' },
          breakdown: PILLARS.map(([key, name]) => {
            const s = part();
            return { key, name, score: s, label: trustLabelFor(s), basis: rng() < 0.7 ? 'measured' : 'structural_prior', summary: `${name} reads ${trustLabelFor(s).toLowerCase()}.`, factors: [] };
          }),
          screen_counts: { run: 7, not_applicable: 2, awaiting_data: 1 },
          screens: expand.has('integrity') ? [] : null,
          structure_classes: expand.has('integrity') ? [] : null,
        },
        trade_quality: {
          key: 'trade_quality',
          name: 'Trade quality',
          score: tradeScore,
          label: trustLabelFor(tradeScore),
          basis: 'measured',
          summary: `Trading conditions read ${trustLabelFor(tradeScore).toLowerCase()}.`,
          factors: [{ key: 'cost_1000_usd', name: 'Cost of a 1000-dollar order', value: round(between(rng, 2, 40), 2) }],
          breakdown: COMPONENTS.map(([key, name]) => {
            const s = part();
            return { key, name, score: s, label: trustLabelFor(s) };
          }),
          markets: expand.has('trade_quality') ? [] : null,
          exclusions: expand.has('trade_quality') ? { total: 0, terminal_lifecycle: 0, below_volume_floor: 0, no_ticker: 0 } : null,
        },
      },
    },
  };
}

export function rankingRow(ev: SimEvent, s: Snapshot): Record<string, unknown> {
  return {
    event_ticker: ev.ticker,
    title: ev.name,
    series_category: ev.series.category,
    model_probability: s.model_probability,
    market_probability: s.market_probability,
    edge_pp: s.edge_pp,
    expected_return: s.expected_return,
    confidence_score: s.confidence_score,
    total_volume: s.total_volume,
    total_open_interest: s.total_open_interest,
  };
}

export function edgeRow(input: string, marketTickerInput: string | null, ev: SimEvent, s: Snapshot): Record<string, unknown> {
  return {
    input_ticker: input,
    market_ticker: marketTickerInput,
    ...rankingRow(ev, s),
    status: s.model_probability === null ? 'unscored' : 'scored',
    captured_at: iso(s.captured_at),
  };
}
