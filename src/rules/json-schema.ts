// The JSON Schema of rule files, generated from the zod schemas by zod's own z.toJSONSchema, for
// editors (`# yaml-language-server: $schema=...`): `edgewatch schema` prints it and
// schema/rules.schema.json ships it (a test fails when the two differ). Pure.
import { z } from 'zod';
import { Condition, RuleFileSchema } from './schema.ts';

const SCALAR = { type: ['string', 'number', 'boolean', 'null'] };

/** The JSON Schema of a rule file (draft-07, which editors' YAML support reads). */
export function rulesJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(RuleFileSchema, {
    target: 'draft-7',
    // What a person writes: defaults may be left out, durations are text.
    io: 'input',
    // Checks written as code (a webhook secret's form, a cron expression) are left to `validate`.
    unrepresentable: 'any',
    override: (ctx) => {
      // A filter condition is a value (equality), a list (any of them) or a map of operators;
      // zod sees only the map that the shorthand is turned into.
      if (ctx.zodSchema !== Condition) return;
      const operators = { ...ctx.jsonSchema };
      for (const key of Object.keys(ctx.jsonSchema)) delete (ctx.jsonSchema as Record<string, unknown>)[key];
      Object.assign(ctx.jsonSchema, { anyOf: [SCALAR, { type: 'array', items: SCALAR }, operators] });
    },
  });
  return { ...schema, title: 'edgewatch rule file', description: 'channels and rules; see the README (Rule files). `edgewatch validate` checks what this schema cannot.' };
}

/** The schema as shipped in schema/rules.schema.json and printed by `edgewatch schema`. */
export function rulesJsonSchemaText(): string {
  return `${JSON.stringify(rulesJsonSchema(), null, 2)}\n`;
}
