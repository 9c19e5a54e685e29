// What /healthz answers, as a pure function of the daemon's state and the time.
import type { SourceName } from '../core/types.ts';

export interface SourceStatus {
  source: SourceName;
  intervalMs: number;
  /** Last successful poll (from the database, so it survives restarts). */
  lastSuccessAt: string | null;
  lastErrorAt: string | null;
  lastError: string | null;
  /** Last poll in this process that succeeded or had nothing to check (ms since epoch). */
  lastOkAt: number | undefined;
  /** HTTP status of the API's answer when the last poll failed on one; undefined after a good poll. */
  lastErrorStatus: number | undefined;
  /** The last poll had nothing to check (reports with no rule, runs with none processing). */
  idle: boolean;
}

export interface ReloadStatus {
  at: string;
  ok: boolean;
  problems: string[];
}

export interface RulesStatus {
  /** The rules at start had problems; cleared by the first good reload. */
  failedAtStart: boolean;
  /** Problems of the set running now (those at start, until a good reload). */
  problems: string[];
  loadedAt: string;
  rules: number;
  channels: number;
  lastReload: ReloadStatus | undefined;
}

/** The database, as this process last found it. */
export interface DatabaseStatus {
  kind: 'sqlite' | 'postgres';
  ok: boolean;
  /** Why it could not be reached (never a password). */
  error: string | null;
}

export interface HealthReport {
  status: 'ok' | 'unhealthy';
  started_at: string;
  database: DatabaseStatus;
  /** The sources this process polls: all of them alone on SQLite; those it leads on a shared PostgreSQL. */
  leads: string[];
  sources: Record<string, {
    /** This process polls the source (another process sharing the database does otherwise, and answers for it). */
    leader: boolean;
    interval_seconds: number;
    last_success_at: string | null;
    last_error_at: string | null;
    last_error: string | null;
    idle: boolean;
    /** Seconds since the source was last known good (or since start). */
    staleness_seconds: number;
    stale: boolean;
    /** The last poll failed because the API refused the key (401/403). */
    key_refused: boolean;
    /** No good poll since this start, two intervals after it. */
    never_succeeded: boolean;
  }>;
  rules: {
    ok: boolean;
    failed_at_start: boolean;
    loaded_at: string;
    rules: number;
    channels: number;
    problems: string[];
    last_reload: ReloadStatus | null;
  };
  reasons: string[];
}

/** Stale past three intervals: a source never polled in this process counts from the start. */
export const STALE_INTERVALS = 3;
/** A source with no good poll this long after the start is unhealthy even if not yet stale. */
export const FIRST_SUCCESS_INTERVALS = 2;

/** The API's answers to a key it does not accept: retrying cannot help until the key changes. */
export function isKeyRefused(status: number | undefined): boolean {
  return status === 401 || status === 403;
}

export interface HealthInput {
  sources: readonly SourceStatus[];
  rules: RulesStatus;
  database: DatabaseStatus;
  /** The sources this process leads, each since when (ms since epoch). */
  leads: ReadonlyMap<string, number>;
  startedAt: number;
  now: number;
}

/**
 * A source is judged by the process that leads it, from when it took the lead (a process that
 * took over a source is not stale for the time another polled it).
 */
export function assessHealth(input: HealthInput): { httpStatus: 200 | 503; report: HealthReport } {
  const reasons: string[] = [];
  const sources: HealthReport['sources'] = {};
  if (!input.database.ok) reasons.push(`database unreachable: ${input.database.error ?? 'no answer'}`);
  for (const s of input.sources) {
    const ledSince = input.leads.get(s.source);
    const leader = ledSince !== undefined;
    const from = Math.max(ledSince ?? input.startedAt, input.startedAt);
    const okSinceLead = s.lastOkAt !== undefined && s.lastOkAt >= from ? s.lastOkAt : undefined;
    const since = okSinceLead ?? from;
    const ageMs = Math.max(0, input.now - since);
    const stale = leader && ageMs > STALE_INTERVALS * s.intervalMs;
    const keyRefused = leader && isKeyRefused(s.lastErrorStatus);
    const neverSucceeded = leader && okSinceLead === undefined && input.now - from > FIRST_SUCCESS_INTERVALS * s.intervalMs;
    if (keyRefused) reasons.push(`source ${s.source}: the API refused the key (HTTP ${s.lastErrorStatus}): check EDGEWATCH_API_KEY`);
    if (stale) reasons.push(`source ${s.source} stale: no successful poll for ${Math.round(ageMs / 1000)} s (interval ${Math.round(s.intervalMs / 1000)} s)`);
    else if (neverSucceeded) {
      // Led since its first polls, or taken over later from a process that died.
      const sinceWhat = from - input.startedAt < s.intervalMs ? 'the start' : 'this process took it over';
      reasons.push(`source ${s.source} never polled successfully since ${sinceWhat} ${Math.round(ageMs / 1000)} s ago (interval ${Math.round(s.intervalMs / 1000)} s)`);
    }
    sources[s.source] = {
      leader,
      interval_seconds: s.intervalMs / 1000,
      last_success_at: s.lastSuccessAt,
      last_error_at: s.lastErrorAt,
      last_error: s.lastError,
      idle: s.idle,
      staleness_seconds: Math.round(ageMs / 1000),
      stale,
      key_refused: keyRefused,
      never_succeeded: neverSucceeded,
    };
  }
  if (input.rules.failedAtStart) reasons.push('rules failed to load at start');
  const report: HealthReport = {
    status: reasons.length === 0 ? 'ok' : 'unhealthy',
    started_at: new Date(input.startedAt).toISOString(),
    database: input.database,
    leads: input.sources.map((s) => s.source).filter((source) => input.leads.has(source)),
    sources,
    rules: {
      ok: input.rules.problems.length === 0,
      failed_at_start: input.rules.failedAtStart,
      loaded_at: input.rules.loadedAt,
      rules: input.rules.rules,
      channels: input.rules.channels,
      problems: input.rules.problems,
      last_reload: input.rules.lastReload ?? null,
    },
    reasons,
  };
  return { httpStatus: reasons.length === 0 ? 200 : 503, report };
}
