import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Alert } from '../../src/core/types.ts';
import {
  TEMPLATE_KINDS,
  compileTemplates,
  describeRenderError,
  loadTemplates,
  readTemplates,
  renderAlert,
  renderDigest,
  renderEmail,
  renderSlackGroup,
  renderSlackMessage,
  webhookBody,
  webhookDigestBody,
  type DigestMessage,
  type TemplateSet,
} from '../../src/render/index.ts';
import { EVIL, addedAlert, alertsByTrigger, appearsAlert, changesAlert, crossesAlert, dropsAlert, evilAlert, marketAlert, marketSearchAlerts, rankingAlert } from './render-fixtures.ts';
import { tempDir } from '../helpers/files.ts';

const templatesDir = fileURLToPath(new URL('../../templates', import.meta.url));
const set: TemplateSet = await loadTemplates(templatesDir);

function compile(files: Record<string, string>): TemplateSet {
  const result = compileTemplates('mem', files);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.set;
}

const digest: DigestMessage = {
  id: '01JD400000000000000000DIGE',
  rule: 'kpi-actuals',
  alerts: [appearsAlert, { ...appearsAlert, id: '01JD3Z9K4M6X0T2Q8B7N5C1VZZ', entity: 'tsla-deliveries-q3', current: { ...appearsAlert.current, company_name: 'Tesla', company_ticker: 'TSLA', kpi_name: 'Deliveries', actual: { value: 497, unit: 'K', formatted: '497K' }, detail: undefined } }],
  created_at: '2026-11-21T18:00:00Z',
};

describe('default templates', () => {
  const cases = Object.entries(alertsByTrigger).flatMap(([trigger, alert]) => TEMPLATE_KINDS.map((kind) => ({ trigger, kind, alert })));

  it.each(cases)('$trigger renders as $kind', ({ alert, kind }) => {
    const out = renderAlert(set, alert, kind);
    expect(out.length).toBeGreaterThan(0);
    if (kind === 'text') expect(out).toBe(`[${alert.severity}] ${alert.rule} ${alert.entity}: ${alert.summary}`);
  });

  it.each(TEMPLATE_KINDS)('a digest renders as %s', (kind) => {
    const out = renderDigest(set, digest, kind);
    expect(out).toContain(kind === 'email_subject' ? '2 alerts' : 'Netflix');
  });

  it('an edge alert shows the change with units, model vs market, confidence, signal and close time', () => {
    const text = renderAlert(set, crossesAlert, 'email_text');
    expect(text).toContain('Fed decision December');
    expect(text).toContain('Edge: +8.1 pp -> +12.3 pp (+4.2 pp)');
    expect(text).toContain('62.3% vs 50.0% (edge +12.3 pp)');
    expect(text).toContain('Confidence: 7/10');
    expect(text).toContain('independent signal: recalibrated, grade A');
    expect(text).toContain('2026-12-10 19:00 UTC');
    expect(renderAlert(set, crossesAlert, 'slack')).toContain('• Edge: +8.1 pp → +12.3 pp (+4.2 pp)');
  });

  it('shows a weaker probability source as such', () => {
    const weak: Alert = {
      ...crossesAlert,
      current: { ...crossesAlert.current, outcome_probabilities: [{ outcome_name: 'Cut', model_probability_source: 'market_baseline', evidence_grade: 'C' }] },
    };
    expect(renderAlert(set, weak, 'email_text')).toContain('probability source: market baseline, grade C');
  });

  it('a KPI actual shows actual, market-implied, model and surprise', () => {
    const text = renderAlert(set, appearsAlert, 'email_text');
    for (const part of ['Netflix (NFLX)', 'Paid subscribers', 'Actual: 305.1M', 'Market-implied: 301.2M', 'Model: 303.5M', 'Surprise: +3.9M (+1.3%)', 'company report, verified']) {
      expect(text).toContain(part);
    }
  });

  it('a KPI actual without the detail renders without a surprise', () => {
    const bare: Alert = { ...appearsAlert, current: { ...appearsAlert.current, detail: undefined, actual_source: null } };
    const text = renderAlert(set, bare, 'email_text');
    expect(text).toContain('Actual: 305.1M');
    expect(text).not.toContain('Surprise');
  });

  it('a trust drop shows label and score, old to new', () => {
    expect(renderAlert(set, dropsAlert, 'email_text')).toContain('Trust: Good (72) -> Caution (55)');
    expect(renderAlert(set, dropsAlert, 'slack')).toContain('Trust: Good (72) → Caution (55)');
  });

  it('a failed run mentions the refund of the 3 credits', () => {
    for (const kind of ['slack', 'email_text', 'email_html'] as const) {
      expect(renderAlert(set, changesAlert, kind)).toContain('3 credits are refunded');
    }
    expect(renderAlert(set, changesAlert, 'email_subject')).toContain('Report generation failed: KXFED-25DEC');
  });

  it('a KPI digest lists every alert: company, KPI, actual vs market-implied vs model, surprise', () => {
    const text = renderDigest(set, digest, 'email_text');
    expect(text).toContain('Netflix (NFLX) — Paid subscribers, Q3 2026: actual 305.1M vs market-implied 301.2M vs model 303.5M, surprise +3.9M (+1.3%)');
    expect(text).toContain('Tesla (TSLA) — Deliveries, Q3 2026: actual 497K vs market-implied 301.2M vs model 303.5M');
    const email = renderEmail(set, digest);
    expect(email.subject).toBe('[digest] kpi-actuals: 2 alerts');
    expect(email.html).toContain('Tesla (TSLA)');
  });
});

