// Domain types shared by every layer. This module imports nothing.

/** The market-search sources (api/market-search-and-baskets.md): a rule's watchlist, query or basket says what to fetch. */
export const MARKET_SOURCES = ['edge', 'rankings', 'markets', 'similar', 'baskets'] as const;
export type MarketSourceName = (typeof MARKET_SOURCES)[number];

export const SOURCES = ['events', 'kpis', 'reports', 'runs', ...MARKET_SOURCES] as const;
export type SourceName = (typeof SOURCES)[number];

export function isMarketSource(source: SourceName): source is MarketSourceName {
  return (MARKET_SOURCES as readonly string[]).includes(source);
}

export const SEVERITIES = ['info', 'warning', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** One entity's state as seen in one poll: plain JSON, fields named as the API names them. */
export type Snapshot = Record<string, unknown>;

/** One entity as a source fetched it, keyed as its source keys entities. */
export interface SnapshotItem {
  key: string;
  data: Snapshot;
  /** This entity's first sighting is its baseline (reports: the first trust check). */
  baseline?: boolean;
}

/** A field whose value differs between two snapshots of one entity. */
export interface Change {
  field: string;
  from: unknown;
  to: unknown;
  /** `added` triggers: the elements the list gained. */
  added?: unknown[];
}

/** The trigger types an alert may name; rules/schema.ts has one trigger schema for each. */
export type TriggerType = 'crosses' | 'moves' | 'flips' | 'changes' | 'drops' | 'rises' | 'appears' | 'new' | 'overdue' | 'added';

/** A rule's memory for one entity: hysteresis and cooldown. */
export interface RuleState {
  armed: boolean;
  lastFiredAt: string | null;
}

export interface Alert {
  /** Stable idempotency key, the same on every channel and every retry. */
  id: string;
  rule: string;
  severity: Severity;
  source: SourceName;
  entity: string;
  trigger: TriggerType;
  fired_at: string;
  summary: string;
  changes: Change[];
  current: Snapshot;
  /** The agent's cited answer (`explain`); null when none, absent when not asked (yet). */
  explanation?: Explanation | null;
}

/** One numbered citation of an agent's answer: `[order]` in its text. */
export interface Citation {
  order: number;
  name: string;
  url: string;
}

/** A research agent's answer about an alert (`explain`), stored with the alert. */
export interface Explanation {
  agent: string;
  text: string;
  citations: Citation[];
}

/** Why an alert was inhibited: the rule's `unless` entry that held, and the snapshot it held on. */
export interface Inhibition {
  /** The entry's index in the rule's `unless` list. */
  entry: number;
  source: SourceName;
  entity: string;
}

/** A notice sent after an alert or about a source: its alert resolved, or a source's health changed. */
export type Notice =
  | { kind: 'resolved'; id: string; alert: Alert; resolved_at: string; summary: string; changes: Change[]; current: Snapshot }
  | { kind: 'health'; id: string; source: SourceName; status: 'degraded' | 'recovered'; error: string | null; at: string };

/** reports: what was learned of one event's report, kept to choose and address the next checks. */
export interface ReportCheck {
  eventTicker: string;
  /** From the event's detail; null while the detail answers 404 (a delisted event). */
  venue: string | null;
  eventKey: string | null;
  /** When the trust scorecard (or a detail that answered 404) was last checked; null: not yet. */
  checkedAt: string | null;
  /** Whether the last check found a scorecard; null before any. */
  found: boolean | null;
}

/** reports: an event whose report may be checked, with its latest snapshot and what its checks learned. */
export interface ReportCandidate {
  event: Snapshot;
  /** All but `eventTicker` null when the event was never checked. */
  check: ReportCheck;
}

/** What a source learned while fetching a page, stored in the same transaction as the page. */
export interface PageMemory {
  reportChecks?: ReportCheck[];
  /** runs: generation runs whose status changed. */
  runStatuses?: Array<{ runId: string; status: string }>;
  /** Market-search sources: the feeds whose poll this page completes (their next poll is no baseline). */
  polledFeeds?: string[];
}

/** What one send attempt came to; expected failures are values, not exceptions. */
export type DeliveryOutcome =
  /** `ref`: where the message is (Slack: its channel and ts), to update it or reply to it later. */
  | { ok: true; ref?: MessageRef }
  | { ok: false; retryable: boolean; error: string; retryAfterMs?: number };

/** Which alerts a silence mutes: globs (`*`: any run of characters) on the rule, entity and source. */
export interface SilenceMatchers {
  rule?: string;
  entity?: string;
  source?: string;
}

export interface Silence {
  id: string;
  matchers: SilenceMatchers;
  /** ISO times: active from starts_at (inclusive) until ends_at (exclusive). */
  starts_at: string;
  ends_at: string;
  comment: string | null;
  created_by: string;
}

/** A sent Slack message: what `chat.update` and a thread reply (`thread_ts`) need. */
export interface MessageRef {
  channel: string;
  ts: string;
}

/** A problem found in a rule file, positioned for `file:line:column: message`. */
export interface RuleProblem {
  file: string;
  line: number;
  column: number;
  message: string;
}
