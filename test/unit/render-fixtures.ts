// Alerts as the rules engine makes them, one per trigger type, for the render and channel tests.
import type { Alert } from '../../src/core/types.ts';

export const EVIL = '<script>alert(1)</script> <img src=x onerror=alert(1)> <!channel>';

const eventRow = {
  history_id: 101,
  run_id: '7f1c2d3e-0000-4000-8000-000000000001',
  captured_at: '2026-11-21T17:55:00Z',
  event_ticker: 'KXFED-25DEC',
  name: 'Fed decision December',
  series_category: 'politics',
  confidence_score: 7,
  model_probability: 62.3,
  market_probability: 50,
  edge_pp: 12.3,
  abs_edge_pp: 12.3,
  close_time: '2026-12-10T19:00:00Z',
  key_takeaway: 'Cut priced too low.',
  executive_summary_richtext: '<p>Markets <strong>underprice</strong> a cut. <a href="https://example.com/x">source</a></p>',
  outcome_probabilities: [
    { market_ticker: 'KXFED-25DEC-CUT', outcome_name: 'Cut', model_probability: 62.3, market_probability: 50, model_probability_source: 'recalibrated', evidence_grade: 'A' },
    { market_ticker: 'KXFED-25DEC-HOLD', outcome_name: 'Hold', model_probability: 37.7, market_probability: 50, model_probability_source: 'market_baseline', evidence_grade: 'C' },
  ],
};

const base = { severity: 'warning', fired_at: '2026-11-21T18:00:03Z' } as const;

export const crossesAlert: Alert = {
  ...base,
  id: '01JD3Z9K4M6X0T2Q8B7N5C1V9R',
  rule: 'politics-edge-over-10',
  source: 'events',
  entity: 'KXFED-25DEC',
  trigger: 'crosses',
  summary: 'Fed decision December: edge +12.3 pp crossed above 10 pp',
  changes: [{ field: 'edge_pp', from: 8.1, to: 12.3 }],
  current: eventRow,
};

export const movesAlert: Alert = {
  ...crossesAlert,
  id: '01JD3Z9K4M6X0T2Q8B7N5C1V9S',
  rule: 'model-moves',
  trigger: 'moves',
  summary: 'Fed decision December: model probability up 7.3 pp',
  changes: [{ field: 'model_probability', from: 55, to: 62.3 }],
};

export const flipsAlert: Alert = {
  ...crossesAlert,
  id: '01JD3Z9K4M6X0T2Q8B7N5C1V9T',
  rule: 'near-settled',
  trigger: 'flips',
  summary: 'Fed decision December: near settled',
  changes: [{ field: 'near_settled', from: false, to: true }],
};

export const newAlert: Alert = {
  ...crossesAlert,
  id: '01JD3Z9K4M6X0T2Q8B7N5C1V9V',
  rule: 'new-events',
  trigger: 'new',
  severity: 'info',
  summary: 'New event: Fed decision December',
  changes: [],
};

const kpiRow = {
  id: 'netflix-subs-q3',
  kpi_id: 'kpi_123',
  company_name: 'Netflix',
  company_ticker: 'NFLX',
  kpi_name: 'Paid subscribers',
  period_label: 'Q3 2026',
  status: 'settled',
  market_implied: { value: 301.2, unit: 'M', formatted: '301.2M' },
  octagon_estimate_value: { value: 303.5, unit: 'M', formatted: '303.5M' },
  edge_absolute_value: { value: 2.3, unit: 'M', formatted: '2.3M' },
  actual: { value: 305.1, unit: 'M', formatted: '305.1M' },
  actual_source: 'company_report',
  reported_at: '2026-10-20T20:05:00Z',
  model_probability: 58,
  market_probability: 51,
  edge_pp: 7,
  near_settled: false,
  detail: {
    analysis: { surprise: { value: 3.9, unit: 'M', formatted: '+3.9M', percent: 0.0129 } },
    actual: { source_method: 'company_report', verified: true, sources: [{ name: 'Q3 shareholder letter', url: 'https://ir.example.com' }] },
  },
};

