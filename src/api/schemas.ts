// Zod schemas of the research API resources edgewatch reads from api/research-data.md (those of
// api/market-search-and-baskets.md are in market-schemas.ts). Each type is inferred from its schema.
//
// Every object is loose: the API is additive, and the snapshots stored downstream must carry
// every field it sent. Types follow the docs; "X or null" is nullable, fields the docs say may
// be absent are optional. Free display text (image, summaries, takeaways) also accepts null:
// a missing blurb must not fail a 50,000-row poll. A wrong type is always rejected.
// Schemas are built once here; never construct them per row.
import { z } from 'zod';

const str = z.string();
const num = z.number();
const int = z.number().int();
const text = z.string().nullable();
const numOrNull = z.number().nullable();

// ---- events ----------------------------------------------------------------------------

export const SourceEntry = z.looseObject({
  url: str,
  title: text.optional(),
  lanes: z.array(str).optional(),
});
export type SourceEntry = z.infer<typeof SourceEntry>;

const sources = z.array(SourceEntry);

export const ObservedCatalyst = z.looseObject({
  date: str,
  date_readable: text.optional(),
  direction: str,
  change_pct: numOrNull.optional(),
  price_before: numOrNull.optional(),
  price_after: numOrNull.optional(),
  market_ticker: text.optional(),
  outcome_name: text.optional(),
  description: text.optional(),
  narrative: text.optional(),
  sources: sources.optional(),
});

export const EvidenceEntry = z.looseObject({
  slot: str,
  question: text.optional(),
  findings: text.optional(),
  table: text.optional(),
  sources: sources.optional(),
});

export const Research = z.looseObject({
  catalysts: z
    .looseObject({
      observed: z.array(ObservedCatalyst).optional(),
      forward: z
        .looseObject({ subtitle: text.optional(), narrative: text.optional(), sources: sources.optional() })
        .nullable()
        .optional(),
    })
    .optional(),
  evidence: z.array(EvidenceEntry).optional(),
  current_state: z.looseObject({ summary: text.optional(), sources: sources.optional() }).nullable().optional(),
  sources: sources.optional(),
});
export type Research = z.infer<typeof Research>;

export const OutcomeItem = z.looseObject({
  market_ticker: str,
  outcome_name: str,
  // Unmodeled / out-of-scope outcomes are "not a forecast": tolerate null.
  model_probability: numOrNull,
  model_probability_source: text.optional(),
  evidence_grade: text.optional(),
  market_probability: numOrNull,
  reason: text.optional(),
});
export type OutcomeItem = z.infer<typeof OutcomeItem>;

/** Fields shared by the list row and the detail of an event snapshot. */
const snapshotFields = {
  history_id: int,
  run_id: str,
  captured_at: str,
  event_ticker: str,
  name: str,
  slug: str,
  image_url: text.optional(),
  series_category: str,
  available_on_brokers: z.boolean(),
  mutually_exclusive: z.boolean(),
  analysis_last_updated: text,
  confidence_score: num,
  // A snapshot may carry no model (history's exclude_empty_model says so): then the
  // model-derived numbers are null.
  model_probability: numOrNull,
  market_probability: num,
  edge_pp: numOrNull,
  expected_return: numOrNull,
  r_score: numOrNull,
  total_volume: num,
  total_open_interest: num,
  close_time: text,
  key_takeaway: text.optional(),
  current_state_summary_richtext: text.optional(),
  short_answer_richtext: text.optional(),
  executive_summary_richtext: text.optional(),
  outcome_probabilities: z.array(OutcomeItem).nullable(),
};

export const EventRow = z.looseObject({
  ...snapshotFields,
  has_history: z.boolean(),
  research: Research.optional(),
  // Only with include=eligibility.
  eligible: z.boolean().nullable().optional(),
  eligibility_status: text.optional(),
  eligibility_reason: text.optional(),
});
export type EventRow = z.infer<typeof EventRow>;

export const Market = z.looseObject({
  market_ticker: str,
  outcome_name: str,
  model_probability: numOrNull,
  market_probability: numOrNull,
  model_probability_source: text,
  evidence_grade: text,
  reason: text,
  volume: numOrNull,
  volume_24h: numOrNull,
  yes_bid: numOrNull,
  yes_ask: numOrNull,
  no_bid: numOrNull,
  no_ask: numOrNull,
  status: str,
});
export type Market = z.infer<typeof Market>;

