// `why <rule> <entity>`: the rule's last evaluation for one entity, in plain sentences, one a line.
// Pure: it is handed the entity's stored snapshots, the rule's stored memory, pending dwell and last
// alert, the active silences and the related snapshots `unless` entries read. Each
// part of the explanation is one line producer (WHY_LINES), so that a new part of a rule (dwell,
// silences, `unless`) adds a producer, not a rewrite.
import { formatDuration } from '../core/duration.ts';
import type { RelatedSnapshots, Timer } from '../core/plan.ts';
import type { RuleState, Silence, Snapshot } from '../core/types.ts';
import { crossingValue, evaluate, initiallyArmed, isBeyond, type Evaluation } from './evaluate.ts';
import { matchesFilter } from './filter.ts';
import { unlessSnapshot } from './inhibit.ts';
import { getPath } from './path.ts';
import { mutes } from './silence.ts';
import { filterInWords, thresholdOf, triggerField, triggerInWords } from './describe.ts';
import type { Rule } from './schema.ts';

export interface WhyInput {
  rule: Rule;
  entity: string;
  /** The entity's stored snapshots of the rule's source, oldest first (at least one), with when each was stored and its seq. */
  history: ReadonlyArray<{ data: Snapshot; at: string; seq: number }>;
  /** The rule's stored memory of the entity; undefined while it is derived from the snapshots. */
  memory: RuleState | undefined;
  /** `seq`: the entity's snapshot that fired it. */
  lastAlert: { id: string; fired_at: string; summary: string; seq: number } | undefined;
  /** The rule's pending dwell (`for`) for the entity, if any. */
  dwell: Timer | undefined;
  /** The silences active now (by the clock `silence add` writes them in); those that match are named. */
  silences: readonly Silence[];
  /** The same event's latest snapshots in the sources the rule's `unless` entries read. */
  related: RelatedSnapshots | undefined;
  /** The data's clock, which the daemon judges cooldown and dwell by (the built-in sandbox's simulated time). */
  now: Date;
}

/** What the producers read: the input, and the snapshots replayed through the rule. */
export interface WhyFacts extends WhyInput {
  current: WhyInput['history'][number];
  previous: WhyInput['history'][number] | undefined;
  /** The last evaluation as the stored snapshots replay it; undefined with a single snapshot. */
  last: Evaluation | undefined;
  armed: boolean;
  /** When the rule's memory last armed or disarmed, as the stored snapshots replay it; undefined when they disagree with the stored memory. */
  armedSince: string | undefined;
  lastFiredAt: string | null;
}

export type WhyLines = (facts: WhyFacts) => string[];

/**
 * Replays the stored snapshots through the rule, from the memory the first one gives (as the planner
 * derives it for a rule that meets an entity first), each judged at the time it was stored.
 */
export function whyFacts(input: WhyInput): WhyFacts {
  const { rule, history } = input;
  const first = history[0]!;
  let state: RuleState = { armed: initiallyArmed(rule, first.data), lastFiredAt: null };
  let since = first.at;
  let last: Evaluation | undefined;
  for (let i = 1; i < history.length; i++) {
    last = evaluate(rule, history[i - 1]!.data, history[i]!.data, state, new Date(history[i]!.at));
    if (last.state.armed !== state.armed) since = history[i]!.at;
    state = last.state;
  }
  const armed = input.memory?.armed ?? state.armed;
  return {
    ...input,
    current: history.at(-1)!,
    previous: history.at(-2),
    last,
    armed,
    armedSince: armed === state.armed ? since : undefined,
    lastFiredAt: input.memory?.lastFiredAt ?? state.lastFiredAt ?? input.lastAlert?.fired_at ?? null,
  };
}

