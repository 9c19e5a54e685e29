// API text is data: markup and Slack control sequences in an event's text fields reach the email
// and the Slack message inert, through the whole pipeline.
import { afterEach, describe, expect, it } from 'vitest';
import { deliverStep } from '../helpers/delivery.ts';
import { startPipeline, type Pipeline } from '../helpers/pipeline.ts';
import { mailHeader, mailPart, startSlackApi, startSmtp, type SlackApi, type SmtpReceiver } from '../helpers/receivers.ts';

const RULES = `
channels:
  trading: { type: slack, channel: "#pm-alerts" }
  me: { type: email, to: [analyst@example.com] }
rules:
  - name: edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, abs: true }
    notify: [trading, me]
`;

const EVIL = '<script>alert(1)</script> <img src=x onerror=alert(1)> <!channel>';

let pipeline: Pipeline | undefined;
let slack: SlackApi | undefined;
let smtp: SmtpReceiver | undefined;

afterEach(async () => {
  await pipeline?.close();
  await slack?.close();
  await smtp?.close();
  pipeline = undefined;
  slack = undefined;
  smtp = undefined;
});

describe('injection through the pipeline', () => {
  it('an event whose text holds <script>, onerror= and <!channel> yields an email and a Slack message with none of them live', async () => {
    const api = (slack = await startSlackApi());
    const mail = (smtp = await startSmtp());
    const p = (pipeline = await startPipeline({ rules: RULES, transports: { slack: true, email: true } }));
    await p.poll();
    const [ticker] = p.sandbox.world.eventTickers() as [string];
    p.sandbox.world.updateEvent(ticker, { edge_pp: 4 });
    await p.poll();
    p.sandbox.world.updateEvent(ticker, {
      edge_pp: 14,
      name: `Fed ${EVIL}`,
      key_takeaway: `Takeaway ${EVIL}`,
      executive_summary_richtext: `<p>Summary <b>bold</b></p>${EVIL}<a href="javascript:alert(1)">x</a>`,
      short_answer_richtext: `<p>Short</p>${EVIL}`,
      current_state_summary_richtext: `<p>State</p>${EVIL}`,
    });
    const report = await p.poll();
    expect(report.alerts).toHaveLength(1);
    // The stored alert keeps the API's text as it came: escaping is the renderer's job.
    expect(report.alerts[0]!.current.name).toBe(`Fed ${EVIL}`);

    expect(await deliverStep(p, { slackToken: 'xoxb-injection', slackApiUrl: api.apiUrl, smtpUrl: mail.url })).toEqual({
      delivered: 2,
      retrying: 0,
      dead: 0,
    });

    // Email: the HTML part has no live script, handler, image or javascript: link.
    expect(mail.mails).toHaveLength(1);
    const raw = mail.mails[0]!.raw;
    const html = mailPart(raw, 'text/html');
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<[^>]*\bonerror\s*=/i);
    expect(html).not.toMatch(/<img/i);
    expect(html).not.toMatch(/<!channel/i);
    expect(html).not.toMatch(/<a[^>]*href\s*=\s*["']?\s*javascript:/i);
    // Rich text is shown sanitized, once, not as escaped markup in the change list.
    expect(html).not.toContain('&lt;p&gt;');
    // ... but the text is shown (escaped), and the allowed rich text survives.
    expect(html).toContain('Fed &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('Takeaway &lt;script&gt;');
    expect(html).toContain('<b>bold</b>');
    expect(mailHeader(raw, 'Subject')).toContain('Fed');
    expect(mailPart(raw, 'text/plain')).toContain('Fed <script>alert(1)</script>');

    // Slack: `<!channel>` only ever as `&lt;!channel&gt;`, no markup at all from the API.
    expect(api.calls).toHaveLength(1);
    const call = api.calls[0]!;
    const delivered = `${call.text}\n${JSON.stringify(call.blocks)}`;
    expect(delivered).not.toContain('<!channel>');
    expect(delivered).not.toMatch(/<script|<img|<!/i);
    expect(delivered).toContain('&lt;!channel&gt;');
    expect(call.text).toContain('Takeaway &lt;script&gt;alert(1)&lt;/script&gt;');
    const header = (call.blocks as Array<{ type: string; text?: { text: string } }>)[0]!;
    expect(header.type).toBe('header');
    expect(header.text?.text).not.toContain('<');
  });
});
