// The planner's input and output (rules/plan.ts), which the store reads and applies. Maps are
// keyed by entity key and hold the page's entities only; outputs are plain lists of records, so
// that new kinds of input or write can be added beside these.
import type { Alert, Rule, RuleState, SnapshotItem, SourceName } from './types.ts';

/** An entity's latest stored snapshot. */
export interface StoredSnapshot {
  seq: number;
  /** As stored (JSON text): an item that serializes to the same text did not change. */
  text: string;
}

/** A rule's memory of one entity, by rule name. */
export type EntityMemory = ReadonlyMap<string, RuleState>;

/** Everything `plan` judges by. Maps are keyed by entity key and hold the page's entities only. */
export interface PlanInput {
  source: SourceName;
  items: readonly SnapshotItem[];
  previous: ReadonlyMap<string, StoredSnapshot>;
  memory: ReadonlyMap<string, EntityMemory>;
  /** The rules of this source. */
  rules: readonly Rule[];
  now: Date;
  /** The source's first poll: store what it sees, fire nothing. */
  baseline: boolean;
}

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
}

export interface PlannedDelivery {
  alertId: string;
  channel: string;
  /** `digest`: it waits in its rule's open batch, which the digest worker sends. */
  status: 'pending' | 'digest';
}

export interface Plan {
  source: SourceName;
  /** The time of every write of the plan (ISO). */
  at: string;
  snapshots: SnapshotWrite[];
  /** At most one per rule and entity: the memory after the page. */
  memory: MemoryWrite[];
  alerts: PlannedAlert[];
  deliveries: PlannedDelivery[];
}

