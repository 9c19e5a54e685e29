// Parsing grows linearly with the file: a file four times as long takes about four times as
// long, never sixteen. Timed as a ratio within one run, so the machine's speed does not matter.
import { describe, expect, it } from 'vitest';
import { CREDENTIAL_VARIABLES } from '../../src/config.ts';
import { parseRuleFile, type RuleContext } from '../../src/rules/parse.ts';

const CTX: RuleContext = { env: { TEAM: 'research' }, credentials: CREDENTIAL_VARIABLES, templates: new Set(), transports: { slack: false, email: false } };

/**
 * `n` channels (console; slack, invalid without SLACK_BOT_TOKEN; webhook with `${TEAM}` in its
 * URL) and `n / 10` rules, each notifying one channel and one that does not exist.
 */
function ruleFile(n: number): string {
  const lines = ['channels:'];
  for (let i = 0; i < n; i++) {
    if (i % 3 === 0) lines.push(`  c${i}: { type: console }`);
    else if (i % 3 === 1) lines.push(`  c${i}: { type: slack, channel: "#c${i}" }`);
    else lines.push(`  c${i}:`, '    type: webhook', `    url: https://example.com/\${TEAM}/${i}`, '    headers: { X-Team: research }');
  }
  lines.push('rules:');
  for (let i = 0; i < n / 10; i++) {
    lines.push(`  - name: rule-${i}`, '    source: events', '    trigger: { type: crosses, field: edge_pp, above: 10 }', `    notify: [c${i * 3}, missing-${i}]`);
  }
  return `${lines.join('\n')}\n`;
}

/** The shortest of `runs` parses of the text, in milliseconds, and the number of problems. */
function timeParse(text: string, runs: number): { ms: number; problems: number } {
  let best = Infinity;
  let problems = 0;
  for (let run = 0; run < runs; run++) {
    const start = performance.now();
    problems = parseRuleFile(text, 'big.yaml', CTX).problems.length;
    best = Math.min(best, performance.now() - start);
  }
  return { ms: best, problems };
}

describe('parseRuleFile at scale', () => {
  it('40,000 channels take under 6 times as long as 10,000 (linear, not quadratic)', { timeout: 300_000 }, () => {
    const small = ruleFile(10_000);
    const large = ruleFile(40_000);
    timeParse(small, 1); // warm-up: compile the hot paths before measuring
    const t10 = timeParse(small, 3);
    const t40 = timeParse(large, 2);
    // Every slack channel and every missing channel is a problem: the error paths are timed too.
    expect(t10.problems).toBe(Math.floor(10_001 / 3) + 1_000);
    expect(t40.problems).toBe(Math.floor(40_001 / 3) + 4_000);
    expect(t40.ms / t10.ms, `10k: ${t10.ms.toFixed(0)} ms, 40k: ${t40.ms.toFixed(0)} ms`).toBeLessThan(6);
  });
});
