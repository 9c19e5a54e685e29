// The status page's JSON API under /api/ (read-only): each endpoint reads the store and the running
// rules, and answers what status-view.ts makes of them. Errors are answers too:
// `{"error": {"code", "message"}}` with the HTTP status.
import type { Rule } from '../rules/index.ts';
import {
  alertExists,
  alertsOnEntity,
  alertsPerHour,
  entityCounts,
  entityHistory,
  entityRuleStates,
  getEntity,
  lastFiredByRule,
  listAlerts,
  openDigestBatches,
  type Store,
} from '../store/index.ts';
import { errorBody, type ApiErrorCode, type RulesJson, type SilenceJson, type SilencesJson, type SourcesJson } from './api-types.ts';
import type { HealthReport } from './health.ts';
import { entityView, historyView, hoursFrom, openAlerts, parseAlertQuery, parseLimit, ruleView, rulesWatching, sourceViews } from './status-view.ts';

export interface ApiAnswer {
  status: number;
  body: unknown;
}

export interface StatusApiOptions {
  store: Store;
  now: () => Date;
  health: () => HealthReport;
  /** The running rules and the state of their files. */
  rules: () => { rules: readonly Rule[]; loadedAt: string; problems: string[]; lastReload: { at: string; ok: boolean } | undefined };
  /** Where the data comes from, as it may be shown (no credentials). */
  apiDescription: string;
  /** The silences active now; none until silences are wired in. */
  activeSilences?: () => Promise<SilenceJson[]>;
}

/** Answers one GET under /api/: `path` is below it (`alerts`, `entities/events/KXFED-25DEC`). */
export type StatusApi = (path: string, query: URLSearchParams) => Promise<ApiAnswer>;

function apiError(status: number, code: ApiErrorCode, message: string): ApiAnswer {
  return { status, body: errorBody(code, message) };
}

const ENTITY_ALERTS = 20;
const HISTORY_POINTS = { default: 1000, max: 10_000 } as const;

export function createStatusApi(options: StatusApiOptions): StatusApi {
  const { store, now } = options;

  async function sources(): Promise<ApiAnswer> {
    const health = options.health();
    const body: SourcesJson = {
      now: now().toISOString(),
      status: health.status,
      reasons: health.reasons,
      api: options.apiDescription,
      database: { kind: health.database.kind, ok: health.database.ok },
      sources: sourceViews(health, await entityCounts(store)),
    };
    return { status: 200, body };
  }

  async function rules(): Promise<ApiAnswer> {
    const at = now();
    const running = options.rules();
    const facts = {
      lastFired: await lastFiredByRule(store),
      perHour: await alertsPerHour(store, hoursFrom(at)),
      batches: await openDigestBatches(store),
      now: at,
    };
    const body: RulesJson = {
      now: at.toISOString(),
      loaded_at: running.loadedAt,
      problems: running.problems,
      last_reload: running.lastReload ? { at: running.lastReload.at, ok: running.lastReload.ok } : null,
      rules: running.rules.map((rule) => ruleView(rule, facts)),
    };
    return { status: 200, body };
  }

  async function alerts(query: URLSearchParams): Promise<ApiAnswer> {
    const parsed = parseAlertQuery(query);
    if (!parsed.ok) return apiError(400, 'bad_parameter', parsed.message);
    const { filter, limit } = parsed;
    if (filter.before !== undefined && !(await alertExists(store, filter.before))) {
      return apiError(400, 'bad_parameter', `before: no alert ${JSON.stringify(filter.before)} (use the next_before of the previous page)`);
    }
    // One more than asked: whether an older page exists.
    const listed = await listAlerts(store, limit + 1, filter);
    const page = listed.slice(0, limit);
    return { status: 200, body: { now: now().toISOString(), alerts: page, next_before: listed.length > limit ? page.at(-1)!.id : null } };
  }

  async function silences(): Promise<ApiAnswer> {
    const body: SilencesJson = { now: now().toISOString(), silences: (await options.activeSilences?.()) ?? [] };
    return { status: 200, body };
  }

  async function entity(source: string, key: string): Promise<ApiAnswer> {
    const row = await getEntity(store, source, key);
    if (!row) return apiError(404, 'not_found', `no entity ${JSON.stringify(key)} in source ${JSON.stringify(source)}`);
    const recent = await listAlerts(store, ENTITY_ALERTS, { source, entity: key });
    const open = openAlerts(recent, await entityRuleStates(store, source, key), options.rules().rules);
    return { status: 200, body: entityView(source, key, row, recent, open, now()) };
  }

  async function history(source: string, key: string, query: URLSearchParams): Promise<ApiAnswer> {
    const field = query.get('field');
    if (field === null || field === '') return apiError(400, 'bad_parameter', 'field: missing (the snapshot field to chart, e.g. field=edge_pp)');
    const limit = parseLimit(query, HISTORY_POINTS.default, HISTORY_POINTS.max);
    if (!limit.ok) return apiError(400, 'bad_parameter', limit.message);
    const versions = await entityHistory(store, source, key, limit.limit);
    if (versions.length === 0) return apiError(404, 'not_found', `no entity ${JSON.stringify(key)} in source ${JSON.stringify(source)}`);
    const fired = await alertsOnEntity(store, source, key, rulesWatching(options.rules().rules, source, field));
    return { status: 200, body: historyView(source, key, field, versions, fired, now()) };
  }

  return async (path, query) => {
    const segments = path.split('/').map(decodeSegment);
    const [resource, source, ...rest] = segments;
    if (segments.length === 1) {
      if (resource === 'sources') return sources();
      if (resource === 'rules') return rules();
      if (resource === 'alerts') return alerts(query);
      if (resource === 'silences') return silences();
    }
    if (resource === 'entities' && source && rest.length > 0) {
      // A key may hold slashes (reports: `venuea/KXFED-25DEC`), written as they are or as %2F.
      if (rest.length > 1 && rest.at(-1) === 'history') return history(source, rest.slice(0, -1).join('/'), query);
      return entity(source, rest.join('/'));
    }
    return apiError(404, 'not_found', `no API endpoint /api/${path} (sources, rules, alerts, silences, entities/{source}/{key}, entities/{source}/{key}/history)`);
  };
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
