// Table types, in one place: the repository functions of src/store query through them.
import type { Generated } from 'kysely';

export interface EntitiesTable {
  source: string;
  entity_key: string;
  /** Per-entity snapshot number: 1 for the first snapshot, +1 for every change. */
  seq: number;
  data: string;
  first_seen_at: string;
  updated_at: string;
}

/** Superseded snapshots: an entity's history before its latest (which is in `entities`). */
export interface SnapshotsTable {
  source: string;
  entity_key: string;
  seq: number;
  data: string;
  stored_at: string;
}

export interface SourceStateTable {
  /** A source, or a market-search feed (one query's entities, whose first poll is its baseline). */
  source: string;
  /** When the source's first (baseline) poll completed; null until then. */
  baseline_at: string | null;
  /** events: the newest captured_at fully processed. */
  watermark: string | null;
  last_success_at: string | null;
  last_error_at: string | null;
  last_error: string | null;
  /** Failed polls in a row since the last good one. */
  failures: number;
  /** `degraded` while a health notice says so; null otherwise. */
  health: string | null;
}

export interface RuleStateTable {
  rule: string;
  source: string;
  entity_key: string;
  armed: number;
  last_fired_at: string | null;
}

export interface AlertsTable {
  id: string;
  rule: string;
  severity: string;
  source: string;
  entity: string;
  trigger: string;
  fired_at: string;
  summary: string;
  changes: string;
  /** The snapshot of `entity` that fired it: `current` is that snapshot (see alertsWithCurrent in outbox.ts). */
  seq: number;
  /** When its condition cleared (rules with `resolve`); null while open and for rules that do not resolve. */
  resolved_at: string | null;
  /** JSON of the `unless` entry that inhibited it (Inhibition); null when it was not. */
  inhibited_by: string | null;
  /** JSON of the agent's answer (Explanation); null when none. */
  explanation: string | null;
  /** When the agent was asked (or the question was given up); null: not yet. */
  explained_at: string | null;
  /** The feed the snapshot is stored under (a market-search query's); null: the alert's source. */
  feed: string | null;
}

/** A rule waiting, for one entity, for a dwell to complete or a due date to pass. */
export interface TimersTable {
  rule: string;
  source: string;
  entity_key: string;
  /** dwell | overdue */
  kind: string;
  due_at: string;
  cause: string;
  /** dwell: JSON of the trigger field's value before the crossing. */
  from_value: string | null;
}

/** An open alert's condition cleared: its own id, the snapshot that cleared it. */
export interface ResolutionsTable {
  id: string;
  alert_id: string;
  resolved_at: string;
  summary: string;
  changes: string;
  seq: number;
}

/** Notices (an alert resolved, a source's health changed) to one channel each, with the outbox's lifecycle. */
export interface NoticesTable extends SendColumns {
  /** `<notice_id>/<channel>` */
  id: string;
  /** The body's id, the same on every channel and retry. */
  notice_id: string;
  /** resolved | health */
  kind: string;
  /** resolved: the alert it resolves. */
  alert_id: string | null;
  channel: string;
  /** resolved: the resolution's id; health: JSON of the notice. */
  body: string;
  /** pending | delivered | dead */
  status: string;
  created_at: string;
}

export interface SilencesTable {
  id: string;
  /** JSON: {rule?, entity?, source?} globs. */
  matchers: string;
  starts_at: string;
  ends_at: string;
  comment: string | null;
  created_by: string;
  created_at: string;
}

/** The columns of a send's lifecycle, which deliveries, digest batches and notices share (one claim/settle path). */
interface SendColumns {
  attempts: Generated<number>;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_error: string | null;
  delivered_at: string | null;
  duration_ms: number | null;
  /** The pid of the process sending it now; null when no send is in flight. */
  claimed_by: number | null;
  /** Until when that process holds it: then, should it not have settled it, it is due again. */
  claimed_until: string | null;
}

export interface DeliveriesTable extends SendColumns {
  id: Generated<number>;
  alert_id: string;
  channel: string;
  status: string;
  digest_id: string | null;
  created_at: string;
  /** Slack: JSON {channel, ts} of the posted message, to update it and reply in its thread. */
  message_ref: string | null;
}

export interface RunsTable {
  run_id: string;
  venue: string;
  event_key: string;
  status: string;
  created_at: string;
  updated_at: string;
}

export interface ReportChecksTable {
  event_ticker: string;
  /** From the event's detail; null while the detail answers 404 (a delisted event). */
  venue: string | null;
  event_key: string | null;
  /** Last check, of the trust scorecard or of an event detail that answered 404. */
  last_checked_at: string | null;
  /** 1 when the trust endpoint answered with a scorecard at the last check, 0 on 404, null before any. */
  found: number | null;
}

export interface DigestsTable extends SendColumns {
  id: string;
  rule: string;
  channel: string;
  /** pending | delivered | dead */
  status: string;
  /** When the batch's first alert came. */
  opened_at: string;
  /** When the batch was closed for sending. */
  created_at: string;
}

export interface MetaTable {
  key: string;
  value: string;
}

export interface Database {
  meta: MetaTable;
  digests: DigestsTable;
  entities: EntitiesTable;
  snapshots: SnapshotsTable;
  source_state: SourceStateTable;
  rule_state: RuleStateTable;
  alerts: AlertsTable;
  deliveries: DeliveriesTable;
  runs: RunsTable;
  report_checks: ReportChecksTable;
  timers: TimersTable;
  resolutions: ResolutionsTable;
  notices: NoticesTable;
  silences: SilencesTable;
}
