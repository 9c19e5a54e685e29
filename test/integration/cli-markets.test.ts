// The command line with market-search rules: `validate` with its warning, and `poll --once` over
// the market-search sources: a baseline, an alert on the console, a 503 that is no failure, a 422
// that names the rule.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startSandboxWithRules, type SandboxWithRules } from '../helpers/cli.ts';

let scene: SandboxWithRules;
let watched: string;

beforeAll(async () => {
  scene = await startSandboxWithRules({ dirPrefix: 'edgewatch-cli-markets-' });
  watched = scene.sandbox.world.eventTickers().find((t) => scene.sandbox.world.eventVenue(t) === 'venuea')!;
  scene.sandbox.world.updateEvent(watched, { edge_pp: 1 });
  scene.sandbox.world.refreshMarkets();
  writeFileSync(
    path.join(scene.rulesDir, 'markets.yaml'),
    [
      'channels: { screen: { type: console } }',
      `watchlists: { mine: [${watched}] }`,
      'rules:',
      '  - { name: my-edge, source: edge, watchlist: mine, trigger: { type: crosses, field: edge_pp, above: 20 }, notify: [screen] }',
      '  - { name: top5, source: rankings, query: { limit: 5 }, trigger: { type: crosses, field: rank, below: 3 }, notify: [screen] }',
      '  - { name: every-market, source: markets, query: { limit: 200 }, trigger: { type: new }, notify: [screen] }',
      '',
    ].join('\n'),
  );
});

afterAll(() => scene.close());

describe('edgewatch with market-search rules', () => {
  it('validate prints a markets query that matches every market as a warning at file:line:column, and exits 0', async () => {
    const result = await runCli(['validate'], scene.env);
    expect(result.stdout).toBe(
      `${path.join(scene.rulesDir, 'markets.yaml')}:6:51: warning: rule "every-market": query: it matches every market (thousands): only the first 5 pages are watched each poll; narrow it with q, category, series_ticker, series_prefix, event_ticker, close_before or min_volume_24h\n` +
        `3 rules and 1 channel in ${scene.rulesDir}: valid\n`,
    );
    expect(result.code).toBe(0);
  });

  it('poll --once: a baseline, then an edge crossing on the console; a 503 is a notice (exit 0), a 422 names the rule (exit 1)', async () => {
    const { sandbox, env } = scene;
    const baseline = await runCli(['poll', '--once'], env);
    expect(baseline.stdout).toBe('');
    expect(baseline.code).toBe(0);

    sandbox.advance(1);
    sandbox.world.updateEvent(watched, { edge_pp: 25 });
    sandbox.world.refreshMarkets();
    // Not synced yet: retried by the client, then left to the next poll.
    sandbox.inject({ path: '/v1/predictions/venuea/markets-with-edge', status: 503, count: 10 });
    const crossed = await runCli(['poll', '--once'], env);
    expect(crossed.stdout).toMatch(new RegExp(`^\\[info\\] my-edge ${watched}: .*edge \\+25\\.0 pp crossed above 20 pp$`, 'm'));
    expect(crossed.stderr).toContain(`edgewatch poll: rankings: rule "top5": the API's data is not synced yet (HTTP 503): tried again at the next poll`);
    expect(crossed.code).toBe(0);
    sandbox.clearFaults();

    sandbox.inject({ path: '/v1/predictions/venuea/markets-with-edge', status: 422, body: JSON.stringify({ detail: 'limit: out of range' }), count: 1 });
    const refused = await runCli(['poll', '--once'], env);
    expect(refused.stderr).toContain('edgewatch poll: source rankings failed: rule "top5": markets with edge: http_422 (HTTP 422): limit: out of range');
    expect(refused.code).toBe(1);
  });
});
