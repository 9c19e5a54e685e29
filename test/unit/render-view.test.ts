import { describe, expect, it } from 'vitest';
import type { Change, Snapshot, SourceName } from '../../src/core/types.ts';
import { alertView } from '../../src/render/index.ts';
import { evaluate, RuleSchema, type Rule, type Trigger } from '../../src/rules/index.ts';
import { crossesAlert } from './render-fixtures.ts';

const withChanges = (changes: Change[]) => alertView({ ...crossesAlert, changes }).changes.map((c) => c.field);

describe('alertView changes: what a reader sees', () => {
  it.each<[string, Change[], string[]]>([
    ['the trigger field alone', [{ field: 'edge_pp', from: 8.1, to: 12.3 }], ['edge_pp']],
    [
      'other changed fields after it',
      [
        { field: 'edge_pp', from: 8.1, to: 12.3 },
        { field: 'model_probability', from: 55, to: 62.3 },
      ],
      ['edge_pp', 'model_probability'],
    ],
    [
      'no HTML fields, no bookkeeping, nothing that reads the same',
      [
        { field: 'edge_pp', from: 8.1, to: 12.3 },
        { field: 'executive_summary_richtext', from: '<p>a</p>', to: '<p>b</p>' },
        { field: 'history_id', from: 1, to: 2 },
        { field: 'captured_at', from: '2026-11-20T12:00:00Z', to: '2026-11-20T12:05:00Z' },
        { field: 'outcome_probabilities', from: [1, 2], to: [3, 4] },
        { field: 'key_takeaway', from: 'old view', to: 'new view' },
      ],
      ['edge_pp', 'key_takeaway'],
    ],
    [
      'the trigger field even when it reads the same (a sub-display change)',
      [{ field: 'edge_pp', from: 12.31, to: 12.34 }],
      ['edge_pp'],
    ],
    ['nothing when nothing changed', [], []],
    [
      'at most six lines',
      [{ field: 'edge_pp', from: 8.1, to: 12.3 }, ...'abcdefgh'.split('').map((f, i) => ({ field: `f_${f}`, from: i, to: i + 1 }))],
      ['edge_pp', 'f_a', 'f_b', 'f_c', 'f_d', 'f_e'],
    ],
  ])('%s', (_name, changes, fields) => {
    expect(withChanges(changes)).toEqual(fields);
  });

  it('the alert itself (and so the webhook body) keeps every change', () => {
    const changes: Change[] = [
      { field: 'edge_pp', from: 8.1, to: 12.3 },
      { field: 'history_id', from: 1, to: 2 },
    ];
    const alert = { ...crossesAlert, changes };
    alertView(alert);
    expect(alert.changes).toEqual(changes);
  });
});

describe('the headline names the entity once', () => {
  const NOW = new Date('2026-11-21T18:00:00Z');
  // The summary as the rules make it, then the view of the alert it is stored in.
  function viewOf(source: SourceName, trigger: Trigger, prev: Snapshot, curr: Snapshot, entity: string) {
    const rule: Rule = { ...RuleSchema.parse({ name: 'r', source, trigger, notify: ['screen'] }), file: 'r.yaml', line: 1 };
    const { summary, changes } = evaluate(rule, prev, curr, undefined, NOW);
    return alertView({ ...crossesAlert, source, entity, trigger: trigger.type, summary, changes, current: curr });
  }

  it('a KPI actual: company, KPI and period, then what happened', () => {
    const kpi = { id: 'acme-deliveries-q3', company_name: 'Acme', company_ticker: 'ACME', kpi_name: 'Deliveries', period_label: 'Q3 2026' };
    const actual = { value: 1_200_000, unit: 'vehicles', formatted: '1.2M' };
    const view = viewOf('kpis', { type: 'appears', field: 'actual' }, { ...kpi, actual: null }, { ...kpi, actual }, kpi.id);
    expect(view.headline).toBe('Acme (ACME) — Deliveries, Q3 2026: actual 1.2M appeared');
    expect(view.title).toBe('Acme (ACME) — Deliveries, Q3 2026');
  });

  it('a run: the message title, then what happened', () => {
    const run = { run_id: 'r1', venue: 'venuea', event_ticker: 'KXFED-25DEC' };
    const trigger: Trigger = { type: 'changes', field: 'status' };
    const view = viewOf('runs', trigger, { ...run, status: 'processing' }, { ...run, status: 'completed' }, 'r1');
    expect(view.headline).toBe('Report generation completed: KXFED-25DEC: status processing -> completed');
  });

  it('an event: its name once', () => {
    const event = { event_ticker: 'KXFED-25DEC', name: 'Fed decision December' };
    const trigger: Trigger = { type: 'crosses', field: 'edge_pp', above: 10, abs: false, rearm: 0 };
    const view = viewOf('events', trigger, { ...event, edge_pp: 8.1 }, { ...event, edge_pp: 12.3 }, 'KXFED-25DEC');
    expect(view.headline).toBe('Fed decision December: edge +12.3 pp crossed above 10 pp');
  });
});
