// The planner: what one page of snapshots does to the stored state. Pure: it takes everything it
// judges by (the stored snapshots and rule memory of the page's entities, the rules, the time)
// and returns the writes, which the store applies in one transaction.
import { alertId, causeKey, dueCauseKey, resolutionId } from '../core/alert-id.ts';
import type { EntityMemory, MemoryWrite, OpenAlerts, Plan, PlannedAlert, RelatedSnapshots, StoredSnapshot, Timer } from '../core/plan.ts';
import type { Alert, Change, RuleState, Snapshot, SnapshotItem, SourceName } from '../core/types.ts';
import { changedField } from './diff.ts';
import { crossingValue, evaluate, inCooldown, initiallyArmed, isBeyond } from './evaluate.ts';
import { matchesFilter } from './filter.ts';
import { inhibitedBy } from './inhibit.ts';
import { getPath } from './path.ts';
import type { Rule } from './schema.ts';
import { summarize, summarizeResolution } from './summary.ts';
import { deepEqual, isAbsent } from './values.ts';

/** Everything `plan` judges by. Maps are keyed by entity key and hold the page's entities only. */
export interface PlanInput {
  source: SourceName;
  /** Where the items are stored when not under `source` (Plan.feed). */
  feed?: string;
  items: readonly SnapshotItem[];
  previous: ReadonlyMap<string, StoredSnapshot>;
  memory: ReadonlyMap<string, EntityMemory>;
  /** The rules' pending timers (dwell, overdue) of the page's entities, by rule name. */
  timers?: ReadonlyMap<string, ReadonlyMap<string, Timer>>;
  /** The open alerts of rules that resolve, of the page's entities. */
  open?: ReadonlyMap<string, OpenAlerts>;
  /** The same event's latest snapshots in other sources, for `unless` entries with a source. */
  related?: ReadonlyMap<string, RelatedSnapshots>;
  /** The rules of this source. */
  rules: readonly Rule[];
  /** The clock rules judge by (dwell, due dates, cooldown): the data's. */
  now: Date;
  /** The time stored with what the plan writes (fired_at, deliveries, resolutions); `now` when absent. */
  at?: Date;
  /** The source's first poll: store what it sees, fire nothing. */
  baseline: boolean;
}

