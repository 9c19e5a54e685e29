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
  source: string;
  /** When the source's first (baseline) poll completed; null until then. */
  baseline_at: string | null;
  /** events: the newest captured_at fully processed. */
  watermark: string | null;
  last_success_at: string | null;
  last_error_at: string | null;
  last_error: string | null;
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
}

/** The columns of a send's lifecycle, which deliveries and digest batches share (one claim/settle path). */
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
}
