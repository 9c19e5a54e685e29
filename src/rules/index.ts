export { parseRuleFile, parseRuleFileDetail, checkAcrossFiles, formatProblem, formatWarning } from './parse.ts';
export type { RuleContext, ParsedRules, ParsedRuleFileDetail, InputKind } from './parse.ts';
export { MARKETS_PAGE_BUDGET } from './market-inputs.ts';
export type { Basket } from './market-inputs.ts';
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
export { SOURCE_FIELDS, ORDINAL_ORDERS, ordinalOrder, checkField, nullIsUnranked } from './fields.ts';
export type { FieldKind, FieldCheck } from './fields.ts';
export { deepEqual, isAbsent } from './values.ts';
export { plan } from './plan.ts';