/** A value as a sentence shows it: numbers and text as they are, `absent` for a missing field. */
function show(value: unknown): string {
  if (value === undefined) return 'absent';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

const verdictLines: WhyLines = ({ rule, entity, current, previous, last, lastAlert }) => {
  const on = `${rule.name} on ${entity}, at the snapshot stored ${current.at}`;
  // The stored alert says what fired on this snapshot; the replay below judges by stored times, which
  // are not the clock the daemon judged cooldown by (the built-in sandbox's world runs fast).
  const firedOnThis = lastAlert?.seq === current.seq;
  if (rule.forMs !== undefined) {
    // A dwell fires at a later poll than the crossing, on this same snapshot.
    if (firedOnThis) return [`${on}: the value stayed beyond for ${formatDuration(rule.forMs)}: the dwell completed and the alert fired at ${lastAlert.fired_at}.`];
    if (last?.triggered) return [`${on}: the value crossed the threshold: the alert waits until it has stayed beyond for ${formatDuration(rule.forMs)} (see Dwell).`];
  }
  if (firedOnThis) return [`${on}: the trigger fired and the alert was due.`];
  if (previous === undefined || last === undefined) return [`${on}: the only snapshot stored, so nothing changed yet to judge (a source's first poll is a baseline).`];
  if (last.fired) return [`${on}: the trigger fired, but no alert of the rule is stored for this snapshot.`];
  if (last.suppressed === 'filter') return [`${on}: the trigger fired, but the filter does not hold, so no alert${rule.trigger.type === 'crosses' ? ' (the crossing still disarmed the rule)' : ''}.`];
  if (last.suppressed === 'cooldown') return [`${on}: the trigger fired, but the cooldown held the alert back.`];
  return [`${on}: the trigger did not fire.`];
};

const triggerLines: WhyLines = ({ rule, previous, current }) => {
  const t = rule.trigger;
  const field = triggerField(t);
  if (field === undefined) return [`Trigger: ${triggerInWords(t)}; it fires once, when the entity is first seen after its source's baseline.`];
  const after = getPath(current.data, field);
  const values = `${field} was ${previous === undefined ? 'not stored yet' : show(getPath(previous.data, field))}, is ${show(after)}`;
  const threshold = thresholdOf(t);
  if (t.type === 'crosses' && threshold) {
    return [`Trigger: ${triggerInWords(t)}; ${values}, ${typeof after === 'number' && isBeyond(t, after) ? 'beyond' : 'within'} the threshold.`];
  }
  return [`Trigger: ${triggerInWords(t)}; ${values}.`];
};

const armedLines: WhyLines = ({ rule, armed, armedSince, current }) => {
  const threshold = thresholdOf(rule.trigger);
  const field = triggerField(rule.trigger);
  if (!threshold || field === undefined) return [`Armed: always (only a crosses trigger disarms; a ${rule.trigger.type} trigger judges every change).`];
  const since = armedSince === undefined ? '' : `, since ${armedSince}`;
  if (armed) return [`Armed: yes${since}: the next crossing fires.`];
  const level = `${threshold.abs ? 'the absolute value of ' : ''}${field} is at ${Math.round(threshold.rearmAt * 1e9) / 1e9} or ${threshold.side === 'above' ? 'less' : 'more'}`;
  return [`Armed: no${since}: it re-arms once ${level} (it is ${show(getPath(current.data, field))}).`];
};

const filterLines: WhyLines = ({ rule, current }) => {
  if (rule.filter.length === 0) return ['Filter: none, so every entity is reported.'];
  return rule.filter.map((clause) => {
    const holds = matchesFilter([clause], current.data);
    return `Filter ${filterInWords([clause])}: ${holds ? 'holds' : 'does not hold'} (${clause.field} is ${show(getPath(current.data, clause.field))}).`;
  });
};

const cooldownLines: WhyLines = ({ rule, lastFiredAt, now }) => {
  if (rule.cooldownMs === undefined) return ['Cooldown: none.'];
  const length = formatDuration(rule.cooldownMs);
  if (lastFiredAt === null) return [`Cooldown ${length}: not running (the rule has not fired for this entity).`];
  const ends = new Date(Date.parse(lastFiredAt) + rule.cooldownMs).toISOString();
  return Date.parse(ends) > now.getTime()
    ? [`Cooldown ${length}: running since it fired at ${lastFiredAt}, until ${ends}: a firing before then is held back.`]
    : [`Cooldown ${length}: over since ${ends} (it last fired at ${lastFiredAt}).`];
};

/** A duration as a sentence gives it: whole minutes from a minute on, else whole seconds. */
function roughDuration(ms: number): string {
  const unit = ms >= 60_000 ? 60_000 : 1_000;
  return formatDuration(Math.max(0, Math.floor(ms / unit) * unit)).replace(/^0ms$/, '0s');
}

const dwellLines: WhyLines = ({ rule, dwell, current, now }) => {
  const { trigger } = rule;
  if (trigger.type !== 'crosses') return [];
  if (rule.forMs === undefined) return ['Dwell: none (no for:), so a crossing fires at once.'];
  const length = formatDuration(rule.forMs);
  if (dwell === undefined) {
    const value = crossingValue(rule, getPath(current.data, trigger.field));
    const beyond = value !== undefined && isBeyond(trigger, value);
    return [`Dwell ${length}: not waiting${beyond ? ' (beyond, but the rule is disarmed or its wait completed)' : ''}; a crossing starts a wait of ${length}, and the alert fires if the value is still beyond then.`];
  }
  const due = Date.parse(dwell.dueAt);
  const started = new Date(due - rule.forMs).toISOString();
  if (now.getTime() >= due) return [`Dwell ${length}: waiting since ${started}, complete since ${dwell.dueAt}: the next poll fires if the value is still beyond.`];
  return [`Dwell ${length}: waiting since ${started}, ${roughDuration(now.getTime() - (due - rule.forMs))} of ${length} passed; complete at ${dwell.dueAt} if the value stays beyond until then.`];
};

const silenceLines: WhyLines = ({ rule, entity, silences }) => {
  const matching = silences.filter((silence) => mutes(silence.matchers, { rule: rule.name, entity, source: rule.source }));
  if (matching.length === 0) return ['Silences: none active for this rule and entity.'];
  return matching.map((silence) => {
    const matchers = Object.entries(silence.matchers).map(([key, value]) => `${key}=${value}`).join(', ');
    return `Silence ${silence.id} (${matchers}): active until ${silence.ends_at}${silence.comment ? ` (${silence.comment})` : ''}: an alert firing now is stored, not sent.`;
  });
};

const unlessLines: WhyLines = ({ rule, entity, current, related }) => {
  const entries = rule.unless ?? [];
  if (entries.length === 0) return ['Unless: none, so no alert is inhibited.'];
  return entries.map(({ source, filter }, entry) => {
    const on = source === undefined ? 'its own snapshot' : `the event's latest ${source} snapshot`;
    const head = `Unless ${filterInWords(filter)} (on ${on})`;
    const judged = unlessSnapshot(rule, entry, entity, current.data, related);
    if (judged === undefined) return `${head}: does not hold: no ${source} snapshot of this event is stored.`;
    const values = filter.map((clause) => `${clause.field} is ${show(getPath(judged.data, clause.field))}`).join(', ');
    const where = source === undefined ? '' : ` ${judged.source} ${judged.key}`;
    return matchesFilter(filter, judged.data)
      ? `${head}: holds on${where || ' it'} (${values}), so an alert firing now is inhibited.`
      : `${head}: does not hold${where ? ` on${where}` : ''} (${values}).`;
  });
};

const lastAlertLines: WhyLines = ({ lastAlert }) =>
  lastAlert ? [`Last alert: ${lastAlert.id}, fired at ${lastAlert.fired_at}: ${lastAlert.summary}`] : ['Last alert: none for this entity.'];

/** The parts of an explanation, in the order they are printed. */
export const WHY_LINES: readonly WhyLines[] = [verdictLines, triggerLines, armedLines, dwellLines, filterLines, cooldownLines, silenceLines, unlessLines, lastAlertLines];

export function explainRule(input: WhyInput): string[] {
  const facts = whyFacts(input);
  return WHY_LINES.flatMap((lines) => lines(facts));
}
