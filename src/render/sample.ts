// A sample alert and digest that `validate` renders every template against, so a template that
// fails or runs too long is reported before any real alert meets it.
import { alertId } from '../core/alert-id.ts';
import type { Alert, Snapshot, SourceName } from '../core/types.ts';
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

/** A sample entity of each source: its key, a previous and a current snapshot (`render` without --entity). */
export function sampleSnapshots(source: SourceName): { key: string; previous: Snapshot; current: Snapshot } {
  switch (source) {
    case 'events':
      return { key: SAMPLE_EVENT.event_ticker, previous: { ...SAMPLE_EVENT, edge_pp: 8.1, abs_edge_pp: 8.1, model_probability: 58.1, confidence_score: 5 }, current: { ...SAMPLE_EVENT } };
    case 'kpis': {
      const row = {
        id: 'sample-kpi-event',
        company_name: 'Sample Co',
        company_ticker: 'SMPL',
        kpi_name: 'Paid subscribers',
        period_label: 'Q3 2026',
        status: 'settled',
        liquidity_tier: 'high',
        near_settled: true,
        market_implied: { value: 1_150_000, unit: 'subscribers', formatted: '1.15M' },
        octagon_estimate_value: { value: 1_180_000, unit: 'subscribers', formatted: '1.18M' },
        actual: { value: 1_200_000, unit: 'subscribers', formatted: '1.2M' },
      };
      return { key: row.id, previous: { ...row, status: 'active', near_settled: false, actual: null }, current: row };
    }
    case 'reports': {
      const row = { ...SAMPLE_EVENT, venue: 'venuea', title: 'Sample event', run_id: '00000000-0000-4000-8000-000000000001', trust_score: 52, trust_label: 'Caution' };
      return { key: `venuea/${SAMPLE_EVENT.event_ticker}`, previous: { ...row, trust_score: 71, trust_label: 'Good' }, current: row };
    }
    case 'runs': {
      const row = {
        run_id: '00000000-0000-4000-8000-000000000002',
        status: 'completed',
        venue: 'venuea',
        event_ticker: SAMPLE_EVENT.event_ticker,
        requested_url: SAMPLE_EVENT.event_url,
        requested_at: '2026-01-15T17:50:00Z',
        completed_at: '2026-01-15T18:00:00Z',
      };
      return { key: row.run_id, previous: { ...row, status: 'processing', completed_at: null }, current: row };
    }
    case 'markets': {
      const row = {
        market_ticker: 'KXSAMPLE-26JAN-T50',
        event_ticker: SAMPLE_EVENT.event_ticker,
        series_ticker: 'KXSAMPLE',
        title: 'Sample market',
        subtitle: 'Above 50',
        status: 'open',
        close_time: SAMPLE_EVENT.close_time,
        last_price: 0.62,
        yes_bid: 0.61,
        yes_ask: 0.63,
        no_bid: 0.37,
        no_ask: 0.39,
        volume: 120_000,
        volume_24h: 8_000,
        liquidity: 50_000,
        open_interest: 30_000,
        category: 'economics',
        event_name: SAMPLE_EVENT.name,
      };
      return { key: row.market_ticker, previous: { ...row, last_price: 0.5, volume_24h: 2_000 }, current: row };
    }
    case 'edge':
    case 'rankings': {
      const { event_ticker, name, series_category, model_probability, market_probability, edge_pp, confidence_score } = SAMPLE_EVENT;
      const row = { event_ticker, title: name, series_category, model_probability, market_probability, edge_pp, expected_return: 0.24, confidence_score, total_volume: 120_000, total_open_interest: 30_000 };
      if (source === 'rankings') return { key: event_ticker, previous: { ...row, edge_pp: 8.1, rank: 7 }, current: { ...row, rank: 2 } };
      const edgeRow = { ...row, input_ticker: event_ticker, market_ticker: null, status: 'open', captured_at: '2026-01-15T18:00:00Z' };
      return { key: event_ticker, previous: { ...edgeRow, edge_pp: 8.1 }, current: edgeRow };
    }
    case 'similar': {
      const row = { market_ticker: 'KXOTHER-26JAN-T50', event_ticker: 'KXOTHER-26JAN', title: 'A similar sample market', category: 'economics', distance: 0.12 };
      return { key: row.market_ticker, previous: { ...row, distance: 0.3 }, current: row };
    }
    case 'baskets': {
      const row = {
        basket: 'sample-basket',
        timeframe: '1d',
        total_return: 0.08,
        max_drawdown: -0.05,
        sharpe: 1.3,
        final_nav: 1.08,
        total_stake_usd: 1_000,
        max_pairwise_correlation: 0.42,
        max_leg_pct: 0.5,
        warnings: ['two legs close within 7 days'],
        calendar_clashes: 1,
        duplicate_underliers: 0,
      };
      return { key: row.basket, previous: { ...row, warnings: [] }, current: row };
    }
  }
}

/** The message `send-test` sends: marked as a test in its title and summary, with an id of its own each time. */
export function testAlert(channel: string, now: Date): Alert {
  const entity = 'EDGEWATCH-TEST';
  return {
    id: alertId(`send-test\u0000${channel}\u0000${now.toISOString()}`),
    rule: 'edgewatch-send-test',
    severity: 'info',
    source: 'events',
    entity,
    trigger: 'new',
    fired_at: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    summary: `[TEST] edgewatch send-test: channel ${channel} is set up; this is a test message, not an alert`,
    changes: [],
    current: { event_ticker: entity, name: '[TEST] edgewatch send-test' },
  };
}