export const appearsAlert: Alert = {
  ...base,
  severity: 'info',
  id: '01JD3Z9K4M6X0T2Q8B7N5C1V9W',
  rule: 'kpi-actuals',
  source: 'kpis',
  entity: 'netflix-subs-q3',
  trigger: 'appears',
  summary: 'Netflix Paid subscribers Q3 2026: actual 305.1M',
  changes: [{ field: 'actual', from: null, to: kpiRow.actual }],
  current: kpiRow,
};

const trustRow = {
  run_id: '7f1c2d3e-0000-4000-8000-000000000009',
  trust_score: 55,
  trust_label: 'Caution',
  title: 'Fed decision December',
  event_ticker: 'KXFED-25DEC',
  model_probability: 62.3,
  market_probability: 50,
  edge_pp: 12.3,
};

export const dropsAlert: Alert = {
  ...base,
  id: '01JD3Z9K4M6X0T2Q8B7N5C1V9X',
  rule: 'trust-drops',
  source: 'reports',
  entity: 'venuea/KXFED-25DEC',
  trigger: 'drops',
  summary: 'Fed decision December: trust Good -> Caution',
  changes: [
    { field: 'trust_label', from: 'Good', to: 'Caution' },
    { field: 'trust_score', from: 72, to: 55 },
  ],
  current: trustRow,
};

export const risesAlert: Alert = {
  ...dropsAlert,
  id: '01JD3Z9K4M6X0T2Q8B7N5C1V9Y',
  rule: 'trust-rises',
  trigger: 'rises',
  summary: 'Fed decision December: trust Caution -> Good',
  changes: [
    { field: 'trust_label', from: 'Caution', to: 'Good' },
    { field: 'trust_score', from: 55, to: 72 },
  ],
  current: { ...trustRow, trust_label: 'Good', trust_score: 72 },
};

export const changesAlert: Alert = {
  ...base,
  id: '01JD3Z9K4M6X0T2Q8B7N5C1V9Z',
  rule: 'my-runs',
  source: 'runs',
  entity: '7f1c2d3e-0000-4000-8000-00000000000a',
  trigger: 'changes',
  summary: 'Report run for KXFED-25DEC failed',
  changes: [{ field: 'status', from: 'processing', to: 'failed' }],
  current: {
    run_id: '7f1c2d3e-0000-4000-8000-00000000000a',
    status: 'failed',
    venue: 'venuea',
    event_ticker: 'KXFED-25DEC',
    requested_url: 'https://venuea.example.com/markets/kxfed/fed/KXFED-25DEC',
  },
};

const basketRow = {
  basket: 'rates-hedge',
  timeframe: '3m',
  total_return: 0.0412,
  annualized_return: 0.171,
  sharpe: 1.23,
  max_drawdown: -0.1234,
  win_rate: 0.52,
  first_nav: 1,
  final_nav: 1.0412,
  observation_count: 91,
  total_stake_usd: 400,
  max_pairwise_correlation: 0.71,
  max_leg_pct: 4,
  warnings: ['thin market: KXCPI-25NOV-YES traded under 1000 in 24 h', 'two legs close within 7 days'],
  calendar_clashes: 1,
  duplicate_underliers: 0,
};

/** A basket gained a warning (source baskets). */
export const addedAlert: Alert = {
  ...base,
  id: '01JD3Z9K4M6X0T2Q8B7N5C1VB0',
  rule: 'hedge-warnings',
  source: 'baskets',
  entity: 'rates-hedge',
  trigger: 'added',
  summary: 'rates-hedge: new warning: two legs close within 7 days',
  changes: [
    { field: 'warnings', from: [basketRow.warnings[0]], to: basketRow.warnings, added: ['two legs close within 7 days'] },
    { field: 'calendar_clashes', from: 0, to: 1 },
  ],
  current: basketRow,
};

const rankingRow = {
  event_ticker: 'KXFED-25DEC',
  title: 'Fed decision December',
  series_category: 'politics',
  model_probability: 62.3,
  market_probability: 50,
  edge_pp: 12.3,
  expected_return: 0.24,
  confidence_score: 7,
  total_volume: 125000,
  total_open_interest: 40000,
  rank: 7,
};

