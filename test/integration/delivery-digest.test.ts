// A KPI-actuals digest: actuals land across polls, wait in their batch (status `digest`), and go as
// one email on `digest --flush` (the real command line) or when the cron time comes.
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { escapeHtml, loadTemplates } from '../../src/render/index.ts';
import { listAlerts } from '../../src/store/index.ts';
import { runCli } from '../helpers/cli.ts';
import { deliverStep, later } from '../helpers/delivery.ts';
import { tempDir } from '../helpers/files.ts';
import { startPipeline, TEMPLATES_DIR, type Pipeline } from '../helpers/pipeline.ts';
import { mailHeader, mailPart, startSmtp, type SmtpReceiver } from '../helpers/receivers.ts';

const RULES = `
channels:
  analyst:
    type: email
    to: [analyst@example.com]
rules:
  - name: kpi-actuals
    source: kpis
    trigger: { type: appears, field: actual }
    notify: [analyst]
    digest: { cron: "0 18 * * *", timezone: UTC }
`;

let pipeline: Pipeline | undefined;
let smtp: SmtpReceiver | undefined;

afterEach(async () => {
  await pipeline?.close();
  await smtp?.close();
  pipeline = undefined;
  smtp = undefined;
});

interface KpiValue {
  formatted: string;
}

/** Baseline with two KPIs settled and waiting for their actual, then both actuals landed, one per poll. */
async function twoActuals(p: Pipeline, transports: { smtpUrl: string }): Promise<string[]> {
  const ids = p.sandbox.world.kpiIds().slice(0, 2);
  for (const id of ids) p.sandbox.world.settleKpi(id);
  await p.poll();
  for (const [i, id] of ids.entries()) {
    p.sandbox.advance(5);
    p.sandbox.world.landActual(id, 1000 + i * 250);
    const report = await p.poll();
    expect(report.alerts.map((a) => [a.rule, a.entity])).toEqual([['kpi-actuals', id]]);
    // The polls' delivery pass (at the sandbox's time, before 18:00 UTC) sends nothing.
    expect(await deliverStep(p, transports, { now: p.sandbox.now(), digests: 'due' })).toEqual({ delivered: 0, retrying: 0, dead: 0 });
  }
  return ids;
}

