// The command table and argument parsing (pure). Cheap to import: `--help`, `--version` and bad
// arguments are answered before the commands' modules (database, HTTP, templates) are loaded.
import { parseArgs } from 'node:util';
import { closestName } from '../core/suggest.ts';

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** May be given more than once (`--rule a --rule b`): its value is then a list. */
  multiple?: boolean;
  /** The value's placeholder in help (`--limit N`). */
  value?: string;
  help: string;
}

export interface CommandSpec {
  /** The command's usage after its name, as the contract writes it. */
  synopsis: string;
  summary: string;
  /** Names of the positional arguments, all required. */
  positionals: readonly string[];
  /** Names of positional arguments that may follow the required ones. */
  optionalPositionals?: readonly string[];
  /** The last positional takes one or more values (`test <file>...`). */
  variadic?: boolean;
  options: Readonly<Record<string, OptionSpec>>;
}

export const COMMAND_SPECS = {
  run: {
    synopsis: '',
    summary: 'the daemon: poll, evaluate rules, deliver, serve HTTP',
    positionals: [],
    options: {},
  },
  poll: {
    synopsis: '--once [--dry-run]',
    summary: 'one cycle; --dry-run prints what would fire and changes nothing',
    positionals: [],
    options: {
      once: { type: 'boolean', help: 'poll every source once, then attempt the deliveries that are due (required)' },
      'dry-run': { type: 'boolean', help: 'print the alerts that would fire; change nothing' },
    },
  },
  validate: {
    synopsis: '',
    summary: 'check every rule, channel and template',
    positionals: [],
    options: {},
  },
  generate: {
    synopsis: '<venue> <event_key>',
    summary: 'start a report generation (3 credits) and watch its run',
    positionals: ['venue', 'event_key'],
    options: {},
  },
  runs: {
    synopsis: '[--json]',
    summary: 'the recorded generation runs and their status',
    positionals: [],
    options: { json: { type: 'boolean', help: 'print a JSON array' } },
  },
  alerts: {
    synopsis: '[--limit N] [--json]',
    summary: 'recent alerts with their deliveries',
    positionals: [],
    options: {
      limit: { type: 'string', value: 'N', help: 'how many alerts, newest first (default 20)' },
      json: { type: 'boolean', help: 'print a JSON array' },
    },
  },
  digest: {
    synopsis: '--flush',
    summary: 'send every pending digest now',
    positionals: [],
    options: { flush: { type: 'boolean', help: 'send every pending digest now (required)' } },
  },
  silence: {
    synopsis: 'add|list|expire [<id>] [--rule NAME] [--entity KEY] [--source S] [--for D | --until ISO] [--comment TEXT] [--by NAME] [--json]',
    summary: 'mute alerts for a while: add one, list them, expire one',
    positionals: ['action'],
    optionalPositionals: ['id'],
    options: {
      rule: { type: 'string', value: 'NAME', help: 'add: alerts of this rule (* matches any run of characters)' },
      entity: { type: 'string', value: 'KEY', help: 'add: alerts of this entity (glob)' },
      source: { type: 'string', value: 'S', help: 'add: alerts of this source (glob)' },
      for: { type: 'string', value: 'D', help: 'add: for this long from now (30m, 2h, 1d)' },
      until: { type: 'string', value: 'ISO', help: 'add: until this time (ISO 8601, e.g. 2026-11-22T08:00:00Z)' },
      comment: { type: 'string', value: 'TEXT', help: 'add: why' },
      by: { type: 'string', value: 'NAME', help: 'add: who made it (default $USER)' },
      json: { type: 'boolean', help: 'list: print a JSON array' },
    },
  },
  sandbox: {
    synopsis: '[--port P]',
    summary: 'serve the simulated research API alone',
    positionals: [],
    options: { port: { type: 'string', value: 'P', help: 'port to listen on (default 0: any free port)' } },
  },
  backtest: {
    synopsis: '[--rule NAME]... [--days N | --from ISO [--to ISO]] [--entity KEY]... [--json]',
    summary: "replay the events' recorded history through the rules; nothing is sent or stored",
    positionals: [],
    options: {
      rule: { type: 'string', value: 'NAME', multiple: true, help: 'an events rule to replay (repeatable; default every events rule)' },
      days: { type: 'string', value: 'N', help: 'the last N days (default 7; at most 90)' },
      from: { type: 'string', value: 'ISO', help: 'start of the range (an ISO time)' },
      to: { type: 'string', value: 'ISO', help: 'end of the range (an ISO time; default now)' },
      entity: { type: 'string', value: 'KEY', multiple: true, help: 'an event ticker to replay (repeatable; default the events the filters match)' },
      json: { type: 'boolean', help: 'print {from, to, rules: [{rule, entities, alerts: [{entity, fired_at, summary}]}]}' },
    },
  },
  why: {
    synopsis: '<rule> <entity>',
    summary: "explain the rule's last evaluation for that entity",
    positionals: ['rule', 'entity'],
    options: {},
  },
  test: {
    synopsis: '<file>...',
    summary: 'run rule unit tests (YAML files of steps and expected alerts)',
    positionals: ['file'],
    variadic: true,
    options: {},
  },
  render: {
    synopsis: '<rule> [--channel NAME] [--entity KEY]',
    summary: 'print the message the rule would send to each channel, without sending',
    positionals: ['rule'],
    options: {
      channel: { type: 'string', value: 'NAME', help: "only this one of the rule's channels" },
      entity: { type: 'string', value: 'KEY', help: "the entity whose latest stored snapshot to show (default a sample of the rule's source)" },
    },
  },
  'send-test': {
    synopsis: '<channel>',
    summary: 'send one message marked as a test through a channel',
    positionals: ['channel'],
    options: {},
  },
  schema: {
    synopsis: '',
    summary: 'print the JSON Schema of rule files',
    positionals: [],
    options: {},
  },
} as const satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMAND_SPECS;
export type OptionValues = Record<string, string | boolean | string[] | undefined>;

