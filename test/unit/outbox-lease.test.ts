import { describe, expect, it } from 'vitest';
import { claimLeaseMs } from '../../src/notify/outbox.ts';
import { SLACK_TIMEOUT_MS, SMTP_TIMEOUTS, WEBHOOK_TIMEOUT_MS } from '../../src/notify/index.ts';

describe('claimLeaseMs', () => {
  it('holds a claim longer than a send to the channel can take, so a live sender is never doubled', () => {
    expect(claimLeaseMs('webhook')).toBe(3 * WEBHOOK_TIMEOUT_MS);
    expect(claimLeaseMs('slack')).toBe(3 * SLACK_TIMEOUT_MS);
    expect(claimLeaseMs('email')).toBe(3 * (SMTP_TIMEOUTS.connectionTimeout + SMTP_TIMEOUTS.greetingTimeout + SMTP_TIMEOUTS.socketTimeout));
  });

  it('holds a console send, or one to a channel no longer configured, for 30 s', () => {
    expect(claimLeaseMs('console')).toBe(30_000);
    expect(claimLeaseMs(undefined)).toBe(30_000);
  });
});
