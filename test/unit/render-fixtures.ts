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
