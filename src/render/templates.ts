// Message templates: LiquidJS, one engine per template folder. Templates are data (no code runs);
// output is escaped for the medium of each kind; every render is bounded in time and memory.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve as resolvePath, sep } from 'node:path';
import { Liquid, LiquidError, RenderError, toValueSync, type Template } from 'liquidjs';
import type { Alert, RuleProblem } from '../core/types.ts';
import { EdgewatchError, errorMessage } from '../core/errors.ts';
import { dateTime, formatValue, kpiValue, signedPp, words } from '../core/format.ts';
import { PACKAGE_ROOT } from '../package-root.ts';
import { escapeHtml, escapeSlack, htmlToText, sanitizeRichText } from './escape.ts';
import { fieldLabel } from './labels.ts';
import { sampleAlert, sampleDigest } from './sample.ts';
import { alertView, digestView, TEMPLATE_VARIABLES } from './view.ts';
import { ESCAPE_BY_KIND, TEMPLATE_KINDS, isTemplateKind, type DigestMessage, type EscapeMode, type TemplateKind } from './types.ts';

export interface TemplateSet {
  /** The folder the templates were read from. */
  readonly dir: string;
  /** Names a rule's `template:` may use: `edge` when `templates/edge.<kind>.liquid` exists. */
  names(): Set<string>;
  /** The parsed template at a path relative to the folder (`default/alert.slack.liquid`), if any. */
  get(path: string): Template[] | undefined;
  /** Renders parsed templates with the output escaping of a kind, failing after `limitMs`. */
  render(templates: Template[], scope: object, mode: EscapeMode, limitMs: number): string;
  /** Parses a template written elsewhere (a rule's `explain.ask`) with this set's engine. */
  parse(text: string, name: string): Template[];
  /** Valid but likely mistakes (a variable the alert view does not have), for `validate` to print. */
  readonly warnings: readonly RuleProblem[];
}

export type CompileResult = { ok: true; set: TemplateSet } | { ok: false; problems: RuleProblem[] };

/**
 * How long one render may run. Rendering is synchronous, so a template that loops for long would
 * hold the whole process (health checks, other channels, signals); it fails instead, for good.
 */
export const RENDER_LIMIT_MS = 200;
/** A digest gets this much more per alert it lists (a day's batch may hold thousands). */
export const RENDER_LIMIT_PER_ALERT_MS = 0.5;

function digestRenderLimitMs(digest: DigestMessage): number {
  return RENDER_LIMIT_MS + digest.alerts.length * RENDER_LIMIT_PER_ALERT_MS;
}

const EXT = '.liquid';
const KIND_FILE = new RegExp(`^([a-z0-9][a-z0-9_-]*)\\.(${TEMPLATE_KINDS.join('|')})\\${EXT}$`);

// The escaping mode of a render, keyed by the render's `globals` object, which Liquid hands to
// every nested context (render/include) and which templates cannot replace.
const escapeModes = new WeakMap<object, EscapeMode>();

