// The bench's rule set: 100 rules mixing every trigger type over every source, all notifying one
// webhook channel aimed at the bench's local receiver.

type Trigger = Record<string, unknown>;
interface RuleSpec {
  trigger: Trigger;
  filter?: Record<string, unknown>;
}

const EVENT_RULES = (i: number): RuleSpec[] => [
  { trigger: { type: 'crosses', field: 'edge_pp', above: 6 + (i % 10), abs: true, rearm: 2 } },
  { trigger: { type: 'crosses', field: 'market_probability', below: 5 + (i % 20) } },
  { trigger: { type: 'moves', field: 'edge_pp', by: 3 + (i % 6), direction: ['any', 'up', 'down'][i % 3] } },
  { trigger: { type: 'moves', field: 'market_probability', by: 2 + (i % 5) }, filter: { series_category: 'politics' } },
  { trigger: { type: 'flips', field: 'eligible' } },
  { trigger: { type: 'changes', field: 'eligibility_status' } },
  { trigger: { type: 'drops', field: 'confidence_score', by: 1 + (i % 3) } },
  { trigger: { type: 'rises', field: 'confidence_score', by: 1 + (i % 3), to_at_least: 5 }, filter: { confidence_score: { gte: 3 } } },
  { trigger: { type: 'appears', field: 'eligibility_reason' } },
  { trigger: { type: 'new' } },
  { trigger: { type: 'crosses', field: 'abs_edge_pp', above: 12 + (i % 8), rearm: 1 }, filter: { confidence_score: { gte: 5 } } },
];

const KPI_RULES = (i: number): RuleSpec[] => [
  { trigger: { type: 'crosses', field: 'edge_pp', above: 5 + (i % 10), abs: true, rearm: 1 } },
  { trigger: { type: 'crosses', field: 'market_probability', above: 80 + (i % 15) } },
  { trigger: { type: 'moves', field: 'market_probability', by: 2 + (i % 6), direction: ['any', 'up', 'down'][i % 3] } },
  { trigger: { type: 'moves', field: 'model_probability', by: 3 + (i % 4) }, filter: { liquidity_tier: ['high', 'medium'] } },
  { trigger: { type: 'flips', field: 'near_settled', to: true } },
  { trigger: { type: 'changes', field: 'signal' } },
  { trigger: { type: 'drops', field: 'liquidity_tier' } },
  { trigger: { type: 'rises', field: 'liquidity_tier' } },
  { trigger: { type: 'appears', field: 'actual' } },
  { trigger: { type: 'new' } },
  { trigger: { type: 'changes', field: 'status', to: ['settled'] } },
];

const REPORT_RULES: RuleSpec[] = [
  { trigger: { type: 'drops', field: 'trust_label', to_at_most: 'Caution' } },
  { trigger: { type: 'rises', field: 'trust_label' }, filter: { series_category: 'politics' } },
  { trigger: { type: 'moves', field: 'trust_score', by: 5 } },
  { trigger: { type: 'crosses', field: 'trust_score', below: 50 } },
  { trigger: { type: 'changes', field: 'run_id' } },
  { trigger: { type: 'new' } },
  { trigger: { type: 'appears', field: 'title' } },
  { trigger: { type: 'flips', field: 'eligible' } },
];

const RUN_RULES: RuleSpec[] = [
  { trigger: { type: 'changes', field: 'status', to: ['completed', 'failed'] } },
  { trigger: { type: 'changes', field: 'status' } },
  { trigger: { type: 'appears', field: 'title' } },
  { trigger: { type: 'new' } },
];

function yamlValue(value: unknown): string {
  return JSON.stringify(value); // JSON is YAML (flow style)
}

/** 44 events, 44 kpis, 8 reports and 4 runs rules; every trigger type appears on events and kpis. */
export function benchRulesYaml(webhookUrl: string): { yaml: string; count: number } {
  const specs: Array<{ name: string; source: string } & RuleSpec> = [];
  for (let round = 0; specs.filter((s) => s.source === 'events').length < 44; round++) {
    for (const spec of EVENT_RULES(round)) if (specs.filter((s) => s.source === 'events').length < 44) specs.push({ name: '', source: 'events', ...spec });
  }
  for (let round = 0; specs.filter((s) => s.source === 'kpis').length < 44; round++) {
    for (const spec of KPI_RULES(round)) if (specs.filter((s) => s.source === 'kpis').length < 44) specs.push({ name: '', source: 'kpis', ...spec });
  }
  for (const spec of REPORT_RULES) specs.push({ name: '', source: 'reports', ...spec });
  for (const spec of RUN_RULES) specs.push({ name: '', source: 'runs', ...spec });

  const lines = ['channels:', '  hook:', '    type: webhook', `    url: ${yamlValue(webhookUrl)}`, '', 'rules:'];
  specs.forEach((spec, i) => {
    lines.push(`  - name: bench-${spec.source}-${String(spec.trigger.type)}-${i}`);
    lines.push(`    source: ${spec.source}`);
    lines.push(`    trigger: ${yamlValue(spec.trigger)}`);
    if (spec.filter) lines.push(`    filter: ${yamlValue(spec.filter)}`);
    lines.push('    notify: [hook]');
  });
  return { yaml: `${lines.join('\n')}\n`, count: specs.length };
}