/** Whole seconds, as the webhook contract writes fired_at; stored times keep milliseconds for ordering. */
function wholeSeconds(now: Date): string {
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A plan with every list present; `feed` only for a market-search page. */
type FullPlan = Required<Omit<Plan, 'feed'>> & Pick<Plan, 'feed'>;

function emptyPlan(source: SourceName, feed: string | undefined, now: Date): FullPlan {
  return { source, ...(feed === undefined ? {} : { feed }), at: now.toISOString(), snapshots: [], memory: [], alerts: [], deliveries: [], timers: [], clearedTimers: [], resolutions: [] };
}

/** What the planner has decided so far for one page, so that later items see earlier writes. */
class PlanBuilder {
  readonly plan: FullPlan;
  private readonly memoryWrites = new Map<string, MemoryWrite>();
  private readonly timerWrites = new Map<string, Timer | null>();
  private readonly openWrites = new Map<string, string | null>();

  constructor(
    readonly input: Pick<PlanInput, 'source' | 'feed' | 'memory' | 'timers' | 'open' | 'related' | 'now' | 'at'>,
  ) {
    this.plan = emptyPlan(input.source, input.feed, input.at ?? input.now);
  }

  private static id(rule: string, key: string): string {
    return `${rule}\u0000${key}`;
  }

  memoryOf(rule: string, key: string): RuleState | undefined {
    return this.memoryWrites.get(PlanBuilder.id(rule, key))?.state ?? this.input.memory.get(key)?.get(rule);
  }

  remember(rule: string, key: string, state: RuleState): void {
    this.memoryWrites.set(PlanBuilder.id(rule, key), { rule, key, state });
  }

  timerOf(rule: string, key: string): Timer | undefined {
    const id = PlanBuilder.id(rule, key);
    if (this.timerWrites.has(id)) return this.timerWrites.get(id) ?? undefined;
    return this.input.timers?.get(key)?.get(rule);
  }

  setTimer(timer: Timer): void {
    this.timerWrites.set(PlanBuilder.id(timer.rule, timer.key), timer);
  }

  /** Clears the rule's timer for the entity; `known`: it is stored, though not among the inputs (a due timer). */
  clearTimer(rule: string, key: string, known = false): void {
    if (known || this.timerOf(rule, key) !== undefined) this.timerWrites.set(PlanBuilder.id(rule, key), null);
  }

  openAlertOf(rule: string, key: string): string | undefined {
    const id = PlanBuilder.id(rule, key);
    if (this.openWrites.has(id)) return this.openWrites.get(id) ?? undefined;
    return this.input.open?.get(key)?.get(rule);
  }

  /** An alert of `rule` fired: stored, delivered (or inhibited), and open when the rule resolves. */
  fire(rule: Rule, key: string, seq: number, id: string, fields: Pick<Alert, 'summary' | 'changes' | 'current'>): void {
    const alert: Alert = {
      id,
      rule: rule.name,
      severity: rule.severity,
      source: this.input.source,
      entity: key,
      trigger: rule.trigger.type,
      fired_at: wholeSeconds(this.input.at ?? this.input.now),
      ...fields,
    };
    const inhibition = inhibitedBy(rule, key, fields.current, this.input.related?.get(key));
    const planned: PlannedAlert = inhibition ? { alert, seq, inhibitedBy: inhibition } : { alert, seq };
    this.plan.alerts.push(planned);
    for (const channel of rule.notify) {
      this.plan.deliveries.push({ alertId: id, channel, status: inhibition ? 'inhibited' : rule.digest ? 'digest' : 'pending' });
    }
    if (rule.resolve) this.openWrites.set(PlanBuilder.id(rule.name, key), id);
  }

  /** The open alert of `rule` for the entity, if any, resolved now by snapshot `seq`. */
  resolve(rule: Rule, key: string, seq: number, current: Snapshot, changes: Change[]): void {
    const alertIdOpen = this.openAlertOf(rule.name, key);
    if (alertIdOpen === undefined) return;
    this.openWrites.set(PlanBuilder.id(rule.name, key), null);
    this.plan.resolutions.push({
      id: resolutionId(alertIdOpen),
      alertId: alertIdOpen,
      resolvedAt: wholeSeconds(this.input.at ?? this.input.now),
      summary: summarizeResolution(rule, current),
      changes,
      seq,
    });
  }

  finish(): FullPlan {
    this.plan.memory = [...this.memoryWrites.values()];
    for (const [id, timer] of this.timerWrites) {
      if (timer) this.plan.timers.push(timer);
      else {
        const [rule, key] = id.split('\u0000') as [string, string];
        this.plan.clearedTimers.push({ rule, key });
      }
    }
    return this.plan;
  }
}

/**
 * Plans one page. An item whose serialized snapshot equals the entity's latest changes nothing
 * (but an `overdue` rule may set its timer); a changed one gets the next `seq` and, unless it is a
 * baseline, is judged by every rule.
 */
export function plan(input: PlanInput): FullPlan {
  const { rules, now } = input;
  const builder = new PlanBuilder(input);
  const result = builder.plan;
  // What this page has planned so far, so that an entity listed twice is judged against its own
  // earlier write, as if the page were applied item by item.
  const latest = new Map<string, StoredSnapshot>();

  for (const item of input.items) {
    const text = JSON.stringify(item.data);
    const prev = latest.get(item.key) ?? input.previous.get(item.key);
    if (prev?.text === text) {
      for (const rule of rules) if (rule.trigger.type === 'overdue') scheduleOverdue(builder, rule, item.key, undefined, item.data, now, 'unchanged');
      continue;
    }
    const seq = (prev?.seq ?? 0) + 1;
    latest.set(item.key, { seq, text });
    result.snapshots.push({ key: item.key, seq, text });
    const prevData = prev ? (JSON.parse(prev.text) as Snapshot) : undefined;
    if (input.baseline || (item.baseline && !prev) || rules.length === 0) {
      // A baseline fires nothing, but a due date still ahead is waited for.
      for (const rule of rules) if (rule.trigger.type === 'overdue') scheduleOverdue(builder, rule, item.key, undefined, item.data, now, 'unchanged');
      continue;
    }
    for (const rule of rules) judge(builder, rule, item.key, seq, prevData, item.data);
  }
  return builder.finish();
}

/** One rule against one entity's change. */
function judge(builder: PlanBuilder, rule: Rule, key: string, seq: number, prevData: Snapshot | undefined, data: Snapshot): void {
  const { now, source } = builder.input;
  const { trigger } = rule;
  if (trigger.type === 'overdue') {
    const field = getPath(data, trigger.field);
    if (!isAbsent(field)) {
      builder.clearTimer(rule.name, key);
      if (rule.resolve) builder.resolve(rule, key, seq, data, ownChange(prevData, data, trigger.field));
      return;
    }
    scheduleOverdue(builder, rule, key, prevData, data, now, prevData === undefined ? 'new' : 'changed');
    return;
  }

  const before = builder.memoryOf(rule.name, key);
  const outcome = evaluate(rule, prevData, data, before, now);
  let after = outcome.state;
  let fired = outcome.fired;
  if (trigger.type === 'crosses' && rule.forMs !== undefined) {
    // Dwell: a crossing starts the wait instead of firing; the rule stays armed until it completes.
    const base = before ?? { armed: initiallyArmed(rule, prevData), lastFiredAt: null };
    if (outcome.triggered) {
      after = base;
      fired = false;
      // Armed while beyond: unlike the memory derived from this snapshot, so it needs its row.
      builder.remember(rule.name, key, base);
      if (builder.timerOf(rule.name, key) === undefined) {
        builder.setTimer({
          rule: rule.name,
          key,
          kind: 'dwell',
          dueAt: new Date(now.getTime() + rule.forMs).toISOString(),
          cause: String(seq),
          from: prevData === undefined ? null : (getPath(prevData, trigger.field) ?? null),
        });
      }
    } else {
      const value = crossingValue(rule, getPath(data, trigger.field));
      // Back within the threshold before the dwell completed: the wait starts again.
      if (value !== undefined && !isBeyond(trigger, value)) builder.clearTimer(rule.name, key);
    }
  }
  const needsRow = before
    ? before.armed !== after.armed || before.lastFiredAt !== after.lastFiredAt
    : !after.armed || after.lastFiredAt !== null;
  // An absent memory is derived again from the stored snapshot, so only a memory that differs
  // from that derivation (disarmed, or with a firing time) needs a row.
  if (needsRow) builder.remember(rule.name, key, after);
  if (outcome.rearmed && rule.resolve && trigger.type === 'crosses') builder.resolve(rule, key, seq, data, ownChange(prevData, data, trigger.field));
  if (!fired) return;
  builder.fire(rule, key, seq, alertId(causeKey(rule.name, source, key, seq)), { summary: outcome.summary, changes: outcome.changes, current: data });
}

function ownChange(prev: Snapshot | undefined, curr: Snapshot, field: string): Change[] {
  const change = changedField(prev, curr, field);
  return change ? [change] : [];
}

/** When an `overdue` rule's alert is due for a snapshot: its due date plus grace; undefined when it has none. */
export function overdueAt(rule: Rule, data: Snapshot): { due: string; at: Date } | undefined {
  if (rule.trigger.type !== 'overdue') return undefined;
  const due = getPath(data, rule.trigger.due);
  if (typeof due !== 'string') return undefined;
  const time = Date.parse(due);
  if (!Number.isFinite(time)) return undefined;
  return { due, at: new Date(time + rule.trigger.graceMs) };
}

/**
 * Sets the timer of an `overdue` rule whose field is still absent. A due date already past is
 * waited for only when it is news (a new entity, or a due date that changed): a rule fires for
 * what happens next, never for what was already true when it was loaded or at the baseline.
 */
function scheduleOverdue(builder: PlanBuilder, rule: Rule, key: string, prevData: Snapshot | undefined, data: Snapshot, now: Date, how: 'new' | 'changed' | 'unchanged'): void {
  if (rule.trigger.type !== 'overdue' || !isAbsent(getPath(data, rule.trigger.field))) return;
  const due = overdueAt(rule, data);
  const pending = builder.timerOf(rule.name, key);
  if (due === undefined) {
    if (pending) builder.clearTimer(rule.name, key);
    return;
  }
  if (pending?.cause === due.due) return;
  const dueChanged = how === 'new' || (how === 'changed' && prevData !== undefined && !deepEqual(getPath(prevData, rule.trigger.due), due.due));
  if (due.at.getTime() <= now.getTime() && !dueChanged) {
    if (pending) builder.clearTimer(rule.name, key);
    return;
  }
  builder.setTimer({ rule: rule.name, key, kind: 'overdue', dueAt: due.at.toISOString(), cause: due.due });
}

/** Everything `planTimers` judges by: the source's timers due now and what they fire on. */
export interface TimersInput {
  source: SourceName;
  /** The market-search feed the entities are stored under (Plan.feed). */
  feed?: string;
  /** Timers whose time has come. */
  due: readonly Timer[];
  /** The latest stored snapshots of the timers' entities. */
  latest: ReadonlyMap<string, StoredSnapshot>;
  memory: ReadonlyMap<string, EntityMemory>;
  open?: ReadonlyMap<string, OpenAlerts>;
  related?: ReadonlyMap<string, RelatedSnapshots>;
  rules: readonly Rule[];
  now: Date;
  at?: Date;
}

/**
 * The timers whose time has come, judged on each entity's latest snapshot (whether or not it
 * changed): a completed dwell or a passed due date fires (once: the alert's id derives from the
 * dwell's start or the due date); every due timer is cleared.
 */
export function planTimers(input: TimersInput): FullPlan {
  const builder = new PlanBuilder(input);
  const rules = new Map(input.rules.map((rule) => [rule.name, rule]));
  for (const timer of input.due) {
    builder.clearTimer(timer.rule, timer.key, true);
    const rule = rules.get(timer.rule);
    const stored = input.latest.get(timer.key);
    if (!rule || !stored) continue;
    const data = JSON.parse(stored.text) as Snapshot;
    if (timer.kind === 'dwell') completeDwell(builder, rule, timer, stored.seq, data);
    else fireOverdue(builder, rule, timer, stored.seq, data);
  }
  return builder.finish();
}

function completeDwell(builder: PlanBuilder, rule: Rule, timer: Timer, seq: number, data: Snapshot): void {
  const { trigger } = rule;
  if (trigger.type !== 'crosses') return;
  const value = crossingValue(rule, getPath(data, trigger.field));
  if (value === undefined || !isBeyond(trigger, value)) return;
  const before = builder.memoryOf(rule.name, timer.key) ?? { armed: true, lastFiredAt: null };
  if (!before.armed) return;
  const { now, source } = builder.input;
  // As at a crossing: the filter decides whether it is reported; either way the rule disarms.
  const fired = matchesFilter(rule.filter, data) && !inCooldown(rule.cooldownMs, before.lastFiredAt, now);
  builder.remember(rule.name, timer.key, { armed: false, lastFiredAt: fired ? now.toISOString() : before.lastFiredAt });
  if (!fired) return;
  const from = timer.from ?? null;
  const prevStub: Snapshot = setPath(trigger.field, from);
  builder.fire(rule, timer.key, seq, alertId(causeKey(rule.name, source, timer.key, Number(timer.cause))), {
    summary: summarize(rule, prevStub, data),
    changes: [{ field: trigger.field, from, to: getPath(data, trigger.field) ?? null }],
    current: data,
  });
}

function fireOverdue(builder: PlanBuilder, rule: Rule, timer: Timer, seq: number, data: Snapshot): void {
  const { trigger } = rule;
  if (trigger.type !== 'overdue' || !isAbsent(getPath(data, trigger.field))) return;
  const due = overdueAt(rule, data);
  if (due?.due !== timer.cause) return;
  const { now, source } = builder.input;
  const memory = builder.memoryOf(rule.name, timer.key) ?? { armed: true, lastFiredAt: null };
  if (!matchesFilter(rule.filter, data) || inCooldown(rule.cooldownMs, memory.lastFiredAt, now)) return;
  builder.remember(rule.name, timer.key, { armed: true, lastFiredAt: now.toISOString() });
  builder.fire(rule, timer.key, seq, alertId(dueCauseKey(rule.name, source, timer.key, due.due)), {
    summary: summarize(rule, data, data),
    changes: [{ field: trigger.field, from: null, to: null }, { field: trigger.due, from: due.due, to: due.due }],
    current: data,
  });
}

/** `{a: {b: value}}` for the path `a.b`. */
function setPath(path: string, value: unknown): Snapshot {
  const segments = path.split('.');
  let result: unknown = value;
  for (let i = segments.length - 1; i >= 0; i--) result = { [segments[i]!]: result };
  return result as Snapshot;
}
