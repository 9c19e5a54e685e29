// The console channel as the service wires it: the real sender, the shipped templates or a
// folder of one's own, printing to a captured standard output.
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert } from '../../src/core/types.ts';
import type { Channel, Rule } from '../../src/rules/index.ts';
import { loadTemplates, type DigestMessage, type TemplateSet } from '../../src/render/index.ts';
import { createChannelSender } from '../../src/service/senders.ts';
import { tempDir } from '../helpers/files.ts';
import { TEMPLATES_DIR } from '../helpers/pipeline.ts';
import { appearsAlert, crossesAlert } from '../unit/render-fixtures.ts';

const screen: Channel = { type: 'console', name: 'screen' };

function rule(name: string, template?: string): Rule {
  const base: Rule = { name, source: 'events', trigger: { type: 'new' }, filter: [], notify: ['screen'], severity: 'info', file: 'rules.yaml', line: 1 };
  return template === undefined ? base : { ...base, template };
}

/** Sends through a console channel; returns what it printed. */
async function print(templates: TemplateSet, rules: Rule[], message: { kind: 'alert'; alert: Alert } | { kind: 'digest'; digest: DigestMessage }): Promise<string[]> {
  const lines: string[] = [];
  const send = createChannelSender({ config: { slackToken: undefined, slackApiUrl: undefined, smtpUrl: undefined, emailFrom: 'edgewatch@localhost' }, templates, rules, out: (line) => lines.push(line) });
  expect(await send(screen, message)).toEqual({ ok: true });
  return lines;
}

let shipped: TemplateSet;
let own: string;
let mine: TemplateSet;

beforeAll(async () => {
  shipped = await loadTemplates(TEMPLATES_DIR);
  own = tempDir('edgewatch-console-');
  writeFileSync(path.join(own, 'brief.text.liquid'), '{{ view.severity_icon }} {{ alert.rule }} {{ alert.entity }} | {{ view.title }}\n{% for c in view.changes %}{{ c.text }}{% endfor %}\n');
  writeFileSync(path.join(own, 'brief.digest.text.liquid'), '{% for a in digest.alerts %}DIGEST {{ a.rule }} {{ a.entity }}\n{% endfor %}');
  writeFileSync(path.join(own, 'bare.text.liquid'), '{{ view.summary }}');
  mine = await loadTemplates(own);
});

afterAll(() => rmSync(own, { recursive: true, force: true }));

describe('console channel', () => {
  it('prints the default text template: one line per alert naming severity, rule, entity and summary', async () => {
    expect(await print(shipped, [rule(crossesAlert.rule)], { kind: 'alert', alert: crossesAlert })).toEqual([
      '[warning] politics-edge-over-10 KXFED-25DEC: Fed decision December: edge +12.3 pp crossed above 10 pp',
    ]);
    const digest: DigestMessage = { id: 'd', rule: 'kpi-actuals', alerts: [appearsAlert, appearsAlert], created_at: '2026-11-21T18:00:00Z' };
    expect(await print(shipped, [rule('kpi-actuals')], { kind: 'digest', digest })).toEqual([
      '[info] kpi-actuals netflix-subs-q3: Netflix Paid subscribers Q3 2026: actual 305.1M',
      '[info] kpi-actuals netflix-subs-q3: Netflix Paid subscribers Q3 2026: actual 305.1M',
    ]);
  });

  it("prints a rule's own text template on one line, and its own digest template", async () => {
    const rules = [rule(crossesAlert.rule, 'brief')];
    expect(await print(mine, rules, { kind: 'alert', alert: crossesAlert })).toEqual([
      '⚠️ politics-edge-over-10 KXFED-25DEC | Fed decision December Edge: +8.1 pp → +12.3 pp (+4.2 pp)',
    ]);
    const digest: DigestMessage = { id: 'd', rule: crossesAlert.rule, alerts: [crossesAlert, { ...crossesAlert, entity: 'KXCPI-25NOV' }], created_at: '2026-11-21T18:00:00Z' };
    expect(await print(mine, rules, { kind: 'digest', digest })).toEqual([
      'DIGEST politics-edge-over-10 KXFED-25DEC',
      'DIGEST politics-edge-over-10 KXCPI-25NOV',
    ]);
    // Rules without a template of their own keep the default.
    expect(await print(mine, [rule(crossesAlert.rule)], { kind: 'alert', alert: crossesAlert })).toEqual([
      '[warning] politics-edge-over-10 KXFED-25DEC: Fed decision December: edge +12.3 pp crossed above 10 pp',
    ]);
  });

  it('names the rule and the entity when the template does not', async () => {
    expect(await print(mine, [rule(crossesAlert.rule, 'bare')], { kind: 'alert', alert: crossesAlert })).toEqual([
      'politics-edge-over-10 KXFED-25DEC: Fed decision December: edge +12.3 pp crossed above 10 pp',
    ]);
  });

  it('prints API text without escape sequences or control characters, on one line', async () => {
    const hostile: Alert = {
      ...crossesAlert,
      entity: 'KXFED\x1b[8m-25DEC',
      summary: 'Fed\x1b[2J\x1b[1;1H decision\x1b]0;owned\x07\nFAKE: [critical] other-rule\r\x07\x9b31m done',
    };
    const lines = await print(shipped, [rule(hostile.rule)], { kind: 'alert', alert: hostile });
    expect(lines).toEqual(['[warning] politics-edge-over-10 KXFED-25DEC: Fed decision FAKE: [critical] other-rule  done']);
    expect(lines.join('')).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
  });
});
