// `why`'s sentences for an alert's life (pure): the verdict from the stored alert, a dwell's
// progress by the data's clock, the silences that match, each `unless` entry.
import { describe, expect, it } from 'vitest';
import { CREDENTIAL_VARIABLES } from '../../src/config.ts';
import type { Silence } from '../../src/core/types.ts';
import { explainRule, type WhyInput } from '../../src/rules/explain.ts';
import { parseRuleFile, type RuleContext } from '../../src/rules/parse.ts';

const CTX: RuleContext = { env: {}, credentials: CREDENTIAL_VARIABLES, templates: new Set(), transports: { slack: false, email: false } };
const [HELD] = parseRuleFile(
  [
    'channels:',
    '  screen: { type: console }',
    'rules:',
    '  - name: held',
    '    source: events',
    '    trigger: { type: crosses, field: edge_pp, above: 20 }',
    '    for: 30m',
    '    unless:',
    '      - { source: reports, filter: { trust_label: [Avoid] } }',
    '      - { filter: { confidence_score: { lt: 3 } } }',
    '    notify: [screen]',
    '',
  ].join('\n'),
  'rules/x.yaml',
  CTX,
).rules;

const history: WhyInput['history'] = [
  { data: { event_ticker: 'KXA', edge_pp: 5, confidence_score: 7 }, at: '2026-11-20T12:00:00.000Z', seq: 1 },
  { data: { event_ticker: 'KXA', edge_pp: 25, confidence_score: 7 }, at: '2026-11-20T12:10:00.000Z', seq: 2 },
];
const silence = (matchers: Silence['matchers']): Silence => ({ id: 'S1', matchers, starts_at: '2026-11-20T00:00:00Z', ends_at: '2026-11-21T00:00:00Z', comment: null, created_by: 'me' });
const input = (over: Partial<WhyInput>): WhyInput => ({
  rule: HELD!,
  entity: 'KXA',
  history,
  memory: { armed: true, lastFiredAt: null },
  lastAlert: undefined,
  dwell: { rule: 'held', key: 'KXA', kind: 'dwell', dueAt: '2026-11-20T12:40:00.000Z', cause: '2' },
  silences: [],
  related: undefined,
  now: new Date('2026-11-20T12:22:30Z'),
  ...over,
});

describe('why, for an alert\'s life', () => {
  it('gives a running dwell\'s start, progress by the data\'s clock and end; one past its end waits for the next poll', () => {
    const lines = explainRule(input({}));
    expect(lines[0]).toBe('held on KXA, at the snapshot stored 2026-11-20T12:10:00.000Z: the value crossed the threshold: the alert waits until it has stayed beyond for 30m (see Dwell).');
    expect(lines).toContain('Dwell 30m: waiting since 2026-11-20T12:10:00.000Z, 12m of 30m passed; complete at 2026-11-20T12:40:00.000Z if the value stays beyond until then.');
    expect(explainRule(input({ now: new Date('2026-11-20T12:41:00Z') }))).toContain(
      'Dwell 30m: waiting since 2026-11-20T12:10:00.000Z, complete since 2026-11-20T12:40:00.000Z: the next poll fires if the value is still beyond.',
    );
  });

  it('says a dwell completed when the stored alert fired on the latest snapshot', () => {
    const lines = explainRule(input({ dwell: undefined, lastAlert: { id: 'A1', fired_at: '2026-11-20T12:40:00Z', summary: 's', seq: 2 }, memory: { armed: false, lastFiredAt: '2026-11-20T12:40:00.000Z' } }));
    expect(lines[0]).toBe('held on KXA, at the snapshot stored 2026-11-20T12:10:00.000Z: the value stayed beyond for 30m: the dwell completed and the alert fired at 2026-11-20T12:40:00Z.');
  });

  it('names the silences whose matchers match the rule and entity', () => {
    const lines = explainRule(input({ silences: [silence({ rule: 'he*', entity: 'KXA' }), { ...silence({ entity: 'KXB' }), id: 'S2' }] }));
    expect(lines.filter((line) => line.startsWith('Silence'))).toEqual(['Silence S1 (rule=he*, entity=KXA): active until 2026-11-21T00:00:00Z: an alert firing now is stored, not sent.']);
  });

  it('judges each unless entry on its own snapshot or the related source\'s latest', () => {
    const related = new Map([['reports' as const, { key: 'venuea/KXA', data: { trust_label: 'Avoid' } }]]);
    expect(explainRule(input({ related }))).toEqual(
      expect.arrayContaining([
        'Unless trust_label in Avoid (on the event\'s latest reports snapshot): holds on reports venuea/KXA (trust_label is Avoid), so an alert firing now is inhibited.',
        'Unless confidence_score < 3 (on its own snapshot): does not hold (confidence_score is 7).',
      ]),
    );
  });
});
