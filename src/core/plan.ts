// The planner's output (rules/plan.ts), which the store applies, and the stored state it reads. Maps are
// keyed by entity key and hold the page's entities only; outputs are plain lists of records, so
// that new kinds of input or write can be added beside these.
import type { Alert, Change, Inhibition, RuleState, Snapshot, SourceName } from './types.ts';

/** An entity's latest stored snapshot. */
export interface StoredSnapshot {
  seq: number;
  /** As stored (JSON text): an item that serializes to the same text did not change. */
  text: string;
}

/** A rule's memory of one entity, by rule name. */
export type EntityMemory = ReadonlyMap<string, RuleState>;

/** A new snapshot of an entity; several of one entity in a page come in `seq` order. */
export interface SnapshotWrite {
  key: string;
  seq: number;
  text: string;
}

export interface MemoryWrite {
  rule: string;
  key: string;
  state: RuleState;
}

export interface PlannedAlert {
  alert: Alert;
  /** The entity's snapshot that fired it. */
  seq: number;
  /** The `unless` entry that held when it fired: its deliveries are `inhibited`. */
  inhibitedBy?: Inhibition;
}

export interface PlannedDelivery {
  alertId: string;
  channel: string;
  /** `digest`: it waits in its rule's open batch, which the digest worker sends; `inhibited`: never sent. */
  status: 'pending' | 'digest' | 'inhibited';
}

/**
 * Something a rule waits for, for one entity: a dwell (`for`) to complete, or a due date
 * (`overdue`) to pass. At most one per rule and entity; evaluated by the poll at or after `dueAt`.
 */
export interface Timer {
  rule: string;
  key: string;
  kind: 'dwell' | 'overdue';
  /** ISO time. */
  dueAt: string;
  /** What the alert's id derives from: dwell, the seq of the snapshot that started it; overdue, the due date. */
  cause: string;
  /** dwell: the trigger field's value before the crossing, for the alert's changes. */
  from?: unknown;
}

/** A rule's open alerts (`resolve: true`) of one entity: alert id by rule name. */
export type OpenAlerts = ReadonlyMap<string, string>;

/** The condition of an open alert cleared: stored with its own id, notices to the channels that delivered it. */
export interface PlannedResolution {
  id: string;
  alertId: string;
  resolvedAt: string;
  summary: string;
  changes: Change[];
  /** The entity's snapshot that cleared it. */
  seq: number;
}

/** The latest stored snapshot of the same event in other sources, for `unless` entries with a source. */
export type RelatedSnapshots = ReadonlyMap<SourceName, { key: string; data: Snapshot }>;

export interface Plan {
  source: SourceName;
  /**
   * Where the page's entities are stored when not under `source`: one market-search query's own
   * feed (another query of the source may rank or measure the same entity differently).
   */
  feed?: string;
  /** The time of every write of the plan (ISO). */
  at: string;
  snapshots: SnapshotWrite[];
  /** At most one per rule and entity: the memory after the page. */
  memory: MemoryWrite[];
  alerts: PlannedAlert[];
  deliveries: PlannedDelivery[];
  /** Timers set (or replaced) for a rule and entity. */
  timers?: Timer[];
  /** Timers cleared, by rule and entity. */
  clearedTimers?: Array<Pick<Timer, 'rule' | 'key'>>;
  resolutions?: PlannedResolution[];
}

