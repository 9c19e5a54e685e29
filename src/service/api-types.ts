// The JSON the status page's API answers under /api/ (README: "The status page's JSON API"): the
// contract between the server (status-api.ts) and the page's script (web/). Imports nothing, so
// that the browser code can use these types too.

/** Every error: the HTTP status says the kind, `code` is stable to match on, `message` is for people. */
export interface ApiErrorJson {
  error: { code: ApiErrorCode; message: string };
}

export type ApiErrorCode = 'not_found' | 'bad_parameter' | 'method_not_allowed' | 'internal';

export function errorBody(code: ApiErrorCode, message: string): ApiErrorJson {
  return { error: { code, message } };
}

/**
 * ok: polled well; failing: its last poll failed; stale: no good poll for three intervals; idle:
 * nothing to check; waiting: not polled yet; standby: another process sharing the database polls it.
 */
export type SourceState = 'ok' | 'failing' | 'stale' | 'idle' | 'waiting' | 'standby';

export interface SourceJson {
  name: string;
  state: SourceState;
  interval_seconds: number;
  last_success_at: string | null;
  last_error_at: string | null;
  last_error: string | null;
  /** The last poll succeeded after an error. */
  recovered: boolean;
  /** The last poll failed because the API refused the key (401/403). */
  key_refused: boolean;
  /** Entities stored for the source. */
  entities: number;
  /** This process polls it (on a shared PostgreSQL database, another process may). */
  leader: boolean;
}

export interface SourcesJson {
  /** The server's clock: relative times are counted from it. */
  now: string;
  /** As /healthz judges it, with its reasons. */
  status: 'ok' | 'unhealthy';
  reasons: string[];
  /** Where the data comes from (the research API's address, without credentials, or the built-in sandbox). */
  api: string;
  /** The database's kind, and whether it answered its last check. */
  database: { kind: 'sqlite' | 'postgres'; ok: boolean };
  sources: SourceJson[];
}

export interface ThresholdJson {
  side: 'above' | 'below';
  value: number;
  rearm_at: number;
  abs: boolean;
}

export interface DigestJson {
  cron: string | null;
  timezone: string | null;
  window_seconds: number | null;
  /** When the rule's next digest goes (its open batch's time, else the next one from now). */
  next_at: string;
  /** `the 18:00 UTC digest`: what an alert in a batch waits for. */
  waiting_for: string;
}

export interface RuleJson {
  name: string;
  description: string | null;
  source: string;
  severity: string;
  /** The trigger as written (durations in the rule file's form are not kept: numbers as parsed). */
  trigger: Record<string, unknown>;
  /** `edge_pp crosses above 10, re-arms at 8`. */
  trigger_text: string;
  /** The field the trigger watches, when it watches one. */
  field: string | null;
  /** crosses triggers only. */
  threshold: ThresholdJson | null;
  /** `{field: {operator: value}}`, each entry as an operator map (`series_category: politics` is `{eq: "politics"}`). */
  filter: Record<string, Record<string, unknown>>;
  /** `series_category = politics, confidence_score ≥ 6`; empty without a filter. */
  filter_text: string;
  notify: string[];
  cooldown_seconds: number | null;
  digest: DigestJson | null;
  last_fired_at: string | null;
  alerts_24h: number;
  /** Alerts per UTC hour over the last 24 hours, oldest first; the first hour starts at `hours_from`. */
  firings_per_hour: number[];
  hours_from: string;
}

export interface RulesJson {
  now: string;
  loaded_at: string;
  /** Problems of the rule files (`file:line:column: message`); the valid rules run. */
  problems: string[];
  last_reload: { at: string; ok: boolean } | null;
  rules: RuleJson[];
}

export interface DeliveryJson {
  channel: string;
  /** pending, delivered, dead, silenced, inhibited, or digest while it waits in a digest batch. */
  status: string;
  attempts: number;
  last_error: string | null;
}

/** An alert as `edgewatch alerts --json` prints it. */
export interface AlertJson {
  id: string;
  rule: string;
  severity: string;
  source: string;
  entity: string;
  trigger: string;
  fired_at: string;
  /** When its condition cleared; null while open and for rules that do not resolve. */
  resolved_at: string | null;
  summary: string;
  deliveries: DeliveryJson[];
}

export interface AlertsJson {
  now: string;
  /** Newest first. */
  alerts: AlertJson[];
  /** The `before` of the next (older) page; null on the last page. */
  next_before: string | null;
}

export interface SilenceJson {
  id: string;
  matchers: Record<string, string>;
  starts_at: string;
  ends_at: string;
  comment: string | null;
  created_by: string | null;
}

export interface SilencesJson {
  now: string;
  /** Active now. */
  silences: SilenceJson[];
}

export interface EntityJson {
  now: string;
  source: string;
  key: string;
  /** How people name it (`Fed decision December`). */
  title: string;
  seq: number;
  first_seen_at: string;
  updated_at: string;
  /** The latest stored snapshot, as stored. */
  snapshot: Record<string, unknown>;
  /** Its top-level fields as people read them (`edge_pp`: `+12.3 pp`). */
  fields: Array<{ field: string; text: string }>;
  /** The entity's latest alerts, newest first. */
  alerts: AlertJson[];
  /** Its alerts whose condition has not cleared: crosses rules not re-armed since they fired. */
  open_alerts: AlertJson[];
}

export interface HistoryJson {
  now: string;
  source: string;
  key: string;
  field: string;
  /** The stored snapshots, oldest first: when each was stored and the field's value in it. */
  points: Array<{ seq: number; at: string; value: number | string | boolean | null }>;
  /** The alerts fired on the entity by rules whose trigger watches `field`, oldest first, with the snapshot each fired on. */
  alerts: Array<{ id: string; rule: string; severity: string; fired_at: string; seq: number; summary: string }>;
}