/** An event entered the top 10 of a ranking (source rankings). */
export const rankingAlert: Alert = {
  ...base,
  id: '01JD3Z9K4M6X0T2Q8B7N5C1VB1',
  rule: 'top10-politics',
  source: 'rankings',
  entity: 'KXFED-25DEC',
  trigger: 'crosses',
  summary: 'Fed decision December: rank #7 crossed below 11',
  changes: [{ field: 'rank', from: 14, to: 7 }],
  current: rankingRow,
};

/** A market's price moved (source markets). */
export const marketAlert: Alert = {
  ...base,
  id: '01JD3Z9K4M6X0T2Q8B7N5C1VB2',
  rule: 'fed-prices',
  source: 'markets',
  entity: 'KXFED-25DEC-O1',
  trigger: 'moves',
  summary: 'Fed decision December: Cut: last_price 42¢ -> 55¢ (+13¢)',
  changes: [{ field: 'last_price', from: 0.42, to: 0.55 }],
  current: {
    market_ticker: 'KXFED-25DEC-O1',
    event_ticker: 'KXFED-25DEC',
    series_ticker: 'KXFED',
    title: 'Fed decision December: Cut',
    subtitle: 'Cut',
    status: 'open',
    close_time: '2026-12-10T19:00:00Z',
    last_price: 0.55,
    yes_bid: 0.54,
    yes_ask: 0.565,
    no_bid: 0.435,
    no_ask: 0.46,
    volume: 900000,
    volume_24h: 12500,
    liquidity: 30000,
    open_interest: 52000,
    category: 'politics',
    event_name: 'Fed decision December',
  },
};

/** One alert per market-search source. */
export const marketSearchAlerts: Alert[] = [
  { ...crossesAlert, id: '01JD3Z9K4M6X0T2Q8B7N5C1VB3', rule: 'fed-edge', source: 'edge', entity: 'KXFED-25DEC', current: { ...rankingRow, rank: undefined, input_ticker: 'KXFED-25DEC', market_ticker: null, status: 'scored', captured_at: '2026-11-21T04:00:00Z' } },
  rankingAlert,
  marketAlert,
  {
    ...base,
    id: '01JD3Z9K4M6X0T2Q8B7N5C1VB4',
    rule: 'fed-themes',
    source: 'similar',
    entity: 'KXFEDDECISION-26JAN-O2',
    trigger: 'new',
    summary: 'Fed decision January: Hold: new similar market (distance 0.1835)',
    changes: [],
    current: { market_ticker: 'KXFEDDECISION-26JAN-O2', event_ticker: 'KXFEDDECISION-26JAN', title: 'Fed decision January: Hold', category: 'politics', distance: 0.1835 },
  },
  addedAlert,
];

/** One alert per trigger type. */
export const alertsByTrigger: Record<Alert['trigger'], Alert> = {
  crosses: crossesAlert,
  moves: movesAlert,
  flips: flipsAlert,
  changes: changesAlert,
  drops: dropsAlert,
  rises: risesAlert,
  appears: appearsAlert,
  new: newAlert,
  overdue: {
    ...appearsAlert,
    id: '01JD3Z9K4M6X0T2Q8B7N5C1V9Z',
    rule: 'kpi-overdue',
    trigger: 'overdue',
    summary: 'Netflix Paid subscribers Q3 2026: actual still missing past its due date 2026-10-17 + 1d',
    changes: [{ field: 'actual', from: null, to: null }],
    current: { ...kpiRow, actual: null },
  },
  added: addedAlert,
};

/** An event whose API text tries to be markup. */
export const evilAlert: Alert = {
  ...crossesAlert,
  id: '01JD3Z9K4M6X0T2Q8B7N5C1VA0',
  summary: `${EVIL}: edge crossed`,
  current: {
    ...eventRow,
    name: `Fed ${EVIL}`,
    key_takeaway: `Take ${EVIL}`,
    executive_summary_richtext: `<p>ok <b>bold</b> ${EVIL} <a href="javascript:alert(1)">js</a> <iframe src="https://x"></iframe><style>p{}</style></p>`,
  },
};
