// The JSON Schema of rule files: generated from the zod schemas (z.toJSONSchema), shipped as
// schema/rules.schema.json, and named by every example rule file for editors.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { rulesJsonSchema, rulesJsonSchemaText } from '../../src/rules/json-schema.ts';
import type { Json } from '../helpers/json.ts';

const REPO = path.resolve(import.meta.dirname, '../..');

it('ships schema/rules.schema.json as generated from the zod schemas (npm run schema writes it again)', () => {
  expect(readFileSync(path.join(REPO, 'schema/rules.schema.json'), 'utf8')).toBe(rulesJsonSchemaText());
});

it('names the schema on the first line of every example rule file', () => {
  const files = readdirSync(path.join(REPO, 'rules')).filter((name) => /\.ya?ml$/.test(name));
  expect(files.length).toBeGreaterThan(0);
  for (const name of files) {
    expect({ name, first: readFileSync(path.join(REPO, 'rules', name), 'utf8').split('\n')[0] }).toEqual({ name, first: '# yaml-language-server: $schema=../schema/rules.schema.json' });
  }
});

it('describes what a person writes: strict keys, durations as text, a filter condition as a value, a list or operators', () => {
  const schema = rulesJsonSchema() as Json;
  expect(schema.additionalProperties).toBe(false);
  const rule = schema.properties.rules.anyOf[0].items;
  expect(rule.additionalProperties).toBe(false);
  expect(rule.required).toEqual(['name', 'source', 'trigger', 'notify']);
  expect(rule.properties.cooldown).toMatchObject({ type: 'string', pattern: expect.any(String) });
  expect(new RegExp(rule.properties.cooldown.pattern).test('2h')).toBe(true);
  expect(new RegExp(rule.properties.cooldown.pattern).test('2 hours')).toBe(false);
  const condition = rule.properties.filter.anyOf[0].additionalProperties;
  expect(condition.anyOf.map((option: { type: unknown }) => option.type)).toEqual([['string', 'number', 'boolean', 'null'], 'array', 'object']);
  expect(Object.keys(condition.anyOf[2].properties)).toEqual(['gt', 'gte', 'lt', 'lte', 'eq', 'ne', 'in', 'not_in', 'contains']);
  expect(rule.properties.trigger.oneOf.map((t: Json) => t.properties.type.const)).toEqual(['crosses', 'moves', 'flips', 'changes', 'drops', 'rises', 'appears', 'new', 'overdue', 'added']);
});

it('is what `edgewatch schema` prints', async () => {
  const { runCli } = await import('../helpers/cli.ts');
  const result = await runCli(['schema'], {});
  expect(result).toEqual({ code: 0, stdout: readFileSync(path.join(REPO, 'schema/rules.schema.json'), 'utf8'), stderr: '' });
});
