// reports: the trust scorecards of the events that some `reports` rule's filter can match, least
// recently checked first, within a per-poll request budget. The venue and report key of an event
// are learned once from its detail; an event whose detail answers 404 is skipped until its turn
// comes round again. Each check is a page: its snapshot (when a scorecard was found) and the check.
import type { ReportCandidate, ReportCheck, Snapshot } from '../core/types.ts';
import type { FilterClause, Rule } from '../rules/index.ts';
import { matchesFilter } from '../rules/index.ts';
import { errorCode, unlessNotFound, type FetchContext, type SourcePage, type SourcePages } from './types.ts';

/** Fields a reports snapshot adds to the event's; a filter on them cannot be judged on the event. */
const REPORT_FIELDS = new Set(['run_id', 'trust_score', 'trust_label', 'title', 'venue', 'event_key']);

function eventFilter(rule: Rule): FilterClause[] {
  return rule.filter.filter((clause) => !REPORT_FIELDS.has(clause.field.split('.')[0]!));
}

/** The first `limit` candidates that some rule's filter matches, chosen before any request. */
async function selectCandidates(ctx: FetchContext, limit: number): Promise<ReportCandidate[]> {
  const filters = ctx.rules.map(eventFilter);
  const picked: ReportCandidate[] = [];
  if (limit <= 0) return picked;
  for await (const candidate of ctx.stored.reportCandidates()) {
    if (!filters.some((filter) => matchesFilter(filter, candidate.event))) continue;
    picked.push(candidate);
    if (picked.length >= limit) break;
  }
  return picked;
}

export async function fetchReports(ctx: FetchContext): Promise<SourcePages> {
  if (ctx.rules.length === 0) return 'idle';
  return checkReports(ctx, await selectCandidates(ctx, ctx.reportsBudget));
}

async function* checkReports(ctx: FetchContext, candidates: readonly ReportCandidate[]): AsyncGenerator<SourcePage> {
  let budget = ctx.reportsBudget;
  for (const { event, check } of candidates) {
    if (budget <= 0) break;
    let { venue, eventKey } = check;
    if (venue === null || eventKey === null) {
      budget--;
      const detail = await unlessNotFound(ctx.api.event(check.eventTicker));
      if (detail === undefined) {
        // Delisted: the other reports are still checked, and this event waits its turn behind
        // them instead of being picked first again.
        yield { items: [], reportChecks: [{ eventTicker: check.eventTicker, venue: null, eventKey: null, checkedAt: ctx.now().toISOString(), found: null }] };
        continue;
      }
      venue = detail.venue;
      eventKey = venue === 'venueb' && typeof detail.slug === 'string' ? detail.slug : detail.event_ticker;
      // Learned once, kept whatever the trust check comes to.
      yield { items: [], reportChecks: [{ eventTicker: check.eventTicker, venue, eventKey, checkedAt: null, found: null }] };
      if (budget <= 0) break;
    }
    budget--;
    const checked: ReportCheck = { eventTicker: check.eventTicker, venue, eventKey, checkedAt: ctx.now().toISOString(), found: true };
    try {
      const trust = await ctx.api.trust(venue, eventKey);
      const snapshot: Snapshot = {
        ...event,
        venue,
        run_id: trust.run_id,
        trust_score: trust.trust_index.score,
        trust_label: trust.trust_index.label,
        title: trust.title ?? null,
      };
      // A report's first check is its baseline.
      yield { items: [{ key: `${venue}/${eventKey}`, data: snapshot, baseline: check.found === null }], reportChecks: [checked] };
    } catch (error) {
      // No report generated yet: not an error. Its first appearance later is `new`.
      if (errorCode(error) !== 'report_not_found') throw error;
      yield { items: [], reportChecks: [{ ...checked, found: false }] };
    }
  }
}