export type CommandLine =
  | { kind: 'help'; text: string }
  | { kind: 'version' }
  /** Bad arguments: print `message` (and `usage`, when given) on standard error; exit 2. */
  | { kind: 'error'; message: string; usage?: string }
  | { kind: 'command'; name: CommandName; values: OptionValues; positionals: string[] };

const NAMES = Object.keys(COMMAND_SPECS) as CommandName[];

const isCommand = (name: string): name is CommandName => Object.hasOwn(COMMAND_SPECS, name);

const usageOf = (name: CommandName): string => `edgewatch ${name}${COMMAND_SPECS[name].synopsis ? ` ${COMMAND_SPECS[name].synopsis}` : ''}`;

export const USAGE = [
  'usage: edgewatch <command>',
  '',
  ...NAMES.map((name) => {
    const usage = usageOf(name).slice('edgewatch '.length);
    // A usage too long for the column gets its summary on the next line.
    return usage.length < 34 ? `  ${usage.padEnd(34)}${COMMAND_SPECS[name].summary}` : `  ${usage}\n  ${''.padEnd(34)}${COMMAND_SPECS[name].summary}`;
  }),
  '',
  'edgewatch <command> --help shows a command\'s options; edgewatch --version its version.',
  '',
].join('\n');

export function commandHelp(name: CommandName): string {
  const spec: CommandSpec = COMMAND_SPECS[name];
  const options = [
    ...Object.entries(spec.options).map(([option, o]) => [`--${option}${o.value ? ` ${o.value}` : ''}${o.multiple ? '...' : ''}`, o.help] as const),
    ['-h, --help', 'show this help'] as const,
  ];
  const width = Math.max(...options.map(([flag]) => flag.length)) + 3;
  return [`usage: ${usageOf(name)}`, '', `${spec.summary.charAt(0).toUpperCase()}${spec.summary.slice(1)}.`, '', 'options:', ...options.map(([flag, help]) => `  ${flag.padEnd(width)}${help}`), ''].join('\n');
}

const didYouMean = (suggestion: string | undefined): string => (suggestion ? ` (did you mean ${suggestion}?)` : '');

/** Parses `edgewatch <argv>`: what to print, or which command to run with which arguments. */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  const [first, ...rest] = argv;
  if (first === undefined) return { kind: 'error', message: 'edgewatch: no command given', usage: USAGE };
  if (first === '--help' || first === '-h') return { kind: 'help', text: USAGE };
  if (first === '--version') return { kind: 'version' };
  if (first === 'help') {
    const topic = rest[0];
    if (topic === undefined) return { kind: 'help', text: USAGE };
    if (isCommand(topic)) return { kind: 'help', text: commandHelp(topic) };
    return { kind: 'error', message: `edgewatch help: unknown command ${topic}${didYouMean(closestName(topic, NAMES))}`, usage: USAGE };
  }
  if (first.startsWith('-')) {
    return { kind: 'error', message: `edgewatch: unknown option ${first}${didYouMean(closestName(first, ['--help', '--version']))}`, usage: USAGE };
  }
  if (!isCommand(first)) return { kind: 'error', message: `edgewatch: unknown command ${first}${didYouMean(closestName(first, NAMES))}`, usage: USAGE };
  return parseCommandArgs(first, rest);
}

function parseCommandArgs(name: CommandName, args: readonly string[]): CommandLine {
  const spec: CommandSpec = COMMAND_SPECS[name];
  const fail = (message: string): CommandLine => ({ kind: 'error', message: `edgewatch ${name}: ${message}` });
  const usage = `(usage: ${usageOf(name)})`;
  const options = { ...spec.options, help: { type: 'boolean', short: 'h' } } as const;
  // Not strict: parseArgs's own messages are written for programmers; these name the option.
  const { values, positionals, tokens } = parseArgs({ args: [...args], options, strict: false, allowPositionals: true, tokens: true });
  if (values.help === true) return { kind: 'help', text: commandHelp(name) };
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const option = Object.hasOwn(spec.options, token.name) ? spec.options[token.name] : undefined;
    if (!option) {
      const known = Object.keys(spec.options).map((o) => `--${o}`);
      const suggestion = closestName(token.rawName, known);
      return fail(`unknown option ${token.rawName} ${suggestion ? `(did you mean ${suggestion}?)` : usage}`);
    }
    const placeholder = `${token.rawName} ${option.value ?? 'VALUE'}`;
    if (option.type === 'boolean' && token.value !== undefined) return fail(`option ${token.rawName} takes no value`);
    if (option.type === 'string' && (token.value === undefined || (!token.inlineValue && token.value.startsWith('-')))) {
      return fail(`option ${token.rawName} needs a value (${placeholder})`);
    }
  }
  const most = spec.variadic ? Infinity : spec.positionals.length + (spec.optionalPositionals?.length ?? 0);
  if (positionals.length > most) return fail(`unexpected argument ${positionals[most]} ${usage}`);
  const missing = spec.positionals.slice(positionals.length);
  if (missing.length > 0) return fail(`missing ${missing.map((p) => `<${p}>`).join(' ')} ${usage}`);
  delete values.help;
  return { kind: 'command', name, values, positionals };
}
