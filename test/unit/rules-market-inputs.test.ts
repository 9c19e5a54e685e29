// Rule files for the market-search sources: watchlists, baskets and each source's query, checked
// against the endpoints' own parameters and ranges, each problem at its file:line:column.
import { describe, expect, it } from 'vitest';
import { CREDENTIAL_VARIABLES } from '../../src/config.ts';
import { combineRuleFiles, formatProblem, formatWarning, parseRuleFile, type RuleContext } from '../../src/rules/index.ts';

const CTX: RuleContext = { env: {}, credentials: CREDENTIAL_VARIABLES, templates: new Set(), transports: { slack: false, email: false } };

/**
 * A file with the console channel (lines 1-2), the `fed` watchlist (3-4), the `rates-hedge` basket
 * (5-9), then the rule lines given: the first is line 11.
 */
function file(...ruleLines: string[]): string {
  return [
    'channels: { me: { type: console } }',
    'watchlists:',
    '  fed: [KXFED-25DEC, KXFEDDECISION-26JAN]',
    '  other: [KXCPI-25NOV]',
    'baskets:',
    '  rates-hedge:',
    '    legs: [{ market_ticker: KXFED-25DEC-O1, side: yes, stake_usd: 200 }]',
    '    timeframe: 3m',
    '    max_pairwise_correlation: 0.6',
    'rules:',
    ...ruleLines,
    '',
  ].join('\n');
}

/** One rule on one line (line 11): `name` and `notify` filled in. */
function rule(body: string): string {
  return file(`  - { name: r, ${body}, notify: [me] }`);
}

function problems(text: string): string[] {
  return parseRuleFile(text, 'm.yaml', CTX).problems.map(formatProblem);
}

describe('market-search rules: valid files', () => {
  it("resolves each rule's watchlist and basket, keeps its query as written, and warns of nothing", () => {
    const parsed = parseRuleFile(
      file(
        '  - { name: fed-edge, source: edge, watchlist: fed, trigger: { type: crosses, field: edge_pp, above: 5, abs: true }, notify: [me] }',
        '  - { name: top10, source: rankings, query: { category: politics, sort_by: edge_pp, limit: 50 }, trigger: { type: crosses, field: rank, below: 11 }, notify: [me] }',
        '  - { name: fed-themes, source: similar, query: { anchor_ticker: KXFED-25DEC-O1, top_k: 25 }, trigger: { type: new }, notify: [me] }',
        '  - { name: fed-peers, source: similar, query: { cluster_of: KXFED-25DEC-O1, kind: behavioral }, trigger: { type: new }, notify: [me] }',
        '  - { name: fed-prices, source: markets, query: { series_ticker: KXFED }, trigger: { type: moves, field: last_price, by: 0.05 }, notify: [me] }',
        '  - { name: hedge-warnings, source: baskets, basket: rates-hedge, trigger: { type: added, field: warnings }, notify: [me] }',
      ),
      'm.yaml',
      CTX,
    );
    expect(parsed.problems).toEqual([]);
    expect(parsed.warnings).toEqual([]);
    const byName = new Map(parsed.rules.map((r) => [r.name, r]));
    expect(byName.get('fed-edge')?.watchlistTickers).toEqual(['KXFED-25DEC', 'KXFEDDECISION-26JAN']);
    expect(byName.get('top10')?.query).toEqual({ category: 'politics', sort_by: 'edge_pp', limit: 50 });
    expect(byName.get('hedge-warnings')?.basketSpec).toEqual({
      legs: [{ market_ticker: 'KXFED-25DEC-O1', side: 'yes', stake_usd: 200 }],
      timeframe: '3m',
      max_pairwise_correlation: 0.6,
    });
  });

  it('finds a watchlist or basket defined in another file', () => {
    const set = combineRuleFiles(
      [
        { file: 'a.yaml', text: 'watchlists: { fed: [KXFED-25DEC] }\nbaskets: { b: { legs: [{ market_ticker: KXFED-25DEC-O1, stake_usd: 1 }] } }\n' },
        {
          file: 'b.yaml',
          text: [
            'channels: { me: { type: console } }',
            'rules:',
            '  - { name: e, source: edge, watchlist: fed, trigger: { type: new }, notify: [me] }',
            '  - { name: k, source: baskets, basket: b, trigger: { type: added, field: warnings }, notify: [me] }',
            '',
          ].join('\n'),
        },
      ],
      CTX,
    );
    expect(set.problems).toEqual([]);
    expect(set.rules.map((r) => [r.name, r.watchlistTickers ?? r.basketSpec?.legs.length])).toEqual([
      ['e', ['KXFED-25DEC']],
      ['k', 1],
    ]);
  });

  it('warns, without failing, of a markets query that matches every market', () => {
    const parsed = parseRuleFile(rule('source: markets, query: { sort_by: volume_24h }, trigger: { type: new }'), 'm.yaml', CTX);
    expect(parsed.problems).toEqual([]);
    expect(parsed.rules.map((r) => r.name)).toEqual(['r']);
    expect(parsed.warnings.map(formatWarning)).toEqual([
      'm.yaml:11:40: warning: rule "r": query: it matches every market (thousands): only the first 5 pages are watched each poll; narrow it with q, category, series_ticker, series_prefix, event_ticker, close_before or min_volume_24h',
    ]);
  });
});