describe('default templates for the market-search sources', () => {
  const cases = marketSearchAlerts.flatMap((alert) => TEMPLATE_KINDS.map((kind) => ({ source: alert.source, kind, alert })));

  it.each(cases)('$source renders as $kind, naming its title', ({ alert, kind }) => {
    const out = renderAlert(set, alert, kind);
    if (kind === 'text') expect(out).toBe(`[${alert.severity}] ${alert.rule} ${alert.entity}: ${alert.summary}`);
    else expect(out).toContain(alert.source === 'baskets' ? 'rates-hedge' : String(alert.current.title));
  });

  it("a basket's new warning reads as one line in every channel, its drawdown and return as percents", () => {
    expect(renderAlert(set, addedAlert, 'email_subject')).toBe('[WARNING] rates-hedge: new warning: two legs close within 7 days');
    expect(renderAlert(set, addedAlert, 'slack')).toContain('• Warnings added: two legs close within 7 days');
    const text = renderAlert(set, addedAlert, 'email_text');
    for (const part of ['Warnings added: two legs close within 7 days', 'Calendar clashes: 0 -> 1', 'Max drawdown: -12.3%', 'Return (3m): 4.1%', 'Sharpe: 1.23', 'Max pairwise correlation: 0.71', 'Largest leg: 4.0%']) {
      expect(text).toContain(part);
    }
    expect(renderAlert(set, addedAlert, 'email_html')).toContain('added: <strong>two legs close within 7 days</strong>');
  });

  it("a market's prices show in cents, a ranking's rank with its number", () => {
    const market = renderAlert(set, marketAlert, 'email_text');
    expect(market).toContain('Last price: 42¢ -> 55¢ (+13¢)');
    expect(market).toContain('Prices: last 55¢ · yes 54¢/56.5¢ · no 43.5¢/46¢');
    expect(renderAlert(set, marketAlert, 'slack')).toContain('• Last price: 42¢ → 55¢ (+13¢)');
    const ranking = renderAlert(set, rankingAlert, 'email_text');
    expect(ranking).toContain('Rank: #14 -> #7');
    expect(ranking).toContain('Rank: #7');
    expect(ranking).toContain('62.3% vs 50.0% (edge +12.3 pp)');
  });
});

