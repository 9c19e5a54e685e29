// How people name an entity: the one title that summaries (rules) and messages (render) use.
// Pure.
import { oneLine } from './format.ts';
import type { Snapshot, SourceName } from './types.ts';

/**
 * `Fed decision December`; `Netflix (NFLX) — Paid subscribers, Q3 2026`; a report's title;
 * `run <id> for KXFED-25DEC`; a market's title; a basket's name. When the snapshot names nothing: `key` (the entity key), else the
 * key as the snapshot holds it.
 */
export function entityTitle(source: SourceName, snapshot: Snapshot, key?: string): string {
  const text = (field: string): string | undefined => {
    const value = snapshot[field];
    return typeof value === 'string' && value.trim() !== '' ? oneLine(value) : undefined;
  };
  switch (source) {
    case 'events':
      return text('name') ?? text('title') ?? key ?? text('event_ticker') ?? 'event';
    case 'kpis': {
      const company = text('company_name');
      const ticker = text('company_ticker');
      const who = company !== undefined && ticker !== undefined ? `${company} (${ticker})` : (company ?? ticker);
      const what = [text('kpi_name'), text('period_label') ?? text('period')].filter((part) => part !== undefined).join(', ');
      return [who, what].filter((part) => part !== undefined && part !== '').join(' — ') || (key ?? text('id') ?? 'KPI event');
    }
    case 'reports': {
      const venue = text('venue');
      const ticker = text('event_ticker');
      return text('title') ?? text('name') ?? key ?? (venue !== undefined && ticker !== undefined ? `${venue}/${ticker}` : 'report');
    }
    case 'runs': {
      const run = `run ${text('run_id') ?? key ?? '?'}`;
      const ticker = text('event_ticker');
      return ticker !== undefined ? `${run} for ${ticker}` : run;
    }
    case 'edge':
      return text('title') ?? key ?? text('input_ticker') ?? 'model edge';
    case 'rankings':
      return text('title') ?? key ?? text('event_ticker') ?? 'ranked event';
    case 'markets':
    case 'similar':
      return text('title') ?? key ?? text('market_ticker') ?? 'market';
    case 'baskets':
      return key ?? text('basket') ?? 'basket';
  }
}
