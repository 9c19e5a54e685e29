// reports: the trust scorecards of the events that some `reports` rule's filter can match, least
// recently checked first, within a per-poll request budget. The venue and report key of an event
// are learned once from its detail; an event whose detail answers 404 is skipped until its turn
// comes round again.
import type { Snapshot } from '../core/types.ts';
import type { FilterClause, Rule } from '../rules/index.ts';
import { matchesFilter } from '../rules/index.ts';
import { ingestPage } from '../service/ingest.ts';
import { hotStatements, markPollSuccess } from '../store/index.ts';
import { errorCode, unlessNotFound, type PollContext, type PollResult } from './types.ts';

/** Fields a reports snapshot adds to the event's; a filter on them cannot be judged on the event. */
const REPORT_FIELDS = new Set(['run_id', 'trust_score', 'trust_label', 'title', 'venue', 'event_key']);

interface Candidate {
  ticker: string;
  event: Snapshot;
  venue: string | null;
  eventKey: string | null;
  /** Whether the trust scorecard was ever checked: its first check is the report's baseline. */
  trustChecked: boolean;
}

function eventFilter(rule: Rule): FilterClause[] {
  return rule.filter.filter((clause) => !REPORT_FIELDS.has(clause.field.split('.')[0]!));
}

function selectCandidates(ctx: PollContext, limit: number): Candidate[] {
  const filters = ctx.rules.map(eventFilter);
  const { getEntity } = hotStatements(ctx.store.raw);
  // Sort the keys only: sorting the snapshots' text along with them (tens of MB) dominated the poll.
  const rows = ctx.store.raw
    .prepare<[], { ticker: string; venue: string | null; event_key: string | null; found: number | null }>(
      `SELECT e.entity_key AS ticker, c.venue, c.event_key, c.found
       FROM entities e LEFT JOIN report_checks c ON c.event_ticker = e.entity_key
       WHERE e.source = 'events'
       ORDER BY c.last_checked_at ASC NULLS FIRST, e.entity_key`,
    )
    .all();
  const picked: Candidate[] = [];
  for (const row of rows) {
    const stored = getEntity.get('events', row.ticker);
    if (!stored) continue;
    const event = JSON.parse(stored.data) as Snapshot;
    if (!filters.some((filter) => matchesFilter(filter, event))) continue;
    picked.push({ ticker: row.ticker, event, venue: row.venue, eventKey: row.event_key, trustChecked: row.found !== null });
    if (picked.length >= limit) break;
  }
  return picked;
}

export async function pollReports(ctx: PollContext): Promise<PollResult> {
  const result: PollResult = { source: 'reports', alerts: [], changed: 0 };
  if (ctx.rules.length === 0) return { ...result, skipped: true };
  let budget = ctx.reportsBudget;
  const saveCheck = ctx.store.raw.prepare<[string, string | null, string | null, string | null, number | null]>(
    `INSERT INTO report_checks (event_ticker, venue, event_key, last_checked_at, found) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (event_ticker) DO UPDATE SET venue = excluded.venue, event_key = excluded.event_key,
       last_checked_at = excluded.last_checked_at, found = excluded.found`,
  );

  for (const candidate of selectCandidates(ctx, budget)) {
    if (budget <= 0) break;
    let { venue, eventKey } = candidate;
    if (venue === null || eventKey === null) {
      budget--;
      const detail = await unlessNotFound(ctx.api.event(candidate.ticker));
      if (detail === undefined) {
        // Delisted: the other reports are still checked, and this event waits its turn behind
        // them instead of being picked first again.
        if (!ctx.dryRun) saveCheck.run(candidate.ticker, null, null, ctx.now().toISOString(), null);
        continue;
      }
      venue = detail.venue;
      eventKey = venue === 'venueb' && typeof detail.slug === 'string' ? detail.slug : detail.event_ticker;
      if (!ctx.dryRun) saveCheck.run(candidate.ticker, venue, eventKey, null, null);
      if (budget <= 0) break;
    }
    budget--;
    const now = ctx.now();
    let found = 1;
    try {
      const trust = await ctx.api.trust(venue, eventKey);
      const snapshot: Snapshot = {
        ...candidate.event,
        venue,
        run_id: trust.run_id,
        trust_score: trust.trust_index.score,
        trust_label: trust.trust_index.label,
        title: trust.title ?? null,
      };
      const ingested = ingestPage(ctx.store, [{ key: `${venue}/${eventKey}`, data: snapshot, baseline: !candidate.trustChecked }], {
        source: 'reports',
        rules: ctx.rules,
        baseline: false,
        now,
        dryRun: ctx.dryRun,
      });
      result.alerts.push(...ingested.alerts);
      result.changed += ingested.changed;
    } catch (error) {
      // No report generated yet: not an error. Its first appearance later is `new`.
      if (errorCode(error) !== 'report_not_found') throw error;
      found = 0;
    }
    if (!ctx.dryRun) saveCheck.run(candidate.ticker, venue, eventKey, now.toISOString(), found);
  }
  if (!ctx.dryRun) await markPollSuccess(ctx.store, 'reports', ctx.now());
  return result;
}