describe('market-search rules: each problem at its place', () => {
  it.each([
    {
      name: 'a query parameter the endpoint does not take',
      text: rule('source: rankings, query: { category: politics, sortby: edge_pp }, trigger: { type: new }'),
      problem: 'm.yaml:11:63: rule "r": query: unknown parameter "sortby" (did you mean sort_by?) for source rankings (it takes run_id, category, edge_pp_min, edge_pp_max, expected_return_min, total_volume_min, model_probability_min, sort_by, limit)',
    },
    {
      name: 'a cluster parameter on a similarity search',
      text: rule('source: similar, query: { q: fed rates, kind: thematic }, trigger: { type: new }'),
      problem: 'm.yaml:11:56: rule "r": query: unknown parameter "kind" for source similar (it takes anchor_ticker, q, top_k, category, min_volume_24h, close_before)',
    },
    { name: 'limit above 200', text: rule('source: rankings, query: { limit: 201 }, trigger: { type: new }'), problem: 'm.yaml:11:50: rule "r": query.limit: must be at most 200' },
    { name: 'limit below 1', text: rule('source: markets, query: { q: fed rates, limit: 0 }, trigger: { type: new }'), problem: 'm.yaml:11:63: rule "r": query.limit: must be at least 1' },
    { name: 'top_k above 100', text: rule('source: similar, query: { anchor_ticker: KXFED-25DEC-O1, top_k: 101 }, trigger: { type: new }'), problem: 'm.yaml:11:80: rule "r": query.top_k: must be at most 100' },
    { name: 'a cluster kind the endpoint does not know', text: rule('source: similar, query: { cluster_of: KXFED-25DEC-O1, kind: social }, trigger: { type: new }'), problem: 'm.yaml:11:76: rule "r": query.kind: must be one of thematic, behavioral, not string "social"' },
    { name: 'a search text under 3 characters', text: rule('source: similar, query: { q: fe }, trigger: { type: new }'), problem: 'm.yaml:11:45: rule "r": query.q: must be at least 3 characters' },
    {
      name: 'anchor_ticker with q',
      text: rule('source: similar, query: { anchor_ticker: KXFED-25DEC-O1, q: fed rates }, trigger: { type: new }'),
      problem: 'm.yaml:11:40: rule "r": query: anchor_ticker and q cannot be used together: similar takes one of anchor_ticker, q and cluster_of',
    },
    { name: 'similar with nothing to be like', text: rule('source: similar, query: { top_k: 5 }, trigger: { type: new }'), problem: 'm.yaml:11:40: rule "r": query: similar needs anchor_ticker or q (with top_k), or cluster_of (with kind)' },
    { name: 'similar without a query', text: rule('source: similar, trigger: { type: new }'), problem: 'm.yaml:11:5: rule "r": source similar needs a query (the endpoint\'s parameters)' },
    { name: 'an undefined watchlist', text: rule('source: edge, watchlist: feds, trigger: { type: new }'), problem: 'm.yaml:11:41: rule "r": unknown watchlist "feds" (did you mean fed?) (watchlists: fed, other)' },
    { name: 'an edge rule without a watchlist', text: rule('source: edge, trigger: { type: new }'), problem: 'm.yaml:11:5: rule "r": source edge needs a watchlist (the name of one under watchlists)' },
    { name: 'an undefined basket', text: rule('source: baskets, basket: rate-hedge, trigger: { type: new }'), problem: 'm.yaml:11:41: rule "r": unknown basket "rate-hedge" (did you mean rates-hedge?) (baskets: rates-hedge)' },
    { name: 'a query on a source that takes a watchlist', text: rule('source: edge, watchlist: fed, query: { limit: 5 }, trigger: { type: new }'), problem: 'm.yaml:11:46: rule "r": query is for sources rankings, markets and similar, not edge' },
    { name: 'a watchlist on events', text: rule('source: events, watchlist: fed, trigger: { type: new }'), problem: 'm.yaml:11:32: rule "r": watchlist is for source edge, not events' },
    { name: 'added on a field that is not a list', text: rule('source: baskets, basket: rates-hedge, trigger: { type: added, field: max_drawdown }'), problem: 'm.yaml:11:85: rule "r": trigger: added needs a list field (e.g. warnings); max_drawdown is a number' },
    { name: 'a field the ranking does not have', text: rule('source: rankings, trigger: { type: crosses, field: rnk, below: 11 }'), problem: 'm.yaml:11:67: rule "r": trigger: unknown field "rnk" for source rankings (did you mean rank?)' },
  ])('$name', ({ text, problem }) => {
    expect(problems(text)).toEqual([problem]);
  });

  it.each([
    { name: 'a watchlist of no tickers', lines: ['watchlists:', '  fed: []'], problem: 'm.yaml:2:8: watchlist "fed": needs at least one ticker' },
    {
      name: 'a watchlist of more than 100 tickers',
      lines: ['watchlists:', `  fed: [${Array.from({ length: 101 }, (_, i) => `T${i}`).join(', ')}]`],
      problem: 'm.yaml:2:8: watchlist "fed": at most 100 tickers (the edge endpoint\'s limit), got 101',
    },
    { name: 'a basket with no legs', lines: ['baskets:', '  b: { legs: [] }'], problem: 'm.yaml:2:14: basket "b": legs: must not be empty' },
    { name: 'a basket without legs', lines: ['baskets:', '  b: { timeframe: 1m }'], problem: 'm.yaml:2:6: basket "b": missing legs' },
    { name: 'a leg without market_ticker', lines: ['baskets:', '  b:', '    legs:', '      - { side: no, stake_usd: 100 }'], problem: 'm.yaml:4:9: basket "b": missing legs[0].market_ticker' },
    { name: 'a timeframe the backtest does not take', lines: ['baskets:', '  b: { legs: [{ market_ticker: X-O1, stake_usd: 1 }], timeframe: 2w }'], problem: 'm.yaml:2:66: basket "b": timeframe: must be one of 1w, 1m, 3m, 6m, 1y, not string "2w"' },
    { name: 'a threshold beyond 1', lines: ['baskets:', '  b: { legs: [{ market_ticker: X-O1, stake_usd: 1 }], max_pairwise_correlation: 1.5 }'], problem: 'm.yaml:2:81: basket "b": max_pairwise_correlation: must be at most 1' },
    { name: 'an unknown key in a basket', lines: ['baskets:', '  b: { legs: [{ market_ticker: X-O1, stake_usd: 1 }], timefram: 1m }'], problem: 'm.yaml:2:55: basket "b": unknown key "timefram" (did you mean timeframe?) in a basket (its keys: legs, bankroll_usd, timeframe, max_pairwise_correlation)' },
    { name: 'a watchlist defined twice', lines: ['watchlists: { a: [X] }', 'baskets: {}'], extraFile: 'watchlists: { a: [Y] }\n', problem: 'n.yaml:1:15: watchlist "a" is already defined at m.yaml:1:15' },
  ])('$name', ({ lines, problem, extraFile }) => {
    const files = [{ file: 'm.yaml', text: `${lines.join('\n')}\n` }, ...(extraFile ? [{ file: 'n.yaml', text: extraFile }] : [])];
    expect(combineRuleFiles(files, CTX).problems.map(formatProblem)).toEqual([problem]);
  });

  it('drops a rule whose basket is invalid, and reports the basket', () => {
    const text = ['channels: { me: { type: console } }', 'baskets: { b: { legs: [] } }', 'rules:', '  - { name: r, source: baskets, basket: b, trigger: { type: new }, notify: [me] }', ''].join('\n');
    const set = combineRuleFiles([{ file: 'm.yaml', text }], CTX);
    expect(set.problems.map(formatProblem)).toEqual(['m.yaml:2:23: basket "b": legs: must not be empty']);
    expect(set.rules).toEqual([]);
  });
});
