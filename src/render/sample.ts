// A sample alert and digest that `validate` renders every template against, so a template that
// fails or runs too long is reported before any real alert meets it.
import type { Alert } from '../core/types.ts';
import type { DigestMessage } from './types.ts';

const SAMPLE_EVENT = {
  event_ticker: 'KXSAMPLE-26JAN',
  name: 'Sample event',
  series_category: 'economics',
  confidence_score: 7,
  model_probability: 62.3,
  market_probability: 50,
  edge_pp: 12.3,
  abs_edge_pp: 12.3,
  close_time: '2026-01-31T19:00:00Z',
  key_takeaway: 'A sample takeaway.',
  executive_summary_richtext: '<p>A <strong>sample</strong> summary.</p>',
  event_url: 'https://example.com/events/KXSAMPLE-26JAN',
};

/** An `events` alert with every field the default templates show. */
export function sampleAlert(): Alert {
  return {
    id: '01SAMPLE0000000000000000AA',
    rule: 'sample-rule',
    severity: 'warning',
    source: 'events',
    entity: SAMPLE_EVENT.event_ticker,
    trigger: 'crosses',
    fired_at: '2026-01-15T18:00:00Z',
    summary: 'Sample event: edge +12.3 pp crossed above 10 pp',
    changes: [{ field: 'edge_pp', from: 8.1, to: 12.3 }],
    current: { ...SAMPLE_EVENT },
  };
}

export function sampleDigest(): DigestMessage {
  const first = sampleAlert();
  const second: Alert = { ...first, trigger: 'moves', id: '01SAMPLE0000000000000000AB', summary: 'Sample event: model probability up 7.3 pp' };
  return { id: '01SAMPLE0000000000000000DG', rule: 'sample-rule', alerts: [first, second], created_at: '2026-01-15T18:00:00Z' };
}
