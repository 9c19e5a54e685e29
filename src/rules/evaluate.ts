// One rule against one entity's change: did it fire, and what does it remember.
import type { Change, RuleState, Snapshot } from '../core/types.ts';
import type { Rule, Trigger } from './schema.ts';
import { changedField, diffSnapshots } from './diff.ts';
import { nullIsUnranked, ordinalOrder } from './fields.ts';
import { matchesFilter } from './filter.ts';
import { getPath } from './path.ts';
import { summarize } from './summary.ts';
import { addedElements, asNumber, deepEqual, isAbsent } from './values.ts';

export interface Evaluation {
  /** An alert is due: the trigger fired, the filter holds and no cooldown holds it back. */
  fired: boolean;
  /** The trigger condition was met, reported or not. */
  triggered: boolean;
  /** A crosses rule re-armed: its condition cleared (an open alert resolves). */
  rearmed: boolean;
  /** Why a triggered firing was not reported. */
  suppressed?: 'filter' | 'cooldown';
  /** The memory to store for this rule and entity. */
  state: RuleState;
  /** When triggered: the trigger field's change first, then the other changed fields; else empty. */
  changes: Change[];
  /** When triggered: one line for people; else empty. */
  summary: string;
}

/** Tolerance for float sums such as 8.1 - 3.1 compared with 5. */
const EPSILON = 1e-9;

/**
 * Evaluates `rule` for one entity. `prev` undefined: the entity is new (seen for the first time
 * after its source's baseline). `state` undefined: the rule's first evaluation for this entity;
 * its memory is derived from `prev`.
 */
export function evaluate(
  rule: Rule,
  prev: Snapshot | undefined,
  curr: Snapshot,
  state: RuleState | undefined,
  now: Date,
): Evaluation {
  const { trigger } = rule;
  const before: RuleState = state ?? { armed: initiallyArmed(rule, prev), lastFiredAt: null };
  let armed = before.armed;
  let triggered: boolean;
  if (trigger.type === 'crosses') {
    const step = crossesStep(trigger, armed, crossingValue(rule, getPath(curr, trigger.field)));
    triggered = step.fired;
    armed = step.armed;
  } else {
    triggered = fires(trigger, prev, curr);
  }

  const rearmed = !before.armed && armed;
  if (!triggered) return { fired: false, triggered: false, rearmed, state: { armed, lastFiredAt: before.lastFiredAt }, changes: [], summary: '' };

  let suppressed: Evaluation['suppressed'];
  if (!matchesFilter(rule.filter, curr)) suppressed = 'filter';
  else if (inCooldown(rule.cooldownMs, before.lastFiredAt, now)) suppressed = 'cooldown';
  const fired = suppressed === undefined;
  return {
    fired,
    triggered: true,
    rearmed: false,
    ...(suppressed ? { suppressed } : {}),
    state: { armed, lastFiredAt: fired ? now.toISOString() : before.lastFiredAt },
    changes: changesFor(trigger, prev, curr),
    summary: summarize(rule, prev, curr),
  };
}

/** A crosses rule starts armed unless the previous value is already beyond; others are always armed. */
export function initiallyArmed(rule: Rule, prev: Snapshot | undefined): boolean {
  const { trigger } = rule;
  if (trigger.type !== 'crosses' || prev === undefined) return true;
  const value = crossingValue(rule, getPath(prev, trigger.field));
  return value === undefined || !isBeyond(trigger, value);
}

/** The number a crosses trigger compares; a rank of null (out of the ranking) is below every rank. */
export function crossingValue(rule: Rule, raw: unknown): number | undefined {
  if (raw === null && rule.trigger.type === 'crosses' && nullIsUnranked(rule.source, rule.trigger.field)) return Number.POSITIVE_INFINITY;
  return asNumber(raw);
}

export type Crosses = Extract<Trigger, { type: 'crosses' }>;

export function isBeyond(trigger: Crosses, value: number): boolean {
  const x = trigger.abs ? Math.abs(value) : value;
  return trigger.above !== undefined ? x > trigger.above : trigger.below !== undefined && x < trigger.below;
}

function isRearmed(trigger: Crosses, value: number): boolean {
  const x = trigger.abs ? Math.abs(value) : value;
  if (trigger.above !== undefined) return x <= trigger.above - trigger.rearm + EPSILON;
  return trigger.below !== undefined && x >= trigger.below + trigger.rearm - EPSILON;
}

