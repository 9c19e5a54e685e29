// `edgewatch validate` on templates that parse but would fail every delivery: an include of a
// template that does not exist, and one that runs past the render time limit.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/files.ts';

let dir: string;

beforeAll(() => {
  dir = tempDir('edgewatch-validate-templates-');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function folder(name: string, files: Record<string, string>): string {
  const at = path.join(dir, name);
  mkdirSync(at);
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(at, file), text);
  return at;
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

describe('validate renders the templates', () => {
  it('rejects an include of a template that does not exist, as file:line:column, exit 1', async () => {
    const templates = folder('missing', { 'edge.slack.liquid': "{{ view.title }}\n{% if view.note %}{% include 'footer' %}{% endif %}" });
    const result = await runCli(['validate'], { EDGEWATCH_TEMPLATES: templates });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(new RegExp(`^${escape(templates)}/edge\\.slack\\.liquid:2:19: no template "footer" to include`, 'm'));
  });

  it('rejects a template that runs past the render time limit on a sample alert, exit 1', async () => {
    const templates = folder('heavy', {
      'edge.email_html.liquid': '<p>{{ view.title }}</p>\n{% for i in (1..3000) %}{% for j in (1..3000) %}x{% endfor %}{% endfor %}',
    });
    const result = await runCli(['validate'], { EDGEWATCH_TEMPLATES: templates });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(new RegExp(`^${escape(templates)}/edge\\.email_html\\.liquid:2:\\d+: template render limit exceeded$`, 'm'));
  });
});
