import { fileURLToPath } from 'node:url';
import type { SMTPServerOptions } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmailNotifier, type EmailMessage } from '../../src/notify/index.ts';
import { loadTemplates, renderEmail, type TemplateSet } from '../../src/render/index.ts';
import { mailHeader, mailPart, startSmtp, startStalledSmtp, type SmtpReceiver } from '../helpers/receivers.ts';
import { crossesAlert, evilAlert } from '../unit/render-fixtures.ts';

const set: TemplateSet = await loadTemplates(fileURLToPath(new URL('../../templates', import.meta.url)));
const PASSWORD = 'hunter2-very-secret';

let server: SmtpReceiver | undefined;

async function smtp(options: SMTPServerOptions = {}): Promise<SmtpReceiver> {
  server = await startSmtp(options);
  return server;
}

afterEach(async () => {
  await server?.close();
  server = undefined;
});

function message(alert = evilAlert): EmailMessage {
  return { id: alert.id, to: ['analyst@example.com'], ...renderEmail(set, alert) };
}

describe('email notifier', () => {
  it('delivers subject, text and HTML parts, escaped, with a Message-ID stable across resends', async () => {
    const { url, mails } = await smtp();
    const notifier = createEmailNotifier({ smtpUrl: url, from: 'edgewatch@alerts.example.com' });
    const mail = message();
    expect(await notifier.send(mail)).toEqual({ ok: true });
    expect(await notifier.send(mail)).toEqual({ ok: true });
    expect(mails).toHaveLength(2);
    const [first = '', second = ''] = mails.map((mail) => mail.raw);

    expect(mailHeader(first, 'Subject')).toBe(mail.subject);
    expect(mailHeader(first, 'X-Edgewatch-Alert-Id')).toBe(evilAlert.id);
    const messageId = mailHeader(first, 'Message-ID');
    expect(messageId).toBe(`<${evilAlert.id}.edgewatch@alerts.example.com>`);
    expect(mailHeader(second, 'Message-ID')).toBe(messageId);

    const html = mailPart(first, 'text/html');
    const text = mailPart(first, 'text/plain');
    expect(html).toContain('Fed &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toMatch(/<script|<img|<iframe|<[^>]*\son\w+=/i);
    expect(html).toContain('<b>bold</b>');
    expect(text).toContain('Edge: +8.1 pp -> +12.3 pp (+4.2 pp)');
    expect(text).toContain('independent signal: recalibrated, grade A');
  });

  it('a 4xx reply is retryable', async () => {
    const { url } = await smtp({
      onRcptTo(_address, _session, callback) {
        callback(Object.assign(new Error('mailbox busy, try later'), { responseCode: 451 }));
      },
    });
    const outcome = await createEmailNotifier({ smtpUrl: url, from: 'edgewatch@localhost' }).send(message(crossesAlert));
    expect(outcome).toMatchObject({ ok: false, retryable: true });
    expect(outcome.ok ? '' : outcome.error).toMatch(/^smtp 451/);
  });

  it('a 5xx reply is permanent', async () => {
    const { url } = await smtp({
      onRcptTo(_address, _session, callback) {
        callback(Object.assign(new Error('no such user'), { responseCode: 550 }));
      },
    });
    const outcome = await createEmailNotifier({ smtpUrl: url, from: 'edgewatch@localhost' }).send(message(crossesAlert));
    expect(outcome).toMatchObject({ ok: false, retryable: false });
    expect(outcome.ok ? '' : outcome.error).toMatch(/^smtp 550/);
  });

  it('a refused login is permanent and never shows the credentials', async () => {
    const { url } = await smtp({
      authOptional: false,
      allowInsecureAuth: true,
      onAuth(_auth, _session, callback) {
        callback(new Error('Invalid username or password'));
      },
    });
    const smtpUrl = url.replace('smtp://', `smtp://alerts%40example.com:${PASSWORD}@`);
    const outcome = await createEmailNotifier({ smtpUrl, from: 'edgewatch@localhost' }).send(message(crossesAlert));
    expect(outcome).toMatchObject({ ok: false, retryable: false });
    expect(JSON.stringify(outcome)).not.toContain(PASSWORD);
    expect(JSON.stringify(outcome)).not.toContain('alerts@example.com');
  });

  it('a server that greets and then goes silent fails the attempt, retryable, within a minute', { timeout: 90_000 }, async () => {
    const stalled = await startStalledSmtp();
    try {
      const started = Date.now();
      const outcome = await createEmailNotifier({ smtpUrl: stalled.url, from: 'edgewatch@localhost' }).send(message(crossesAlert));
      // nodemailer's own socket timeout is 10 minutes; ours is tens of seconds.
      expect(Date.now() - started).toBeLessThan(60_000);
      expect(outcome).toMatchObject({ ok: false, retryable: true });
      expect(outcome.ok ? '' : outcome.error).toMatch(/^smtp ETIMEDOUT: /);
      expect(stalled.connections()).toBe(1);
    } finally {
      await stalled.close();
    }
  });

  it('a refused connection is retryable', async () => {
    const { url } = await smtp();
    await server?.close();
    server = undefined;
    const outcome = await createEmailNotifier({ smtpUrl: url, from: 'edgewatch@localhost' }).send(message(crossesAlert));
    expect(outcome).toMatchObject({ ok: false, retryable: true });
  });
});
