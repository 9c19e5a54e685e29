// Prepared statements of the hot path (one per store, reused across pages), typed by schema.ts.
import type SqliteDatabase from 'better-sqlite3';
import type { AlertsTable, EntitiesTable, RuleStateTable } from './schema.ts';

export interface HotStatements {
  getEntity: SqliteDatabase.Statement<[string, string], Pick<EntitiesTable, 'seq' | 'data' | 'updated_at'>>;
  upsertEntity: SqliteDatabase.Statement<[string, string, number, string, string, string]>;
  insertSnapshot: SqliteDatabase.Statement<[string, string, number, string, string]>;
  getRuleStates: SqliteDatabase.Statement<[string, string], Pick<RuleStateTable, 'rule' | 'armed' | 'last_fired_at'>>;
  upsertRuleState: SqliteDatabase.Statement<[string, string, string, number, string | null]>;
  insertAlert: SqliteDatabase.Statement<
    [AlertsTable['id'], string, string, string, string, string, string, string, string, number]
  >;
  insertDelivery: SqliteDatabase.Statement<[string, string, string, string | null, string | null, string]>;
}

const cache = new WeakMap<SqliteDatabase.Database, HotStatements>();

export function hotStatements(raw: SqliteDatabase.Database): HotStatements {
  let statements = cache.get(raw);
  if (statements) return statements;
  statements = {
    getEntity: raw.prepare('SELECT seq, data, updated_at FROM entities WHERE source = ? AND entity_key = ?'),
    upsertEntity: raw.prepare(
      `INSERT INTO entities (source, entity_key, seq, data, first_seen_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (source, entity_key) DO UPDATE SET seq = excluded.seq, data = excluded.data, updated_at = excluded.updated_at`,
    ),
    insertSnapshot: raw.prepare(
      'INSERT OR IGNORE INTO snapshots (source, entity_key, seq, data, stored_at) VALUES (?, ?, ?, ?, ?)',
    ),
    getRuleStates: raw.prepare('SELECT rule, armed, last_fired_at FROM rule_state WHERE source = ? AND entity_key = ?'),
    upsertRuleState: raw.prepare(
      `INSERT INTO rule_state (rule, source, entity_key, armed, last_fired_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (rule, source, entity_key) DO UPDATE SET armed = excluded.armed, last_fired_at = excluded.last_fired_at`,
    ),
    insertAlert: raw.prepare(
      `INSERT OR IGNORE INTO alerts (id, rule, severity, source, entity, trigger, fired_at, summary, changes, seq)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    insertDelivery: raw.prepare(
      `INSERT OR IGNORE INTO deliveries (alert_id, channel, status, digest_id, next_attempt_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
    ),
  };
  cache.set(raw, statements);
  return statements;
}

/**
 * SQL for reading alerts `a` with their `current` snapshot: the entity's latest when the alert's
 * snapshot is still the latest, else the superseded one kept in `snapshots`.
 */
export const ALERT_CURRENT = {
  column: 'COALESCE(cur_e.data, cur_s.data) AS current',
  joins: `LEFT JOIN entities cur_e ON cur_e.source = a.source AND cur_e.entity_key = a.entity AND cur_e.seq = a.seq
          LEFT JOIN snapshots cur_s ON cur_s.source = a.source AND cur_s.entity_key = a.entity AND cur_s.seq = a.seq`,
} as const;