function stringify(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function modeOf(ctx: { globals?: unknown } | undefined): EscapeMode {
  const globals = ctx?.globals;
  // Unknown render: escape as HTML, the safest default.
  return (typeof globals === 'object' && globals !== null && escapeModes.get(globals)) || 'html';
}

function escapeFor(mode: EscapeMode, text: string): string {
  if (mode === 'html') return escapeHtml(text);
  if (mode === 'slack') return escapeSlack(text);
  return text;
}

function createEngine(files: Record<string, string>): Liquid {
  const engine = new Liquid({
    // In-memory templates: include/render/layout resolve among the files read, never the disk.
    templates: files,
    extname: EXT,
    strictFilters: true,
    ownPropertyOnly: true,
    jsTruthy: false,
    outputEscape(this: { context?: { globals?: unknown } }, value: unknown): string {
      return escapeFor(modeOf(this.context), stringify(value));
    },
    // Bounds for user-edited templates (each render passes its own time limit).
    parseLimit: 1_000_000,
    renderLimit: RENDER_LIMIT_MS,
    memoryLimit: 10_000_000,
  });
  // HTML from the API: allow-listed in HTML; flattened to escaped text elsewhere.
  engine.registerFilter('safe_html', {
    raw: true,
    handler(this: { context?: { globals?: unknown } }, value: unknown): string {
      const mode = modeOf(this.context);
      const html = stringify(value);
      return mode === 'html' ? sanitizeRichText(html) : escapeFor(mode, htmlToText(html));
    },
  });
  engine.registerFilter('to_text', (value: unknown) => htmlToText(stringify(value)));
  engine.registerFilter('words', (value: unknown) => words(stringify(value)));
  engine.registerFilter('label', (value: unknown) => fieldLabel(stringify(value)));
  engine.registerFilter('pp', (value: unknown) => (typeof value === 'number' ? signedPp(value) : stringify(value)));
  engine.registerFilter('kpi', (value: unknown) => kpiValue(value) ?? '');
  engine.registerFilter('datetime', (value: unknown) => dateTime(stringify(value)));
  engine.registerFilter('show', (value: unknown, field: unknown) => formatValue(stringify(field), value));
  return engine;
}

/**
 * A Liquid error as a problem: the file and position of the token it happened at (a partial's own
 * when it happened there), and its message without Liquid's `, file:..., line:..., col:...` tail.
 */
function templateProblem(dir: string, path: string, error: unknown): RuleProblem {
  const e = error as { token?: { file?: unknown; getPosition?: () => number[] }; originalError?: unknown };
  const [line = 1, column = 1] = e.token?.getPosition?.() ?? [];
  const file = typeof e.token?.file === 'string' && e.token.file !== '' ? e.token.file : path;
  const cause = e.originalError instanceof Error ? e.originalError : error;
  const text = errorMessage(cause);
  const message = (text.split('\n')[0] ?? text).replace(/(, file:.*)?, line:\d+, col:\d+$/, '');
  return { file: join(dir, file), line, column, message };
}

/** A render failure on one line: `file:line:column: message` where Liquid knows the place. */
export function describeRenderError(set: TemplateSet, error: unknown): string {
  const token = (error as { token?: unknown }).token;
  if (token === undefined) return errorMessage(error);
  const problem = templateProblem(set.dir, '', error);
  return `${problem.file}:${problem.line}:${problem.column}: ${problem.message}`;
}

/** `{% include %}`/`{% render %}` of a named template that is not in the folder, wherever it sits. */
function missingPartials(engine: Liquid, dir: string, path: string, templates: Template[]): RuleProblem[] {
  const problems: RuleProblem[] = [];
  const visit = (template: Template): void => {
    const partial = template.partialScope?.();
    if (partial !== undefined) {
      try {
        engine.parseFileSync(partial.name);
      } catch {
        const [line = 1, column = 1] = template.token.getPosition();
        problems.push({ file: join(dir, template.token.file ?? path), line, column, message: `no template "${partial.name}" to include in ${dir}` });
      }
      return;
    }
    if (template.children) for (const child of toValueSync(template.children(false, true))) visit(child);
  };
  for (const template of templates) visit(template);
  return problems;
}

/** A message template's kind and whether it renders digests, from its file name; else undefined. */
function messageKind(path: string): { kind: TemplateKind; digest: boolean } | undefined {
  const parts = path.split('/').pop()!.split('.');
  const kind = parts.at(-2);
  if (parts.length < 3 || parts.at(-1) !== 'liquid' || !isTemplateKind(kind)) return undefined;
  return { kind, digest: parts.at(-3) === 'digest' };
}

/** Renders a message template once against a sample, under the limits of a real render. */
function sampleProblems(set: TemplateSet, dir: string, path: string, templates: Template[]): RuleProblem[] {
  const file = messageKind(path);
  if (file === undefined) return []; // a partial: rendered by the templates that include it
  const mode = ESCAPE_BY_KIND[file.kind];
  try {
    if (file.digest) {
      const digest = sampleDigest();
      set.render(templates, { digest, view: digestView(digest) }, mode, digestRenderLimitMs(digest));
    } else {
      const alert = sampleAlert();
      set.render(templates, { alert, view: alertView(alert) }, mode, RENDER_LIMIT_MS);
    }
    return [];
  } catch (error) {
    return [templateProblem(dir, path, error)];
  }
}

/**
 * The variables a message template names that its render does not give (`view.titel`, `alert.cur`,
 * `event`): they print nothing, silently. Found by Liquid's own static analysis.
 */
function unknownVariables(engine: Liquid, dir: string, path: string, templates: Template[]): RuleProblem[] {
  const file = messageKind(path);
  if (file === undefined) return []; // a partial: checked in the templates that include it
  const given: Readonly<Record<string, readonly string[]>> = file.digest ? TEMPLATE_VARIABLES.digest : TEMPLATE_VARIABLES.alert;
  const what = file.digest ? 'a digest template' : 'an alert template';
  const problems: RuleProblem[] = [];
  for (const variables of Object.values(engine.analyzeSync(templates).globals)) {
    for (const variable of variables) {
      const [root, field] = variable.toArray();
      const fields = typeof root === 'string' && Object.hasOwn(given, root) ? given[root] : undefined;
      let message: string | undefined;
      if (fields === undefined) message = `${what} is given ${Object.keys(given).join(' and ')}, not ${String(root)}`;
      else if (typeof field === 'string' && !fields.includes(field)) message = `${String(root)} has no ${field} (its fields: ${fields.join(', ')})`;
      if (message === undefined) continue;
      const at = variable.location;
      problems.push({ file: join(dir, at.file ?? path), line: at.row, column: at.col, message: `"${variable.toString()}": ${message}` });
    }
  }
  return problems;
}

/**
 * Compiles a folder's template files (relative path -> text) and checks each: it parses, every
 * template it includes by name exists, and it renders a sample within the limits. Pure: no disk.
 */
export function compileTemplates(dir: string, files: Record<string, string>): CompileResult {
  const engine = createEngine(files);
  const parsed = new Map<string, Template[]>();
  const problems: RuleProblem[] = [];
  for (const [path, text] of Object.entries(files)) {
    try {
      parsed.set(path, engine.parse(text, path));
    } catch (error) {
      problems.push(templateProblem(dir, path, error));
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  const names = new Set<string>();
  // Filled once every template is known to be sound (its partials exist, it renders the sample).
  const warnings: RuleProblem[] = [];
  for (const path of parsed.keys()) {
    const match = KIND_FILE.exec(path);
    if (match?.[1] !== undefined) names.add(match[1]);
  }
  const set: TemplateSet = {
    dir,
    warnings,
    names: () => new Set(names),
    get: (path) => parsed.get(path),
    parse: (text, name) => engine.parse(text, name),
    render(templates, scope, mode, limitMs) {
      const globals = {};
      escapeModes.set(globals, mode);
      try {
        return engine.renderSync(templates, scope, { globals, renderLimit: limitMs }) as string;
      } catch (error) {
        // A limit struck before the first tag ran (a process paused that long) has no position:
        // place it at the template's start, so the error still names the file.
        const first = templates[0];
        if (LiquidError.is(error) || first === undefined || !(error instanceof Error)) throw error;
        throw new RenderError(error, first);
      }
    },
  };
  for (const [path, templates] of parsed) problems.push(...missingPartials(engine, dir, path, templates));
  if (problems.length > 0) return { ok: false, problems };
  const seen = new Set<string>();
  for (const [path, templates] of parsed) {
    for (const problem of sampleProblems(set, dir, path, templates)) {
      // A failing partial fails every template that includes it: report it once, where it is (a
      // time limit strikes at whichever column the render had reached, so the column is left out).
      const at = `${problem.file}:${problem.line}: ${problem.message}`;
      if (!seen.has(at)) problems.push(problem);
      seen.add(at);
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  for (const [path, templates] of parsed) warnings.push(...unknownVariables(engine, dir, path, templates));
  return { ok: true, set };
}

async function readTemplateFiles(dir: string): Promise<Record<string, string>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files: Record<string, string> = {};
  for (const entry of entries) {
    if (!entry.isFile() || !entry.name.endsWith(EXT)) continue;
    const full = join(entry.parentPath, entry.name);
    files[relative(dir, full).split(sep).join('/')] = await readFile(full, 'utf8');
  }
  return files;
}

/** The templates shipped with edgewatch: a default for every trigger and channel kind. */
export const SHIPPED_TEMPLATES_DIR = join(PACKAGE_ROOT, 'templates');

/**
 * Reads a template folder once and compiles it over the shipped defaults, so a folder of one's own
 * needs only the templates it adds or changes. Invalid templates are positioned problems, as
 * values; only a folder that cannot be read throws (CONFIG_INVALID).
 */
export async function readTemplates(dir: string): Promise<CompileResult> {
  let own: Record<string, string>;
  try {
    own = await readTemplateFiles(dir);
  } catch (cause) {
    throw new EdgewatchError('CONFIG_INVALID', `cannot read the templates folder ${dir}: ${(cause as Error).message}`, { cause });
  }
  const shipped = resolvePath(dir) === SHIPPED_TEMPLATES_DIR ? {} : await readTemplateFiles(SHIPPED_TEMPLATES_DIR);
  return compileTemplates(dir, { ...shipped, ...own });
}

/** readTemplates for callers that cannot go on without the set: throws CONFIG_INVALID listing the problems. */
export async function loadTemplates(dir: string): Promise<TemplateSet> {
  const result = await readTemplates(dir);
  if (!result.ok) {
    const lines = result.problems.map((p) => `${p.file}:${p.line}:${p.column}: ${p.message}`);
    throw new EdgewatchError('CONFIG_INVALID', `invalid templates:\n  ${lines.join('\n  ')}`);
  }
  return result.set;
}

function tidy(text: string, kind: TemplateKind): string {
  if (kind === 'email_subject') return text.replace(/\s+/g, ' ').trim();
  return text.replace(/[ \t]+$/gm, '').replace(/\n{3,}/g, '\n\n').trim();
}

function resolve(set: TemplateSet, candidates: string[]): { path: string; templates: Template[] } {
  for (const path of candidates) {
    const templates = set.get(path);
    if (templates !== undefined) return { path, templates };
  }
  throw new EdgewatchError('CONFIG_INVALID', `no template in ${set.dir} for ${candidates.join(', ')}`);
}

/**
 * Renders one alert for a kind. Looks up `<name>.<kind>.liquid` when the rule names a
 * template, then `default/<trigger>.<kind>.liquid`, then `default/alert.<kind>.liquid`.
 */
export function renderAlert(set: TemplateSet, alert: Alert, kind: TemplateKind, templateName?: string): string {
  const candidates = [
    ...(templateName !== undefined ? [`${templateName}.${kind}${EXT}`] : []),
    `default/${alert.trigger}.${kind}${EXT}`,
    `default/alert.${kind}${EXT}`,
  ];
  const { templates } = resolve(set, candidates);
  return tidy(set.render(templates, { alert, view: alertView(alert) }, ESCAPE_BY_KIND[kind], RENDER_LIMIT_MS), kind);
}

/**
 * An agent question (`explain.ask`) for an alert: the template sees the alert's view at its top
 * level (`title`, `summary`, `entity`, ...), `from` and `to` (the trigger field's change,
 * formatted) and `alert`. Plain text, one line.
 */
export function renderQuestion(set: TemplateSet, ask: string, alert: Alert): string {
  const view = alertView(alert);
  const [first] = view.changes;
  const scope = { ...view, from: first?.from ?? '', to: first?.to ?? '', alert, view };
  return set.render(set.parse(ask, 'explain.ask'), scope, 'plain', RENDER_LIMIT_MS).replace(/\s+/g, ' ').trim();
}

/** Renders a digest for a kind: `<name>.digest.<kind>.liquid` when named, else `default/digest.<kind>.liquid`. */
export function renderDigest(set: TemplateSet, digest: DigestMessage, kind: TemplateKind, templateName?: string): string {
  const candidates = [
    ...(templateName !== undefined ? [`${templateName}.digest.${kind}${EXT}`] : []),
    `default/digest.${kind}${EXT}`,
  ];
  const { templates } = resolve(set, candidates);
  return tidy(set.render(templates, { digest, view: digestView(digest) }, ESCAPE_BY_KIND[kind], digestRenderLimitMs(digest)), kind);
}
