import { describe, expect, it } from 'vitest';
import { KNOWN_VARIABLES, readConfig } from '../../src/config.ts';

describe('readConfig', () => {
  it('applies the documented defaults', () => {
    const config = readConfig({});
    expect(config).toMatchObject({
      apiUrl: undefined,
      dbPath: './data/edgewatch.db',
      rulesDir: './rules',
      templatesDir: './templates',
      port: 8787,
      host: '127.0.0.1',
      emailFrom: 'edgewatch@localhost',
      deliveryAttempts: 10,
      logLevel: 'info',
      slackGroupAbove: 10,
      maxPages: 2000,
      maxResponseBytes: 32 * 1024 * 1024,
      pollIntervals: { events: undefined, kpis: undefined, reports: undefined, runs: undefined, markets: undefined },
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads durations, numbers and URLs, and treats empty values as unset', () => {
    const config = readConfig({
      EDGEWATCH_API_URL: 'https://api.example.com/v1/',
      EDGEWATCH_POLL_EVENTS: '90s',
      EDGEWATCH_POLL_REPORTS: '2h',
      EDGEWATCH_POLL_KPIS: '',
      EDGEWATCH_POLL_MARKETS: '10m',
      EDGEWATCH_PORT: '0',
      EDGEWATCH_SLACK_GROUP_ABOVE: '25',
      EDGEWATCH_MAX_PAGES: '50',
      EDGEWATCH_MAX_RESPONSE_MB: '0.5',
      SMTP_URL: '',
    });
    expect(config.maxPages).toBe(50);
    expect(config.maxResponseBytes).toBe(512 * 1024);
    expect(config.apiUrl).toBe('https://api.example.com/v1');
    expect(config.pollIntervals).toEqual({ events: 90_000, kpis: undefined, reports: 7_200_000, runs: undefined, markets: 600_000 });
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
    ['EDGEWATCH_POLL_EVENTS', '0s', /^EDGEWATCH_POLL_EVENTS: must be at least 1s: 0s$/],
    ['EDGEWATCH_POLL_RUNS', '500ms', /^EDGEWATCH_POLL_RUNS: must be at least 1s: 500ms$/],
    ['EDGEWATCH_SNAPSHOT_RETENTION', '0d', /^EDGEWATCH_SNAPSHOT_RETENTION: must be at least 1s: 0d$/],
    ['EDGEWATCH_HOST', 'http://0.0.0.0', /^EDGEWATCH_HOST: must be an IP address or a host name/],
    ['EDGEWATCH_DB', 'postgres://user:pw@/db', /^EDGEWATCH_DB: not a valid PostgreSQL URL: write postgres:\/\/user:password@host:5432\/database$/],
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

  it('reads EDGEWATCH_DB: a SQLite file or a PostgreSQL URL, whose password no error repeats', () => {
    expect(readConfig({ EDGEWATCH_DB: 'postgres://ew:pw@db.internal:5432/edgewatch' }).dbPath).toBe('postgres://ew:pw@db.internal:5432/edgewatch');
    expect(readConfig({ EDGEWATCH_DB: 'postgresql://db.internal/edgewatch' }).dbPath).toBe('postgresql://db.internal/edgewatch');
    expect(readConfig({ EDGEWATCH_DB: ':memory:' }).dbPath).toBe(':memory:');
    expect(() => readConfig({ EDGEWATCH_DB: 'postgres://ew:pw-sekrit@:5432/edgewatch' })).toThrow(/^EDGEWATCH_DB: [^\n]*$/);
    expect(() => readConfig({ EDGEWATCH_DB: 'postgres://ew:pw-sekrit@:5432/edgewatch' })).not.toThrow(/sekrit/);
  });

  it('reads EDGEWATCH_HOST: an IP address or a host name', () => {
    expect(readConfig({ EDGEWATCH_HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(readConfig({ EDGEWATCH_HOST: '::1' }).host).toBe('::1');
    expect(readConfig({ EDGEWATCH_HOST: 'localhost' }).host).toBe('localhost');
  });

  it('names every invalid variable on a line of its own', () => {
    expect(() => readConfig({ EDGEWATCH_PORT: 'x', EDGEWATCH_LOG_LEVEL: 'loud' })).toThrow(/^EDGEWATCH_PORT: .*\nEDGEWATCH_LOG_LEVEL: [^\n]*$/);
  });

  it('warns about an unknown EDGEWATCH_ variable, suggesting the known one it resembles', () => {
    const config = readConfig({ EDGEWATCH_POLL_EVNETS: '5m', EDGEWATCH_FROBNICATE: '1', EDGEWATCH_PORTT: '', EDGEWATCH_PORT: '9000', PATH: '/bin' });
    expect(config.warnings).toEqual([
      "unknown variable EDGEWATCH_FROBNICATE, ignored (not one of edgewatch's variables)",
      'unknown variable EDGEWATCH_POLL_EVNETS, did you mean EDGEWATCH_POLL_EVENTS?',
    ]);
    expect(readConfig({ EDGEWATCH_APIKEY: 'k' }).warnings).toEqual(['unknown variable EDGEWATCH_APIKEY, did you mean EDGEWATCH_API_KEY?']);
  });

  it('knows every variable of the contract and the README, read yet or not', () => {
    const documented = [
      'EDGEWATCH_API_URL', 'EDGEWATCH_API_KEY', 'EDGEWATCH_DB', 'EDGEWATCH_RULES', 'EDGEWATCH_TEMPLATES', 'EDGEWATCH_PORT',
      'EDGEWATCH_POLL_EVENTS', 'EDGEWATCH_POLL_KPIS', 'EDGEWATCH_POLL_REPORTS', 'EDGEWATCH_POLL_RUNS', 'EDGEWATCH_DELIVERY_ATTEMPTS',
      'EDGEWATCH_LOG_LEVEL', 'EDGEWATCH_HOST', 'EDGEWATCH_POLL_MARKETS', 'EDGEWATCH_AGENT_DAILY_LIMIT', 'EDGEWATCH_MAX_PAGES',
      'EDGEWATCH_MAX_RESPONSE_MB', 'EDGEWATCH_REPORTS_BUDGET', 'EDGEWATCH_SLACK_GROUP_ABOVE', 'EDGEWATCH_SNAPSHOT_RETENTION',
    ];
    expect([...KNOWN_VARIABLES].sort()).toEqual(documented.sort());
    expect(readConfig(Object.fromEntries(documented.map((name) => [name, '']))).warnings).toEqual([]);
  });
});