describe('escaping API text', () => {
  it('email HTML has no live markup from the API', () => {
    const { html, subject, text } = renderEmail(set, evilAlert);
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<img/i);
    expect(html).not.toMatch(/<iframe|<style>/i);
    // `onerror=` may remain as escaped text, never inside a tag.
    expect(html).not.toMatch(/<[^>]*\son\w+=/i);
    expect(html).not.toMatch(/javascript:/i);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    // Sanitized rich text keeps its allowed markup.
    expect(html).toContain('<b>bold</b>');
    expect(subject).not.toContain('\n');
    expect(text).toContain('Fed <script>');
  });

  it('Slack text and blocks carry <!channel> only as &lt;!channel&gt;', () => {
    const { text, blocks } = renderSlackMessage(set, evilAlert);
    const all = `${text}\n${JSON.stringify(blocks)}`;
    expect(all).not.toContain('<!channel>');
    expect(all).not.toContain('<script');
    expect(all).toContain('&lt;!channel&gt;');
    expect(renderSlackGroup(set, [evilAlert, crossesAlert]).text).not.toContain('<!channel>');
    expect(JSON.stringify(renderSlackGroup(set, [evilAlert]).blocks)).not.toContain('<!channel>');
    const d = renderDigest(set, { ...digest, alerts: [evilAlert] }, 'slack');
    expect(d).not.toContain('<!channel>');
    expect(d).toContain('&lt;!channel&gt;');
  });

  it('in Slack, quoted API text stays quoted and its *bold*, _italics_, ~strike~ and `code` do not format', () => {
    const sneaky: Alert = {
      ...crossesAlert,
      summary: 'Fed *pump* it\n> fake quote',
      current: { ...crossesAlert.current, key_takeaway: 'Cut priced too low.\nBUY *now* _really_ ~sure~ `rm`' },
    };
    const { text, blocks } = renderSlackMessage(set, sneaky);
    const quote = text.split('\n').filter((line) => line.includes('Cut priced'));
    // One quoted line holds the whole takeaway; nothing of it escapes the quote.
    expect(quote).toEqual(['> Cut priced too low. BUY *\u200bnow*\u200b _\u200breally_\u200b ~\u200bsure~\u200b ˋrmˋ']);
    expect(text.split('\n').filter((line) => line.includes('BUY'))).toEqual(quote);
    // The template's own bold around the summary still opens and closes; the API's inner ones cannot.
    expect(text).toContain('*Fed *\u200bpump*\u200b it &gt; fake quote*');
    const all = `${text}\n${JSON.stringify(blocks)}\n${renderSlackGroup(set, [sneaky, crossesAlert]).text}\n${renderDigest(set, { ...digest, alerts: [sneaky] }, 'slack')}`;
    // Every formatting character from the API is followed by the zero-width space; no backtick is left.
    expect(all).not.toMatch(/[*_~](pump|now|really|sure)|(pump|now|really|sure)[*_~](?!\u200b)|`/);
    expect(all).toContain('*\u200bpump*\u200b');
    expect(all).not.toMatch(/\n> fake/);
  });

  it('user templates are escaped the same way; safe_html sanitizes, raw text flattens in Slack', () => {
    const custom = compile({
      'x.email_html.liquid': '<h1>{{ view.title }}</h1>{{ alert.current.executive_summary_richtext | safe_html }}',
      'x.slack.liquid': '{{ view.title }} {{ alert.current.executive_summary_richtext | safe_html }}',
      'default/alert.email_html.liquid': 'd',
      'default/alert.slack.liquid': 'd',
    });
    const html = renderAlert(custom, evilAlert, 'email_html', 'x');
    expect(html).toMatch(/^<h1>Fed &lt;script&gt;/);
    expect(html).not.toMatch(/<script|<[^>]*\son\w+=|<iframe/i);
    const slack = renderAlert(custom, evilAlert, 'slack', 'x');
    expect(slack).not.toMatch(/<!channel>|<script|<b>/);
  });
});

describe('template resolution and safety', () => {
  const files = {
    'edge.slack.liquid': 'EDGE {{ alert.entity }}',
    'default/crosses.slack.liquid': 'CROSSES {{ alert.entity }}',
    'default/alert.slack.liquid': 'ALERT {{ alert.entity }}',
    'default/alert.text.liquid': 'TEXT',
    'default/digest.slack.liquid': 'DIGEST {{ view.count }}',
  };
  const mem = compile(files);

  it('names come from top-level <name>.<kind>.liquid files', () => {
    expect(mem.names()).toEqual(new Set(['edge']));
    expect(set.names()).toEqual(new Set());
  });

  it('a named template, then the trigger default, then the alert default', () => {
    expect(renderAlert(mem, crossesAlert, 'slack', 'edge')).toBe('EDGE KXFED-25DEC');
    expect(renderAlert(mem, crossesAlert, 'slack')).toBe('CROSSES KXFED-25DEC');
    expect(renderAlert(mem, dropsAlert, 'slack')).toBe('ALERT venuea/KXFED-25DEC');
    expect(renderAlert(mem, crossesAlert, 'text', 'edge')).toBe('TEXT');
    expect(renderDigest(mem, digest, 'slack')).toBe('DIGEST 2');
  });

  it('reports parse errors and unknown filters with their position', () => {
    const result = compileTemplates('tpl', { 'bad.slack.liquid': 'ok\n{{ alert.id | no_such_filter }}', 'worse.text.liquid': '{% if %}' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.map((p) => `${p.file}:${p.line}`).sort()).toEqual(['tpl/bad.slack.liquid:2', 'tpl/worse.text.liquid:1']);
  });

  it('templates cannot reach the disk or object internals', () => {
    expect(compileTemplates('mem', { 'a.text.liquid': "x\n {% include '../../../../etc/passwd' %}" })).toEqual({
      ok: false,
      problems: [{ file: 'mem/a.text.liquid', line: 2, column: 2, message: 'no template "../../../../etc/passwd" to include in mem' }],
    });
    const sneaky = compile({
      // A name computed at render time, on a branch the sample alert does not take.
      'a.text.liquid': "{% if alert.rule != 'sample-rule' %}{% assign f = '../../../../etc/passwd' %}{% include f %}{% endif %}",
      'b.text.liquid': '[{{ alert.constructor.name }}{{ alert.__proto__ }}{{ alert.changes.constructor }}]',
      'default/alert.text.liquid': 'd',
    });
    expect(() => renderAlert(sneaky, crossesAlert, 'text', 'a')).toThrow(/ENOENT/);
    expect(renderAlert(sneaky, crossesAlert, 'text', 'b')).toBe('[]');
  });
});

// Nested loops that keep the CPU busy for seconds unless the render's time limit stops them.
const BURN = '{% for i in (1..3000) %}{% for j in (1..3000) %}x{% endfor %}{% endfor %}';

describe('template limits and validation', () => {
  it('a render that loops for long fails within a fraction of a second, naming the template and place', () => {
    // Heavy only on real alerts (not on the sample that compiling renders), so it compiles.
    const heavy = compile({ 'burn.text.liquid': `{% if alert.rule != 'sample-rule' %}\n${BURN}{% endif %}`, 'default/alert.text.liquid': 'd' });
    const started = performance.now();
    let error: unknown;
    try {
      renderAlert(heavy, crossesAlert, 'text', 'burn');
    } catch (caught) {
      error = caught;
    }
    // Before the limit was lowered, this render held the process for about 2 s.
    expect(performance.now() - started).toBeLessThan(1_000);
    // Where the limit strikes within the loops depends on timing: the line is certain, the column not.
    expect(describeRenderError(heavy, error)).toMatch(/^mem\/burn\.text\.liquid:2:\d+: template render limit exceeded$/);
  });

  it('a limit that strikes before the first tag ran still names the template', () => {
    const plain = compile({ 'a.text.liquid': 'hello {{ alert.rule }}' });
    let error: unknown;
    try {
      plain.render(plain.get('a.text.liquid')!, { alert: crossesAlert }, 'plain', 0);
    } catch (caught) {
      error = caught;
    }
    expect(describeRenderError(plain, error)).toBe('mem/a.text.liquid:1:1: template render limit exceeded');
  });

  it('renders every message template against a sample: one that runs too long is reported at file:line:column', () => {
    expect(compileTemplates('tpl', { 'burn.slack.liquid': `Hi\n${BURN}`, 'ok.slack.liquid': '{{ view.title }}' })).toEqual({
      ok: false,
      problems: [{ file: 'tpl/burn.slack.liquid', line: 2, column: expect.any(Number), message: 'template render limit exceeded' }],
    });
    const digest = compileTemplates('tpl', { 'x.digest.email_text.liquid': `{% for a in digest.alerts %}${BURN}{% endfor %}` });
    expect(digest.ok ? [] : digest.problems.map((p) => `${p.file}:${p.line}: ${p.message}`)).toEqual(['tpl/x.digest.email_text.liquid:1: template render limit exceeded']);
  });

  it('rejects an include or render of a template that does not exist, where it is written, taken branch or not', () => {
    const result = compileTemplates('tpl', {
      'inc.text.liquid': "{% if alert.rule == 'nope' %}\n  {% render 'nowhere' %}{% endif %}",
      'x.digest.slack.liquid': "{% for a in digest.alerts %}{% include 'part' %}{% endfor %}",
      'part.liquid': "{{ a.rule }} {% include 'gone' %}",
    });
    expect(result).toEqual({
      ok: false,
      problems: [
        { file: 'tpl/inc.text.liquid', line: 2, column: 3, message: 'no template "nowhere" to include in tpl' },
        { file: 'tpl/part.liquid', line: 1, column: 14, message: 'no template "gone" to include in tpl' },
      ],
    });
  });

  it('reports a partial that fails on the sample once, in its own file', () => {
    const result = compileTemplates('tpl', {
      'a.text.liquid': "{% include 'slow' %}",
      'b.slack.liquid': "{% include 'slow' %}",
      'slow.liquid': `\n${BURN}`,
    });
    expect(result).toEqual({ ok: false, problems: [{ file: 'tpl/slow.liquid', line: 2, column: expect.any(Number), message: 'template render limit exceeded' }] });
  });

  it('the shipped templates pass, and render a digest of 2,000 alerts within the limits', () => {
    const alerts = Array.from({ length: 2_000 }, (_, i) => ({ ...crossesAlert, id: `A${i}`, entity: `E${i}` }));
    for (const kind of TEMPLATE_KINDS) expect(renderDigest(set, { ...digest, alerts }, kind).length).toBeGreaterThan(0);
  });
});

describe('slack blocks', () => {
  it('one alert: header, summary section, fields, context', () => {
    const { text, blocks } = renderSlackMessage(set, crossesAlert);
    expect(blocks.map((b) => b.type)).toEqual(['header', 'section', 'section', 'context']);
    expect(text).toContain('edge +12.3 pp crossed above 10 pp');
    expect(JSON.stringify(blocks)).toContain('*Model vs market*');
  });

  it('a storm stays within 50 blocks and says how many more', () => {
    const alerts = Array.from({ length: 120 }, (_, i) => ({ ...crossesAlert, id: `A${i}`, entity: `E${i}` }));
    const { text, blocks } = renderSlackGroup(set, alerts);
    expect(blocks.length).toBeLessThanOrEqual(50);
    expect(JSON.stringify(blocks)).toContain('... and 100 more');
    expect(text).toContain('120 edgewatch alerts');
    expect(renderSlackGroup(set, alerts, 500).blocks.length).toBe(50);
  });
});

describe('webhook bodies', () => {
  it('an alert is exactly the contract', () => {
    const body = webhookBody(crossesAlert);
    const parsed = JSON.parse(body) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(['version', 'type', 'id', 'rule', 'severity', 'source', 'entity', 'trigger', 'fired_at', 'summary', 'changes', 'current', 'explanation']);
    expect(parsed).toMatchObject({ version: 1, type: 'alert', id: crossesAlert.id, changes: [{ field: 'edge_pp', from: 8.1, to: 12.3 }], current: crossesAlert.current });
    expect(webhookBody(crossesAlert)).toBe(body);
  });

  it('a digest is version, type, id, rule and the alert objects', () => {
    const parsed = JSON.parse(webhookDigestBody(digest)) as { alerts: unknown[] } & Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(['version', 'type', 'id', 'rule', 'alerts']);
    expect(parsed).toMatchObject({ version: 1, type: 'digest', id: digest.id, rule: 'kpi-actuals' });
    expect(parsed.alerts).toEqual(digest.alerts.map((a) => JSON.parse(webhookBody(a))));
  });

  it('names the elements an `added` trigger saw added to its list, in its change', () => {
    const parsed = JSON.parse(webhookBody(addedAlert)) as { changes: unknown[] };
    expect(parsed.changes).toEqual([
      { field: 'warnings', from: addedAlert.changes[0]!.from, to: addedAlert.changes[0]!.to, added: ['two legs close within 7 days'] },
      { field: 'calendar_clashes', from: 0, to: 1 },
    ]);
  });

  it('carries API text as data', () => {
    expect((JSON.parse(webhookBody(evilAlert)) as { current: { name: string } }).current.name).toBe(`Fed ${EVIL}`);
  });
});

describe('a templates folder of ones own', () => {
  it('holds only what it changes: the shipped defaults fill in the rest', async () => {
    const own = tempDir('edgewatch-templates-');
    try {
      writeFileSync(join(own, 'edge.text.liquid'), 'EDGE {{ alert.entity }}');
      const mine = await loadTemplates(own);
      const alert = crossesAlert;
      expect(renderAlert(mine, alert, 'text', 'edge')).toBe(`EDGE ${alert.entity}`);
      expect(renderAlert(mine, alert, 'text')).toBe(renderAlert(set, alert, 'text'));
      expect(mine.names().has('edge')).toBe(true);
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it('returns the problems of a folder of ones own as values, positioned in its files', async () => {
    const own = tempDir('edgewatch-templates-');
    try {
      writeFileSync(join(own, 'edge.text.liquid'), 'fine\n  {{ alert.id | no_such_filter }}');
      expect(await readTemplates(own)).toEqual({
        ok: false,
        problems: [{ file: join(own, 'edge.text.liquid'), line: 2, column: 3, message: 'undefined filter: no_such_filter' }],
      });
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it('names a folder that cannot be read', async () => {
    await expect(loadTemplates('/nonexistent/templates')).rejects.toThrow(/templates folder \/nonexistent\/templates/);
  });
});
