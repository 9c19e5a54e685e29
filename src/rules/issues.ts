// Problems found while parsing a rule file, located by their path in the YAML document and
// turned into `file:line:column: message` positions.
import { isMap, isScalar, isSeq, type Document, type LineCounter, type Node, type Pair, type YAMLMap } from 'yaml';
import type { z } from 'zod';
import type { RuleProblem } from '../core/types.ts';

export type IssuePath = ReadonlyArray<string | number>;

/** A problem at a path of the document; `at: 'key'` points at the map key instead of its value. */
export interface Issue {
  path: IssuePath;
  message: string;
  at?: 'key' | 'value';
}

export interface Position {
  line: number;
  column: number;
}

/** The 1-based position of the node at `path`, or of the nearest enclosing node that exists. */
export type Locate = (path: IssuePath, at?: 'key' | 'value') => Position;

/**
 * Locates paths in one document. Each map's keys are indexed once, on first use, so that
 * locating every entry of a large file stays linear.
 */
export function createLocator(doc: Document, lineCounter: LineCounter): Locate {
  const keyIndexes = new WeakMap<YAMLMap, Map<string, Pair>>();
  const pairOf = (map: YAMLMap, key: string): Pair | undefined => {
    let index = keyIndexes.get(map);
    if (index === undefined) {
      index = new Map();
      for (const pair of map.items) {
        const text = keyText(pair.key);
        if (!index.has(text)) index.set(text, pair);
      }
      keyIndexes.set(map, index);
    }
    return index.get(key);
  };
  const position = (offset: number): Position => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  return (path, at = 'value') => {
    let node: unknown = doc.contents;
    let best = position(rangeStart(node) ?? 0);
    for (let i = 0; i < path.length; i++) {
      const segment = path[i];
      const last = i === path.length - 1;
      if (isMap(node)) {
        const pair = pairOf(node, String(segment));
        if (!pair) break;
        const keyStart = rangeStart(pair.key);
        if (keyStart !== undefined) best = position(keyStart);
        if (last && at === 'key') return best;
        // An empty value (`cooldown:`) has no text of its own: point at its key.
        if (pair.value === null || (isScalar(pair.value) && pair.value.source === '')) break;
        node = pair.value;
      } else if (isSeq(node) && typeof segment === 'number') {
        const item = node.items[segment];
        if (item === undefined || item === null) break;
        node = item;
      } else {
        break;
      }
      const start = rangeStart(node);
      if (start !== undefined) best = position(start);
    }
    return best;
  };
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  return range ? range[0] : undefined;
}

function keyText(key: unknown): string {
  return isScalar(key) ? String(key.value) : String(key);
}

/** `trigger.above`, `notify[1]`, `filter.confidence_score.gte` */
export function formatPath(path: IssuePath): string {
  let text = '';
  for (const segment of path) text += typeof segment === 'number' ? `[${segment}]` : text === '' ? segment : `.${segment}`;
  return text;
}

/** A short description of a value for messages: `string "ten"`, `number 3`, `a list`. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  if (typeof value === 'string') return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 39)}…` : value)}`;
  return `${typeof value} ${String(value)}`;
}

export interface ZodIssueOptions {
  /** Path of the parsed value in the document. */
  base: IssuePath;
  /** Who the problem is about, as the message starts: `rule "x"`, `channel "y"`. */
  label: string;
  /** Shown before the issue's own path in messages (`trigger` for `trigger.above`). */
  display?: IssuePath;
  /** The message for an unknown key found at `path` (relative to `base`). */
  unknownKey: (key: string, path: IssuePath) => string;
}

/** Zod issues as positioned issues with readable messages. */
export function fromZodIssues(issues: readonly z.core.$ZodIssue[], options: ZodIssueOptions): Issue[] {
  const out: Issue[] = [];
  for (const issue of issues) {
    const path = issue.path.filter((s): s is string | number => typeof s !== 'symbol');
    const shown = [...(options.display ?? []), ...path];
    const where = shown.length > 0 ? `${formatPath(shown)}: ` : '';
    const prefix = options.label === '' ? '' : `${options.label}: `;
    switch (issue.code) {
      case 'unrecognized_keys':
        for (const key of issue.keys) {
          out.push({ path: [...options.base, ...path, key], at: 'key', message: prefix + options.unknownKey(key, path) });
        }
        break;
      case 'invalid_type': {
        const input = (issue as { input?: unknown }).input;
        const message =
          input === undefined && issue.message.startsWith('Invalid input')
            ? `missing ${formatPath(shown)}`
            : issue.message.startsWith('Invalid input')
              ? `${where}expected ${article(issue.expected)}, got ${describeValue(input)}`
              : `${where}${issue.message}`;
        out.push({ path: [...options.base, ...path], message: prefix + message });
        break;
      }
      case 'too_small':
        out.push({
          path: [...options.base, ...path],
          message: prefix + where + (issue.message.startsWith('Too small') ? tooSmall(issue) : issue.message),
        });
        break;
      case 'too_big':
        out.push({
          path: [...options.base, ...path],
          message: prefix + where + (issue.message.startsWith('Too big') ? tooBig(issue) : issue.message),
        });
        break;
      case 'invalid_value': {
        const input = (issue as { input?: unknown }).input;
        const message = issue.message.startsWith('Invalid option') ? `must be one of ${issue.values.map(String).join(', ')}, not ${describeValue(input)}` : issue.message;
        out.push({ path: [...options.base, ...path], message: prefix + where + message });
        break;
      }
      case 'invalid_union': {
        // A missing or unknown `type`: the union's message names its place itself.
        if (issue.discriminator !== undefined) {
          out.push({ path: [...options.base, ...path], message: prefix + issue.message });
          break;
        }
        const input = (issue as { input?: unknown }).input;
        const message = issue.message.startsWith('Invalid input') ? `unexpected ${describeValue(input)}` : issue.message;
        out.push({ path: [...options.base, ...path], message: prefix + where + message });
        break;
      }
      default:
        out.push({ path: [...options.base, ...path], message: prefix + where + issue.message });
    }
  }
  return out;
}

function tooSmall(issue: z.core.$ZodIssueTooSmall): string {
  if (issue.origin === 'array') return 'must not be empty';
  if (issue.origin === 'string') return Number(issue.minimum) > 1 ? `must be at least ${String(issue.minimum)} characters` : 'must not be empty';
  return issue.inclusive ? `must be at least ${String(issue.minimum)}` : `must be greater than ${String(issue.minimum)}`;
}

function tooBig(issue: z.core.$ZodIssueTooBig): string {
  if (issue.origin === 'array') return `must have at most ${String(issue.maximum)} entries`;
  if (issue.origin === 'string') return `must be at most ${String(issue.maximum)} characters`;
  return issue.inclusive ? `must be at most ${String(issue.maximum)}` : `must be less than ${String(issue.maximum)}`;
}

function article(expected: string): string {
  if (expected === 'array') return 'a list';
  if (expected === 'object' || expected === 'record') return 'a map';
  return expected === 'int' ? 'an integer' : expected;
}

/** Issues as problems of one file, sorted by position. */
export function toProblems(locate: Locate, file: string, issues: readonly Issue[]): RuleProblem[] {
  return issues
    .map((issue) => ({ file, ...locate(issue.path, issue.at), message: issue.message }))
    .sort((a, b) => a.line - b.line || a.column - b.column);
}
