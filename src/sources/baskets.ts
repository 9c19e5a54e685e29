// baskets: each basket that a rule names, backtested over its timeframe and validated against its
// threshold, the two merged into one snapshot. A basket's first snapshot is its baseline.
import type { Snapshot } from '../core/types.ts';
import type { Basket, Rule } from '../rules/index.ts';
import { groupRules, pollFeeds } from './feeds.ts';
import type { FetchContext, ResearchApi, SourcePage, SourcePages } from './types.ts';

export function fetchBaskets(ctx: FetchContext): SourcePages {
  if (ctx.rules.length === 0) return 'idle';
  const byBasket = groupRules(ctx.rules, (rule) => rule.basket ?? '');
  return pollFeeds(
    'baskets',
    [...byBasket].map(([name, rules]) => ({ rules, pages: () => basketPages(ctx, name, rules) })),
  );
}

async function* basketPages(ctx: FetchContext, name: string, rules: readonly Rule[]): AsyncGenerator<SourcePage> {
  const basket = rules[0]?.basketSpec;
  if (basket === undefined) return;
  const [backtest, validation] = await Promise.all([
    // Weighted by the stakes, as the basket is held.
    ctx.api.basketBacktest({
      market_tickers: basket.legs.map((leg) => leg.market_ticker),
      weights: basket.legs.map((leg) => leg.stake_usd),
      ...(basket.timeframe ? { timeframe: basket.timeframe } : {}),
    }),
    ctx.api.basketValidate({
      legs: basket.legs,
      ...(basket.bankroll_usd === undefined ? {} : { bankroll_usd: basket.bankroll_usd }),
      ...(basket.max_pairwise_correlation === undefined ? {} : { max_pairwise_correlation: basket.max_pairwise_correlation }),
    }),
  ]);
  yield { items: [{ key: name, data: basketSnapshot(name, basket, backtest, validation), baseline: true }], feed: { rules } };
}

type Backtest = Awaited<ReturnType<ResearchApi['basketBacktest']>>;
type Validation = Awaited<ReturnType<ResearchApi['basketValidate']>>;

/** One basket as the contract lists it: the backtest summary and the validation, its lists of clashes and duplicates counted. */
export function basketSnapshot(name: string, basket: Basket, backtest: Backtest, validation: Validation): Snapshot {
  return {
    basket: name,
    timeframe: backtest.timeframe ?? basket.timeframe ?? null,
    ...backtest.summary,
    total_stake_usd: validation.total_stake_usd,
    max_pairwise_correlation: validation.max_pairwise_correlation,
    max_leg_pct: validation.max_leg_pct,
    warnings: validation.warnings,
    calendar_clashes: validation.calendar_clashes.length,
    duplicate_underliers: validation.duplicate_underliers.length,
  };
}
