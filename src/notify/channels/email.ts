// Email through nodemailer over SMTP.
import nodemailer, { type SendMailOptions } from 'nodemailer';
import type { DeliveryOutcome } from '../../core/types.ts';
import { redact } from '../../core/redact.ts';
import { errorMessage } from '../../core/errors.ts';
import { delivered, failed } from './outcome.ts';
import type { Notifier } from './types.ts';
import { SMTP_TIMEOUTS } from './timeouts.ts';

export interface EmailMessage {
  /** The alert's (or digest's) id: the Message-ID and `X-Edgewatch-Alert-Id`, the same on every resend. */
  id: string;
  to: string[];
  subject: string;
  html: string;
  text: string;
  /** The id of the message this one answers (a resolved alert's): `In-Reply-To` and `References`, so mail clients thread it. */
  inReplyTo?: string;
}

/** The part of a nodemailer transport this adapter uses. */
export interface MailTransport {
  sendMail(mail: SendMailOptions): Promise<unknown>;
}

export interface EmailNotifierOptions {
  /** `smtp://user:pass@host:port` or `smtps://...`. */
  smtpUrl: string;
  from: string;
  transport?: MailTransport;
}


/** A Message-ID that depends only on the id, so a resend is recognisably the same message. */
export function messageIdFor(id: string, from: string): string {
  const domain = /@([A-Za-z0-9.-]+)>?\s*$/.exec(from)?.[1] ?? 'edgewatch';
  return `<${id.replace(/[^A-Za-z0-9._-]/g, '')}.edgewatch@${domain}>`;
}

function secretsOf(smtpUrl: string): string[] {
  try {
    const url = new URL(smtpUrl);
    return [url.password, decodeURIComponent(url.password), url.username, decodeURIComponent(url.username), smtpUrl].filter(
      (s) => s !== '',
    );
  } catch {
    return [smtpUrl];
  }
}

export function smtpOutcome(error: unknown, secrets: string[]): DeliveryOutcome {
  const e = error as { responseCode?: unknown; code?: unknown; response?: unknown };
  const status = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  const code = typeof e.code === 'string' ? e.code : undefined;
  const text = redact(
    status !== undefined && typeof e.response === 'string' ? e.response : errorMessage(error),
    secrets,
  ).replace(/\s+/g, ' ');
  const label = `smtp${status !== undefined ? ` ${status}` : ''}${code !== undefined ? ` ${code}` : ''}`;
  // A permanent (5xx) reply will not change on retry; 4xx replies and connection trouble may.
  const retryable = status === undefined ? code !== 'EENVELOPE' && code !== 'EMESSAGE' : status < 500;
  return failed(retryable, `${label}: ${text}`);
}

export function createEmailNotifier(options: EmailNotifierOptions): Notifier<EmailMessage> {
  const secrets = secretsOf(options.smtpUrl);
  const transport: MailTransport = options.transport ?? nodemailer.createTransport({ url: options.smtpUrl, ...SMTP_TIMEOUTS });
  return {
    async send(message) {
      try {
        await transport.sendMail({
          from: options.from,
          to: message.to,
          subject: message.subject,
          html: message.html,
          text: message.text,
          messageId: messageIdFor(message.id, options.from),
          ...(message.inReplyTo !== undefined
            ? { inReplyTo: messageIdFor(message.inReplyTo, options.from), references: [messageIdFor(message.inReplyTo, options.from)] }
            : {}),
          headers: { 'X-Edgewatch-Alert-Id': message.inReplyTo ?? message.id },
        });
        return delivered;
      } catch (error) {
        return smtpOutcome(error, secrets);
      }
    },
  };
}
