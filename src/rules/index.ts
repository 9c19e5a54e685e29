export { parseRuleFile, parseRuleFileDetail, checkAcrossFiles, formatProblem } from './parse.ts';
export type { RuleContext, ParsedRules, ParsedRuleFileDetail } from './parse.ts';
export { loadRules, combineRuleFiles, ruleContext } from './load.ts';
export type { RuleSet } from './load.ts';
export { getPath } from './path.ts';
export { matchesFilter } from './filter.ts';
export { ChannelSchema, FILTER_OPERATORS, FilterSchema, RuleSchema, TriggerSchema } from './schema.ts';
export type { Channel, Digest, FilterClause, FilterOperator, Rule, Trigger } from './schema.ts';
export { diffSnapshots, changedField } from './diff.ts';
export { evaluate } from './evaluate.ts';
export type { Evaluation } from './evaluate.ts';
export { summarize } from './summary.ts';
export { SOURCE_FIELDS, ORDINAL_ORDERS, ordinalOrder, checkField } from './fields.ts';
export type { FieldKind, FieldCheck } from './fields.ts';
export { deepEqual, isAbsent } from './values.ts';
export { plan } from './plan.ts';

export { filterInWords, thresholdOf, triggerField, triggerInWords } from './describe.ts';
export type { Threshold } from './describe.ts';
