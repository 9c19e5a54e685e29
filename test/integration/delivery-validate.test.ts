// `validate` (the real command line) names a channel whose transport is not configured.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/files.ts';
import { TEMPLATES_DIR } from '../helpers/pipeline.ts';

const RULES = `channels:
  trading:
    type: slack
    channel: "#pm-alerts"
  me:
    type: email
    to: [analyst@example.com]
rules:
  - name: edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10 }
    notify: [trading, me]
`;

let dir: string;
let env: Record<string, string>;
let file: string;

beforeEach(() => {
  dir = tempDir();
  mkdirSync(path.join(dir, 'rules'));
  file = path.join(dir, 'rules', 'channels.yaml');
  writeFileSync(file, RULES);
  env = { EDGEWATCH_RULES: path.join(dir, 'rules'), EDGEWATCH_TEMPLATES: TEMPLATES_DIR, EDGEWATCH_DB: path.join(dir, 'edgewatch.db') };
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('validate and channel transports', () => {
  it('names each channel whose transport is not configured, as file:line:column: message, exit 1', { timeout: 60_000 }, async () => {
    const result = await runCli(['validate'], env);
    expect(result.code).toBe(1);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toEqual([
      `${file}:3:11: channel "trading": slack needs SLACK_BOT_TOKEN`,
      `${file}:6:11: channel "me": email needs SMTP_URL`,
    ]);
  });

  it('is valid once SLACK_BOT_TOKEN and SMTP_URL are set, and prints neither', { timeout: 60_000 }, async () => {
    const token = 'xoxb-validate-secret-token';
    const result = await runCli(['validate'], { ...env, SLACK_BOT_TOKEN: token, SMTP_URL: 'smtp://user:pa55word@127.0.0.1:2525' });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/1 rule and 2 channels .*: valid/);
    expect(result.stdout + result.stderr).not.toMatch(/validate-secret|pa55word/);
  });
});