/**
 * The market-search bench: 20 rules over the five market-search sources, some sharing a query
 * (fetched once), on two watchlists (125 distinct tickers: two edge requests) and two baskets.
 * `events` and `markets` are tickers the sandbox knows.
 */
export function benchMarketRulesYaml(webhookUrl: string, tickers: { events: string[]; markets: string[] }): { yaml: string; count: number } {
  const { events, markets } = tickers;
  const list = (items: string[]) => `[${items.join(', ')}]`;
  const legs = (items: string[]) => `[${items.map((m, i) => `{ market_ticker: ${m}, side: ${i % 2 ? 'no' : 'yes'}, stake_usd: ${100 + i * 50} }`).join(', ')}]`;
  const rules: Array<[string, string, string]> = [
    ['edge', 'watchlist: wide', '{ type: crosses, field: edge_pp, above: 10, abs: true, rearm: 2 }'],
    ['edge', 'watchlist: wide', '{ type: moves, field: edge_pp, by: 5 }'],
    ['edge', 'watchlist: narrow', '{ type: crosses, field: edge_pp, above: 15, abs: true }'],
    ['edge', 'watchlist: narrow', '{ type: rises, field: confidence_score, by: 2 }'],
    ['rankings', 'query: { sort_by: edge_pp, limit: 50 }', '{ type: crosses, field: rank, below: 11 }'],
    ['rankings', 'query: { limit: 50, sort_by: edge_pp }', '{ type: appears, field: rank }'],
    ['rankings', 'query: { category: politics, limit: 20 }', '{ type: crosses, field: rank, below: 4 }'],
    ['rankings', 'query: { category: politics, limit: 20 }', '{ type: moves, field: edge_pp, by: 5 }'],
    ['rankings', 'query: { sort_by: expected_return, limit: 100 }', '{ type: new }'],
    ['markets', 'query: { category: politics, limit: 200 }', '{ type: new }'],
    ['markets', 'query: { category: politics, limit: 200 }', '{ type: moves, field: last_price, by: 0.1 }'],
    ['markets', 'query: { series_ticker: KXFED }', '{ type: crosses, field: last_price, above: 0.9 }'],
    ['markets', "query: { q: 'bitcoin price', limit: 50 }", '{ type: moves, field: volume_24h, by: 1000 }'],
    ['similar', `query: { anchor_ticker: ${markets[0]}, top_k: 25 }`, '{ type: new }'],
    ['similar', `query: { top_k: 25, anchor_ticker: ${markets[0]} }`, '{ type: crosses, field: distance, below: 0.2 }'],
    ['similar', "query: { q: 'fed rate decision', top_k: 50 }", '{ type: new }'],
    ['similar', `query: { cluster_of: ${markets[1]}, kind: thematic, limit: 50 }`, '{ type: new }'],
    ['baskets', 'basket: small', '{ type: added, field: warnings }'],
    ['baskets', 'basket: small', '{ type: crosses, field: max_drawdown, below: -0.2 }'],
    ['baskets', 'basket: large', '{ type: added, field: warnings }'],
  ];
  const lines = [
    'channels:',
    '  hook:',
    '    type: webhook',
    `    url: ${yamlValue(webhookUrl)}`,
    'watchlists:',
    `  wide: ${list(events.slice(0, 100))}`,
    `  narrow: ${list([...events.slice(75, 100), ...markets.slice(0, 25)])}`,
    'baskets:',
    `  small: { legs: ${legs(markets.slice(0, 3))}, timeframe: 3m, max_pairwise_correlation: 0.6 }`,
    `  large: { legs: ${legs(markets.slice(3, 8))}, bankroll_usd: 5000, timeframe: 1y }`,
    'rules:',
    ...rules.map(([source, input, trigger], i) => `  - { name: bench-${source}-${i}, source: ${source}, ${input}, trigger: ${trigger}, notify: [hook] }`),
  ];
  return { yaml: `${lines.join('\n')}\n`, count: rules.length };
}

/** The market-search source a recorded request served, by its endpoint. */
export function marketSourceOf(requestPath: string): string {
  const endpoint = requestPath.split('?')[0]!.replace(/^\/predictions\/venuea\//, '');
  if (endpoint === 'markets/edge') return 'edge';
  if (endpoint === 'markets-with-edge') return 'rankings';
  if (endpoint === 'markets/similar' || endpoint.endsWith('/cluster-peers')) return 'similar';
  if (endpoint.startsWith('baskets/')) return 'baskets';
  return 'markets';
}
