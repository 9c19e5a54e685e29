// Field names as labels for people: `edge_pp` -> `Edge`. Pure.
import { words } from '../core/format.ts';

const FIELD_LABELS: Record<string, string> = {
  edge_pp: 'Edge',
  abs_edge_pp: 'Edge (absolute)',
  model_probability: 'Model probability',
  market_probability: 'Market probability',
  confidence_score: 'Confidence',
  expected_return: 'Expected return',
  r_score: 'R-score',
  total_volume: 'Volume',
  total_open_interest: 'Open interest',
  close_time: 'Closes',
  trust_label: 'Trust',
  trust_score: 'Trust score',
  near_settled: 'Near settled',
  market_implied: 'Market-implied',
  octagon_estimate_value: 'Model',
  edge_absolute_value: 'Edge (model - market)',
  company_guidance: 'Guidance',
  liquidity_tier: 'Liquidity',
  evidence_grade: 'Evidence grade',
  model_probability_source: 'Probability source',
  series_category: 'Category',
  status: 'Status',
  signal: 'Signal',
  actual: 'Actual',
  actual_source: 'Actual source',
  run_id: 'Run',
  rank: 'Rank',
  last_price: 'Last price',
  yes_bid: 'Yes bid',
  yes_ask: 'Yes ask',
  no_bid: 'No bid',
  no_ask: 'No ask',
  volume_24h: 'Volume 24h',
  open_interest: 'Open interest',
  distance: 'Distance',
  total_return: 'Return',
  max_drawdown: 'Max drawdown',
  max_leg_pct: 'Largest leg',
  max_pairwise_correlation: 'Max pairwise correlation',
  warnings: 'Warnings',
  calendar_clashes: 'Calendar clashes',
  duplicate_underliers: 'Duplicate underliers',
};

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A field name as a label: `edge_pp` -> `Edge`, `actual.value` -> `Actual`. */
export function fieldLabel(field: string): string {
  const known = FIELD_LABELS[field];
  if (known !== undefined) return known;
  const head = field.split('.')[0] ?? field;
  const headKnown = FIELD_LABELS[head];
  if (headKnown !== undefined) return headKnown;
  return capitalize(words(field.replace(/_pp$/, '')));
}