describe('KPI-actuals digest', () => {
  it('sends nothing from the polls, one email naming both companies on digest --flush, nothing on a second flush', { timeout: 90_000 }, async () => {
    const mail = (smtp = await startSmtp());
    const p = (pipeline = await startPipeline({ rules: RULES, sandbox: { kpis: 10 }, transports: { slack: false, email: true } }));
    const ids = await twoActuals(p, { smtpUrl: mail.url });
    expect(mail.mails).toHaveLength(0);

    // While waiting, the alerts show their deliveries as `digest`.
    const waiting = await listAlerts(p.store, 10);
    expect(waiting.map((a) => a.entity).sort()).toEqual([...ids].sort());
    for (const alert of waiting) expect(alert.deliveries).toEqual([{ channel: 'analyst', status: 'digest', attempts: 0, last_error: null }]);

    const env = {
      EDGEWATCH_DB: p.dbPath,
      EDGEWATCH_RULES: path.join(p.dir, 'rules'),
      EDGEWATCH_TEMPLATES: TEMPLATES_DIR,
      SMTP_URL: mail.url,
      EMAIL_FROM: 'edgewatch@alerts.example.com',
    };
    const flush = await runCli(['digest', '--flush'], env);
    expect(flush.stderr).toBe('');
    expect(flush.code).toBe(0);
    expect(mail.mails).toHaveLength(1);

    const [message] = mail.mails;
    expect(message!.to).toEqual(['analyst@example.com']);
    expect(mailHeader(message!.raw, 'Subject')).toBe('[digest] kpi-actuals: 2 alerts');
    const html = mailPart(message!.raw, 'text/html');
    const text = mailPart(message!.raw, 'text/plain');
    for (const alert of p.storedAlerts()) {
      const current = alert.current as { company_name: string; actual: KpiValue; market_implied: KpiValue; octagon_estimate_value: KpiValue };
      for (const value of [current.company_name, current.actual.formatted, current.market_implied.formatted, current.octagon_estimate_value.formatted]) {
        expect(text).toContain(value);
        expect(html).toContain(escapeHtml(value));
      }
      expect(text).toContain(
        `actual ${current.actual.formatted} vs market-implied ${current.market_implied.formatted} vs model ${current.octagon_estimate_value.formatted}`,
      );
    }

    // After the flush the alerts show the batch's outcome.
    const listed = await runCli(['alerts', '--json'], { EDGEWATCH_DB: p.dbPath });
    expect(listed.code).toBe(0);
    const alerts = JSON.parse(listed.stdout) as Array<{ deliveries: unknown[] }>;
    expect(alerts).toHaveLength(2);
    for (const alert of alerts) expect(alert.deliveries).toEqual([{ channel: 'analyst', status: 'delivered', attempts: 1, last_error: null }]);

    const again = await runCli(['digest', '--flush'], env);
    expect(again.code).toBe(0);
    expect(mail.mails).toHaveLength(1);
    expect(p.sql.prepare('SELECT count(*) AS n FROM digests').get()).toEqual({ n: 1 });
  });

  it("without a flush, the batch goes at its cron time, once, through the rule's own digest template", async () => {
    const mail = (smtp = await startSmtp());
    // A templates folder with the shipped defaults and a rule template `kpi` with a digest subject.
    const templatesDir = path.join(tempDir('edgewatch-templates-'), 'templates');
    cpSync(TEMPLATES_DIR, templatesDir, { recursive: true });
    writeFileSync(path.join(templatesDir, 'kpi.email_subject.liquid'), 'KPI actual: {{ view.title }}');
    writeFileSync(path.join(templatesDir, 'kpi.digest.email_subject.liquid'), 'KPI actuals today: {{ view.count }}');
    const templates = await loadTemplates(templatesDir);
    try {
      const p = (pipeline = await startPipeline({
        rules: RULES.replace('    digest:', '    template: kpi\n    digest:'),
        sandbox: { kpis: 10 },
        transports: { slack: false, email: true },
        templates: templates.names(),
      }));
      expect(p.ruleSet.rules[0]?.template).toBe('kpi');
      const transports = { smtpUrl: mail.url };
      await twoActuals(p, transports);
      const sixPm = new Date(`${p.sandbox.now().toISOString().slice(0, 10)}T18:00:00Z`);
      expect(await deliverStep(p, transports, { now: later(sixPm, -1_000), digests: 'due', templates })).toEqual({ delivered: 0, retrying: 0, dead: 0 });
      expect(mail.mails).toHaveLength(0);
      expect(await deliverStep(p, transports, { now: sixPm, digests: 'due', templates })).toEqual({ delivered: 1, retrying: 0, dead: 0 });
      expect(await deliverStep(p, transports, { now: later(sixPm, 86_400_000), digests: 'due', templates })).toEqual({ delivered: 0, retrying: 0, dead: 0 });
      expect(mail.mails).toHaveLength(1);
      expect(mailHeader(mail.mails[0]!.raw, 'Subject')).toBe('KPI actuals today: 2');
      // The parts the rule's template does not override come from the defaults.
      expect(mailPart(mail.mails[0]!.raw, 'text/plain')).toMatch(/^Digest kpi-actuals: 2 alerts/);
      // Its alerts show the batch's outcome.
      expect((await listAlerts(p.store, 10)).flatMap((a) => a.deliveries.map((d) => d.status))).toEqual(['delivered', 'delivered']);
    } finally {
      rmSync(path.dirname(templatesDir), { recursive: true, force: true });
    }
  });
});
