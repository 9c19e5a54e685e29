// The planner's output (rules/plan.ts), which the store applies, and the stored state it reads. Maps are
// keyed by entity key and hold the page's entities only; outputs are plain lists of records, so
// that new kinds of input or write can be added beside these.
import type { Alert, RuleState, SourceName } from './types.ts';

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
}

export interface PlannedDelivery {
  alertId: string;
  channel: string;
  /** `digest`: it waits in its rule's open batch, which the digest worker sends. */
  status: 'pending' | 'digest';
}

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
}