export const EventDetail = z.looseObject({
  ...snapshotFields,
  venue: str,
  title: str,
  subtitle: text.optional(),
  event_url: text.optional(),
  meta_category: text.optional(),
  resolution_cadence: text.optional(),
  canonical_market_page: text.optional(),
  total_volume_24h: num,
  markets: z.array(Market),
});
export type EventDetail = z.infer<typeof EventDetail>;

export const HistorySnapshot = z.looseObject({
  history_id: int,
  run_id: str,
  captured_at: str,
  event_ticker: str,
  name: str,
  slug: str,
  series_category: str,
  close_time: text,
  confidence_score: num,
  // exclude_empty_model=false returns snapshots without a model: model-derived numbers may be null.
  model_probability: numOrNull,
  market_probability: num,
  edge_pp: numOrNull,
  expected_return: numOrNull,
  r_score: numOrNull,
  total_volume: num,
  total_open_interest: num,
  outcome_probabilities: z.array(OutcomeItem).nullable(),
  // Only with include=analysis.
  key_takeaway: text.optional(),
  current_state_summary_richtext: text.optional(),
  short_answer_richtext: text.optional(),
  executive_summary_richtext: text.optional(),
});
export type HistorySnapshot = z.infer<typeof HistorySnapshot>;

// ---- reports ---------------------------------------------------------------------------

export const ReportVersion = z.looseObject({
  run_id: str,
  captured_at: str,
  analysis_last_updated: text,
  market_probability: num,
  model_probability: numOrNull,
  confidence_score: num,
  total_volume: num,
  key_takeaway: text,
  trust_score: numOrNull,
  trust_label: text,
});
export type ReportVersion = z.infer<typeof ReportVersion>;

export const ReportRetrieval = z.looseObject({
  event_ticker: str,
  venue: str,
  requested_url: text,
  name: text,
  title: text,
  versions: z.array(ReportVersion),
  run_id: text,
  markdown_report: text,
  trust_score: numOrNull,
  trust_label: text,
  outcome_probabilities_json: text,
});
export type ReportRetrieval = z.infer<typeof ReportRetrieval>;

export const TrustCap = z.looseObject({ key: str, name: str, floor: numOrNull, ceiling: numOrNull });
export const FloorBreached = z.looseObject({ key: str, floor: num, score: num });

const Reading = { key: str, name: str, score: numOrNull, label: text };

export const IntegrityPillar = z.looseObject({
  ...Reading,
  basis: text,
  summary: text,
  factors: z.array(z.unknown()).nullable(),
});

export const TradeQualityComponent = z.looseObject(Reading);

export const IntegrityProfile = z.looseObject({
  ...Reading,
  risk: z.looseObject({ score: num, label: text }).nullable(),
  breakdown: z.array(IntegrityPillar),
  screen_counts: z.looseObject({ run: int, not_applicable: int, awaiting_data: int }).nullable(),
  // Null unless expanded.
  screens: z.unknown().optional(),
  structure_classes: z.unknown().optional(),
});

export const TradeQualityProfile = z.looseObject({
  ...Reading,
  basis: text,
  summary: text,
  factors: z.array(z.unknown()).nullable(),
  breakdown: z.array(TradeQualityComponent),
  // Null unless expanded.
  markets: z.array(z.looseObject({ market_ticker: str })).nullable().optional(),
  exclusions: z.looseObject({}).nullable().optional(),
});

export const TrustIndex = z.looseObject({
  score: int,
  label: str,
  computed_at: str,
  version: str,
  caps: z.array(TrustCap),
  uncapped_score: int.nullable(),
  floors_breached: z.array(FloorBreached),
  profile: z.looseObject({ integrity: IntegrityProfile, trade_quality: TradeQualityProfile }),
});
export type TrustIndex = z.infer<typeof TrustIndex>;

export const TrustScorecard = z.looseObject({
  event_ticker: str,
  venue: str,
  title: text,
  run_id: str,
  trust_index: TrustIndex,
});
export type TrustScorecard = z.infer<typeof TrustScorecard>;

export const GenerationAccepted = z.looseObject({
  run_id: str,
  status: str,
  event_ticker: str,
  venue: str,
});
export type GenerationAccepted = z.infer<typeof GenerationAccepted>;

export const RunStatus = z.looseObject({
  run_id: str,
  /** processing, completed or failed */
  status: str,
  venue: str,
  event_ticker: text,
  requested_url: text,
});
export type RunStatus = z.infer<typeof RunStatus>;