function crossesStep(trigger: Crosses, armed: boolean, value: number | undefined): { fired: boolean; armed: boolean } {
  // No number, no news: the memory stays as it was.
  if (value === undefined) return { fired: false, armed };
  if (armed && isBeyond(trigger, value)) return { fired: true, armed: false };
  if (!armed && isRearmed(trigger, value)) return { fired: false, armed: true };
  return { fired: false, armed };
}

function fires(trigger: Exclude<Trigger, Crosses>, prev: Snapshot | undefined, curr: Snapshot): boolean {
  if (trigger.type === 'new') return prev === undefined;
  // Judged against the clock by the planner's timers, not by a change.
  if (trigger.type === 'overdue') return false;
  const before = prev === undefined ? undefined : getPath(prev, trigger.field);
  const after = getPath(curr, trigger.field);
  switch (trigger.type) {
    case 'appears':
      return isAbsent(before) && !isAbsent(after);
    case 'moves': {
      const from = asNumber(before);
      const to = asNumber(after);
      if (from === undefined || to === undefined) return false;
      const delta = to - from;
      const moved = trigger.direction === 'up' ? delta : trigger.direction === 'down' ? -delta : Math.abs(delta);
      return moved >= trigger.by - EPSILON;
    }
    case 'flips':
      return (
        typeof before === 'boolean' &&
        typeof after === 'boolean' &&
        before !== after &&
        (trigger.to === undefined || after === trigger.to)
      );
    case 'changes':
      return (
        prev !== undefined &&
        !deepEqual(before, after) &&
        (trigger.from === undefined || matchesValue(trigger.from, before)) &&
        (trigger.to === undefined || matchesValue(trigger.to, after))
      );
    case 'drops':
      return movedAlongOrder(trigger.field, before, after, -1, trigger.by, trigger.to_at_most);
    case 'rises':
      return movedAlongOrder(trigger.field, before, after, 1, trigger.by, trigger.to_at_least);
    case 'added':
      return addedElements(before, after).length > 0;
  }
}

/** `from`/`to` of `changes`: one value, or a list meaning any of them. */
function matchesValue(expected: unknown, actual: unknown): boolean {
  return Array.isArray(expected) ? expected.some((item) => deepEqual(item, actual)) : deepEqual(expected, actual);
}

/**
 * drops (sign -1) / rises (sign 1): moved by at least `by` steps (ordinal fields) or by `by`
 * (numbers), and, when a bound is given, ended at that level or beyond it in the same direction.
 */
function movedAlongOrder(
  field: string,
  before: unknown,
  after: unknown,
  sign: 1 | -1,
  by: number,
  bound: string | number | undefined,
): boolean {
  const order = ordinalOrder(field);
  const level = order ? (v: unknown) => ordinalLevel(order, v) : asNumber;
  const from = level(before);
  const to = level(after);
  if (from === undefined || to === undefined) return false;
  if ((to - from) * sign < by - EPSILON) return false;
  if (bound === undefined) return true;
  const limit = level(bound);
  if (limit === undefined) return false;
  return sign < 0 ? to <= limit : to >= limit;
}

/** Higher is better: the best label of the order has the highest level. Unknown labels have none. */
function ordinalLevel(order: readonly string[], value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const wanted = value.trim().toLowerCase();
  const index = order.findIndex((label) => label.toLowerCase() === wanted);
  return index < 0 ? undefined : order.length - 1 - index;
}

export function inCooldown(cooldownMs: number | undefined, lastFiredAt: string | null, now: Date): boolean {
  if (cooldownMs === undefined || lastFiredAt === null) return false;
  const last = Date.parse(lastFiredAt);
  return Number.isFinite(last) && now.getTime() - last < cooldownMs;
}

/**
 * The trigger field's change first, then the other changed top-level fields. For a new entity
 * only the trigger field is listed: everything else would be every field of the snapshot.
 */
export function changesFor(trigger: Trigger, prev: Snapshot | undefined, curr: Snapshot): Change[] {
  const field = trigger.type === 'new' ? undefined : trigger.field;
  const own = field === undefined ? undefined : changedField(prev, curr, field);
  if (own && trigger.type === 'added') own.added = addedElements(own.from, own.to);
  const first = own ? [own] : [];
  if (prev === undefined) return first;
  return [...first, ...diffSnapshots(prev, curr).filter((change) => change.field !== field)];
}
