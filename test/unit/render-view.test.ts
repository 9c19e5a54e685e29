import { describe, expect, it } from 'vitest';
import type { Change } from '../../src/core/types.ts';
import { alertView } from '../../src/render/index.ts';
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