// ---- KPI events ------------------------------------------------------------------------

/** `{value, unit, formatted}`; wherever it appears the whole object may be null. */
export const KpiValue = z.looseObject({ value: num, unit: str, formatted: str });
export type KpiValue = z.infer<typeof KpiValue>;

const kpiValue = KpiValue.nullable();

export const KpiRow = z.looseObject({
  id: str,
  kpi_id: str,
  company_name: text,
  company_ticker: text,
  kpi_name: text,
  period: text,
  period_label: text,
  period_kind: text,
  status: str,
  expected_report_date: text,
  market_implied: kpiValue,
  market_implied_as_of: text,
  octagon_estimate_value: kpiValue,
  edge_absolute_value: kpiValue,
  edge_market_age_days: int.nullable(),
  actual: kpiValue,
  company_guidance: kpiValue,
  model_probability: numOrNull,
  market_probability: numOrNull,
  edge_pp: numOrNull,
  signal: text,
  near_settled: z.boolean(),
  newsworthiness: int,
  liquidity_tier: text,
  strike_count: int.nullable().optional(),
  strike_period: text.optional(),
  // Present only when a trusted actual is served.
  actual_source: text.optional(),
  reported_at: text,
  close_time: text,
});
export type KpiRow = z.infer<typeof KpiRow>;

const trendPoint = z.looseObject({ as_of: str, value: numOrNull });

export const KpiDetail = z.looseObject({
  event_id: str,
  kpi_id: str,
  company: z.looseObject({
    name: text,
    ticker: text,
    exchange: text.optional(),
    sector: text.optional(),
    industry: text.optional(),
  }),
  kpi: z.looseObject({
    title: text,
    description: text.optional(),
    unit: text.optional(),
    type: text.optional(),
    directionality: text.optional(),
  }),
  period: z
    .looseObject({ label: text, code: text, kind: text, start: text, end: text })
    .nullable(),
  prediction_market_estimate: z
    .looseObject({
      central: kpiValue,
      as_of: text,
      trend: z.array(trendPoint).optional(),
      liquidity_tier: text.optional(),
      source: text.optional(),
    })
    .nullable(),
  octagon_model_estimate: z
    .looseObject({
      central: kpiValue,
      confidence: numOrNull.optional(),
      as_of: text,
      trend: z.array(trendPoint).optional(),
      methodology_url: text.optional(),
    })
    .nullable(),
  actual: z
    .looseObject({
      value: kpiValue,
      reported_at: text,
      precision: text.optional(),
      range: z.unknown().optional(),
      verified: z.boolean().optional(),
      sources: z.array(z.looseObject({ name: text, url: text })).optional(),
      source_method: text.optional(),
    })
    .nullable(),
  analysis: z.looseObject({}).nullable(),
  editorial: z.looseObject({}).nullable(),
  as_of: text,
});
export type KpiDetail = z.infer<typeof KpiDetail>;

// ---- envelopes -------------------------------------------------------------------------

const pageFields = { next_cursor: z.string().nullable(), has_more: z.boolean() };

/**
 * The generic page envelope with rows left unparsed: the client validates rows one by one so
 * an error can name the row's key.
 */
export const PageEnvelope = z.looseObject({ data: z.array(z.unknown()), ...pageFields });
export type PageEnvelope = z.infer<typeof PageEnvelope>;

export const EventHistoryEnvelope = PageEnvelope.extend({ event_ticker: str.optional() });

export const KpiBoardEnvelope = PageEnvelope.extend({
  as_of: text,
  aggregates: z
    .looseObject({ total_events: num.optional(), total_markets: num.optional(), total_volume: num.optional() })
    .nullable()
    .optional(),
  sort: text.optional(),
  status: text.optional(),
});
export type KpiBoardEnvelope = z.infer<typeof KpiBoardEnvelope>;

// ---- agents (POST /responses) ----------------------------------------------------------

export const AgentCitation = z.looseObject({ order: z.number().int(), name: str, url: str });
export type AgentCitation = z.infer<typeof AgentCitation>;

/** A whole (non-streamed) response: the text and citations at `output[0].content[0]`. */
export const AgentResponse = z.looseObject({
  id: str,
  output: z
    .array(z.looseObject({ content: z.array(z.looseObject({ text: str, annotations: z.array(AgentCitation).default([]) })).min(1) }))
    .min(1),
});
export type AgentResponse = z.infer<typeof AgentResponse>;
