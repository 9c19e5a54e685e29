import { describe, expect, it } from 'vitest';
import { FilterSchema, filterInWords, thresholdOf, TriggerSchema, triggerInWords } from '../../src/rules/index.ts';

describe('triggerInWords', () => {
  it.each([
    { trigger: { type: 'crosses', field: 'edge_pp', above: 10, rearm: 2 }, words: 'edge_pp crosses above 10, re-arms at 8' },
    { trigger: { type: 'crosses', field: 'edge_pp', above: 10, abs: true, rearm: 2 }, words: 'edge_pp crosses above 10 in absolute value, re-arms at 8' },
    { trigger: { type: 'crosses', field: 'rank', below: 11 }, words: 'rank crosses below 11, re-arms at 11' },
    { trigger: { type: 'crosses', field: 'x', above: 10, rearm: 0.1 }, words: 'x crosses above 10, re-arms at 9.9' },
    { trigger: { type: 'moves', field: 'edge_pp', by: 20 }, words: 'edge_pp moves by 20 or more' },
    { trigger: { type: 'moves', field: 'edge_pp', by: 5, direction: 'up' }, words: 'edge_pp moves up by 5 or more' },
    { trigger: { type: 'flips', field: 'near_settled', to: true }, words: 'near_settled flips to true' },
    { trigger: { type: 'flips', field: 'near_settled' }, words: 'near_settled flips' },
    { trigger: { type: 'changes', field: 'status', to: ['completed', 'failed'] }, words: 'status changes to completed or failed' },
    { trigger: { type: 'changes', field: 'status', from: 'processing' }, words: 'status changes from processing' },
    { trigger: { type: 'drops', field: 'trust_label', to_at_most: 'Caution' }, words: 'trust_label drops by 1 step to Caution or lower' },
    { trigger: { type: 'rises', field: 'confidence_score', by: 2, to_at_least: 8 }, words: 'confidence_score rises by 2 steps to 8 or higher' },
    { trigger: { type: 'appears', field: 'actual.value' }, words: 'actual.value appears' },
    { trigger: { type: 'new' }, words: 'a new entity appears' },
  ])('$words', ({ trigger, words }) => {
    expect(triggerInWords(TriggerSchema.parse(trigger))).toBe(words);
  });
});

describe('thresholdOf', () => {
  it('gives a crosses trigger its threshold and re-arm level, and nothing for other triggers', () => {
    expect(thresholdOf(TriggerSchema.parse({ type: 'crosses', field: 'rank', below: 11, rearm: 3 }))).toEqual({ side: 'below', value: 11, rearmAt: 14, abs: false });
    expect(thresholdOf(TriggerSchema.parse({ type: 'moves', field: 'edge_pp', by: 1 }))).toBeUndefined();
  });
});

describe('filterInWords', () => {
  it.each([
    { filter: null, words: '' },
    { filter: { series_category: 'politics', confidence_score: { gte: 6 } }, words: 'series_category = politics, confidence_score ≥ 6' },
    { filter: { event_ticker: ['KXFED-25DEC', 'KXCPI-25NOV'] }, words: 'event_ticker in KXFED-25DEC, KXCPI-25NOV' },
    { filter: { edge_pp: { gt: -3, lte: 5 }, tier: { not_in: ['low'] }, name: { contains: 'Fed' }, x: { ne: null } }, words: 'edge_pp > -3, edge_pp ≤ 5, tier not in low, name contains Fed, x ≠ null' },
  ])('$words', ({ filter, words }) => {
    expect(filterInWords(FilterSchema.parse(filter))).toBe(words);
  });
});
