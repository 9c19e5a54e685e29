import { describe, expect, it } from 'vitest';
import { readConfig } from '../../src/config.ts';

describe('readConfig', () => {
  it('applies the documented defaults', () => {
    const config = readConfig({});
    expect(config).toMatchObject({
      apiUrl: undefined,
      dbPath: './data/edgewatch.db',
      rulesDir: './rules',
      templatesDir: './templates',
      port: 8787,
      emailFrom: 'edgewatch@localhost',
      deliveryAttempts: 10,
      logLevel: 'info',
      slackGroupAbove: 10,
      maxPages: 2000,
      maxResponseBytes: 32 * 1024 * 1024,
      pollIntervals: { events: undefined, kpis: undefined, reports: undefined, runs: undefined },
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads durations, numbers and URLs, and treats empty values as unset', () => {
    const config = readConfig({
      EDGEWATCH_API_URL: 'https://api.example.com/v1/',
      EDGEWATCH_POLL_EVENTS: '90s',
      EDGEWATCH_POLL_REPORTS: '2h',
      EDGEWATCH_POLL_KPIS: '',
      EDGEWATCH_PORT: '0',
      EDGEWATCH_SLACK_GROUP_ABOVE: '25',
      EDGEWATCH_MAX_PAGES: '50',
      EDGEWATCH_MAX_RESPONSE_MB: '0.5',
      SMTP_URL: '',
    });
    expect(config.maxPages).toBe(50);
    expect(config.maxResponseBytes).toBe(512 * 1024);
    expect(config.apiUrl).toBe('https://api.example.com/v1');
    expect(config.pollIntervals).toEqual({ events: 90_000, kpis: undefined, reports: 7_200_000, runs: undefined });
    expect(config.port).toBe(0);
    expect(config.slackGroupAbove).toBe(25);
    expect(config.smtpUrl).toBeUndefined();
  });

  it.each([
    ['EDGEWATCH_POLL_EVENTS', 'often', /EDGEWATCH_POLL_EVENTS: not a duration/],
    ['EDGEWATCH_PORT', '70000', /EDGEWATCH_PORT/],
    ['EDGEWATCH_LOG_LEVEL', 'loud', /EDGEWATCH_LOG_LEVEL/],
    ['SMTP_URL', 'mail.example.com', /SMTP_URL: must start with smtp:\/\/ or smtps:\/\//],
    ['EDGEWATCH_API_URL', 'not a url', /EDGEWATCH_API_URL/],
    ['EDGEWATCH_MAX_PAGES', '0', /EDGEWATCH_MAX_PAGES/],
    ['EDGEWATCH_MAX_RESPONSE_MB', 'lots', /EDGEWATCH_MAX_RESPONSE_MB/],
  ])('names the variable %s when its value %s is invalid', (name, value, message) => {
    expect(() => readConfig({ [name]: value })).toThrow(message);
  });

  it('never puts the API key in an error', () => {
    expect(() => readConfig({ EDGEWATCH_API_KEY: 'sk-secret-123', EDGEWATCH_PORT: 'x' })).toThrow(/EDGEWATCH_PORT/);
    try {
      readConfig({ EDGEWATCH_API_KEY: 'sk-secret-123', EDGEWATCH_PORT: 'x' });
    } catch (error) {
      expect(String((error as Error).message)).not.toContain('sk-secret-123');
    }
  });
});
