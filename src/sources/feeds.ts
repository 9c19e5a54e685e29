// What the market-search sources share: a feed per distinct query (rules with the same query are
// fetched once per poll and store their entities together, apart from other queries), and one
// way to run the feeds of a poll, so that one failing query neither hides nor stops the others.
import type { Rule } from '../rules/index.ts';
import { errorCode, errorStatus, type FetchContext, type SourcePage, type SourcePages } from './types.ts';

/**
 * A query's feed key, the same for the same parameters in any order:
 * `rankings?category=politics&limit=50&sort_by=edge_pp`. Never the bare source name, which is
 * the source's own state.
 */
export function feedKey(source: string, query: Readonly<Record<string, unknown>>): string {
  const params = Object.keys(query)
    .sort()
    .map((name) => `${encodeURIComponent(name)}=${encodeURIComponent(String(query[name]))}`);
  return `${source}?${params.join('&')}`;
}

/** Rules grouped by what they fetch, in the order of their first rule. */
export function groupRules<K>(rules: readonly Rule[], keyOf: (rule: Rule) => K): Map<K, Rule[]> {
  const groups = new Map<K, Rule[]>();
  for (const rule of rules) {
    const key = keyOf(rule);
    const group = groups.get(key);
    if (group) group.push(rule);
    else groups.set(key, [rule]);
  }
  return groups;
}

/** `rule "a"`, `rules "a", "b"` */
export function ruleNames(rules: readonly Rule[]): string {
  return `${rules.length === 1 ? 'rule' : 'rules'} ${rules.map((rule) => `"${rule.name}"`).join(', ')}`;
}

/** The API answers 503 until its nightly sync completes: not a failure, the next poll tries again. */
const NOT_SYNCED = 503;

/**
 * A market-search poll's failures, each led by the rules whose query caused it (a 422 names the
 * rule). `status` and `code` are the first failure's, so that a refused key (401) reads as one.
 */
export class FeedsFailed extends Error {
  readonly status: number | undefined;
  readonly code: string | undefined;

  constructor(failures: ReadonlyArray<{ rules: readonly Rule[]; error: unknown }>) {
    const first = failures[0]?.error;
    super(failures.map(({ rules, error }) => `${ruleNames(rules)}: ${error instanceof Error ? error.message : String(error)}`).join('; '), { cause: first });
    this.name = 'FeedsFailed';
    this.status = errorStatus(first);
    this.code = errorCode(first);
  }
}

/** One unit of a poll: the rules it serves and the pages it yields. */
export interface FeedFetch {
  rules: readonly Rule[];
  pages(): AsyncIterable<SourcePage>;
}

/**
 * The pages of every fetch, one after the other. A fetch whose data is not synced yet (503) ends
 * with a notice and is tried again at the next poll; another failure ends that fetch only, and
 * once every fetch has run the poll fails with all of them.
 */
export async function* pollFeeds(source: string, fetches: Iterable<FeedFetch>): AsyncGenerator<SourcePage> {
  const failures: Array<{ rules: readonly Rule[]; error: unknown }> = [];
  for (const fetch of fetches) {
    try {
      yield* fetch.pages();
    } catch (error) {
      if (errorStatus(error) !== NOT_SYNCED) {
        failures.push({ rules: fetch.rules, error });
        continue;
      }
      yield { items: [], notices: [`${source}: ${ruleNames(fetch.rules)}: the API's data is not synced yet (HTTP 503): tried again at the next poll`] };
    }
  }
  if (failures.length > 0) throw new FeedsFailed(failures);
}

/** One distinct query of a source's rules (rankings, markets, similar). */
export interface QueryFeed {
  key: string;
  /** The endpoint's parameters, as the rules write them. */
  query: Readonly<Record<string, unknown>>;
  rules: readonly Rule[];
  /** The feed's first poll: a baseline, which it records with its last page (`polledFeeds`). */
  first: boolean;
}

/** The pages of every distinct query of the source's rules, one fetch each, through pollFeeds. */
export function pollQueries(ctx: FetchContext, source: string, pages: (feed: QueryFeed) => AsyncIterable<SourcePage>): SourcePages {
  if (ctx.rules.length === 0) return 'idle';
  const feeds = groupRules(ctx.rules, (rule) => feedKey(source, rule.query ?? {}));
  return pollFeeds(
    source,
    [...feeds].map(([key, rules]) => ({
      rules,
      async *pages() {
        const first = !(await ctx.stored.polledFeeds([key])).has(key);
        yield* pages({ key, query: rules[0]?.query ?? {}, rules, first });
      },
    })),
  );
}
