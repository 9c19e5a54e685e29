import { describe, expect, it } from 'vitest';
import { createConsoleNotifier } from '../../src/notify/index.ts';
import { appearsAlert, crossesAlert } from '../unit/render-fixtures.ts';

describe('console notifier', () => {
  it('writes one line per alert naming severity, rule, entity and summary', async () => {
    const lines: string[] = [];
    const notifier = createConsoleNotifier({ write: (line) => lines.push(line) });
    expect(await notifier.send(crossesAlert)).toEqual({ ok: true });
    expect(await notifier.send({ id: 'd', rule: 'kpi-actuals', alerts: [appearsAlert, appearsAlert], created_at: '2026-11-21T18:00:00Z' })).toEqual({ ok: true });
    expect(lines).toEqual([
      '[warning] politics-edge-over-10 KXFED-25DEC: Fed decision December: edge +12.3 pp crossed above 10 pp',
      '[info] kpi-actuals netflix-subs-q3: Netflix Paid subscribers Q3 2026: actual 305.1M',
      '[info] kpi-actuals netflix-subs-q3: Netflix Paid subscribers Q3 2026: actual 305.1M',
    ]);
  });

  it('keeps a multi-line summary on one line', async () => {
    const lines: string[] = [];
    await createConsoleNotifier({ write: (line) => lines.push(line) }).send({ ...crossesAlert, summary: 'a\nb' });
    expect(lines).toEqual(['[warning] politics-edge-over-10 KXFED-25DEC: a b']);
  });
});
