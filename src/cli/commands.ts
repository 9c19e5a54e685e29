// One function per command; each returns its exit code. Arguments are parsed in args.ts.
// Each command imports what it uses when it runs, so that a quick one (`validate`, `alerts`) does not
// load the daemon, the sandbox, the channels' clients, the metrics or the HTTP server.
import type { Config } from '../config.ts';
import { describeError } from '../core/errors.ts';
import type { CommandName, OptionValues } from './args.ts';

export interface CommandContext {
  values: OptionValues;
  positionals: string[];
  config: Config;
}

export interface Command {
  run(ctx: CommandContext): Promise<number>;
}

const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

const out = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
/** Prints table rows: API text in them (names, summaries, errors) may hold terminal escape sequences. */
async function tableRows(): Promise<(line: string) => void> {
  const { stripControl } = await import('../render/index.ts');
  return (line) => out(stripControl(line));
}
/** JSON keeps the data as it came; C1 controls and DEL, which JSON.stringify leaves raw, are escaped. */
const json = (value: unknown): void =>
  out(JSON.stringify(value, null, 2).replace(/[\x7f-\x9f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
const err = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

function waitForSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
}

const validate: Command = {
  async run({ config }) {
    const { loadRulesAndTemplates } = await import('../service/app.ts');
    const { formatProblem, formatWarning } = await import('../rules/index.ts');
    const loaded = await loadRulesAndTemplates(config);
    if (!loaded.ok) {
      for (const problem of loaded.problems) out(formatProblem(problem));
      err(`invalid templates: ${count(loaded.problems.length, 'problem')} in ${config.templatesDir}`);
      return 1;
    }
    const { ruleSet, templates } = loaded;
    for (const problem of ruleSet.problems) out(formatProblem(problem));
    // Valid, but likely mistakes: a filter value the API never writes, a variable a template is not given, a query matching every market.
    for (const warning of [...templates.warnings, ...ruleSet.warnings]) out(formatWarning(warning));
    if (ruleSet.problems.length > 0) {
      err(`${ruleSet.problems.length} problem(s) in ${config.rulesDir}`);
      return 1;
    }
    out(`${count(ruleSet.rules.length, 'rule')} and ${count(ruleSet.channels.size, 'channel')} in ${config.rulesDir}: valid`);
    return 0;
  },
};

const poll: Command = {
  async run({ values, config }) {
    if (!values.once) {
      err('edgewatch poll: only `poll --once` exists; the daemon is `edgewatch run`');
      return 2;
    }
    const { runPollOnce } = await import('../service/poll-once.ts');
    return runPollOnce(config, { dryRun: values['dry-run'] === true, out, err });
  },
};

const generate: Command = {
  async run({ positionals, config }) {
    const [venue, eventKey] = positionals as [string, string];
    if (venue !== 'venuea' && venue !== 'venueb') {
      err(`edgewatch generate: unknown venue ${venue} (venuea or venueb)`);
      return 2;
    }
    const { connectApi, openConfiguredStore, runningSandbox } = await import('../service/app.ts');
    const { startGeneration } = await import('../service/generate.ts');
    const store = await openConfiguredStore(config);
    try {
      // On the built-in sandbox, only the sandbox of a daemon running on this database knows the
      // run, and that daemon watches it; a sandbox of this command's own would end with it.
      const sandboxUrl = config.apiUrl === undefined ? await runningSandbox(store) : undefined;
      if (config.apiUrl === undefined && sandboxUrl === undefined) {
        err('edgewatch generate: no daemon is running on the built-in sandbox, so nothing would watch the run: start one with `npm start` first (or set EDGEWATCH_API_URL)');
        return 1;
      }
      const connection = await connectApi(config, { sandboxUrl });
      try {
        const run = await startGeneration(store, connection.api, venue, eventKey, new Date());
        out(`run ${run.runId} started for ${venue}/${eventKey} (3 credits); the daemon will announce its completion`);
        return 0;
      } catch (error) {
        err(`edgewatch generate: refused: ${describeError(error)}`);
        return 1;
      } finally {
        await connection.close();
      }
    } finally {
      await store.close();
    }
  },
};

const runs: Command = {
  async run({ values, config }) {
    const { openConfiguredStore } = await import('../service/app.ts');
    const { listRuns } = await import('../store/index.ts');
    // Read-only: a database the user may only read (another user's, a read-only mount) lists too.
    const store = await openConfiguredStore(config, { readonly: true });
    try {
      const rows = await listRuns(store);
      if (values.json) {
        json(rows);
        return 0;
      }
      const row = await tableRows();
      if (rows.length === 0) out('no generation runs recorded (start one with: edgewatch generate <venue> <event_key>)');
      for (const run of rows) row(`${run.run_id}  ${run.status.padEnd(10)}  ${run.venue}/${run.event_key}  started ${run.created_at}  updated ${run.updated_at}`);
      return 0;
    } finally {
      await store.close();
    }
  },
};

const alerts: Command = {
  async run({ values, config }) {
    const limit = values.limit === undefined ? 20 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1) {
      err('edgewatch alerts: --limit takes a positive integer');
      return 2;
    }
    const { openConfiguredStore } = await import('../service/app.ts');
    const { listAlerts } = await import('../store/index.ts');
    // Read-only: a database the user may only read (another user's, a read-only mount) lists too.
    const store = await openConfiguredStore(config, { readonly: true });
    try {
      const rows = await listAlerts(store, limit);
      if (values.json) {
        json(rows);
        return 0;
      }
      const row = await tableRows();
      if (rows.length === 0) out('no alerts yet');
      for (const alert of rows) {
        const resolved = alert.resolved_at ? `  (resolved ${alert.resolved_at})` : '';
        row(`${alert.fired_at}  [${alert.severity}] ${alert.rule}  ${alert.source}/${alert.entity}  ${alert.summary}${resolved}`);
        for (const d of alert.deliveries) {
          const error = d.last_error ? `  last error: ${d.last_error}` : '';
          row(`    -> ${d.channel}: ${d.status}, ${d.attempts} attempt(s)${error}`);
        }
      }
      return 0;
    } finally {
      await store.close();
    }
  },
};

const sandbox: Command = {
  async run({ values, config }) {
    const port = values.port === undefined ? 0 : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      err('edgewatch sandbox: --port takes a port number (0: any free port)');
      return 2;
    }
    const signal = waitForSignal();
    const { runSandboxCommand } = await import('../sandbox/index.ts');
    const server = await runSandboxCommand({ port, apiKey: config.apiKey });
    await signal;
    await server.close();
    return 0;
  },
};

const digest: Command = {
  async run({ values, config }) {
    if (!values.flush) {
      err('edgewatch digest: use `digest --flush` to send every pending digest now');
      return 2;
    }
    const { runDigestFlush } = await import('../service/poll-once.ts');
    return runDigestFlush(config, { out, err });
  },
};

const run: Command = {
  async run({ config }) {
    // Listening before anything loads: a SIGTERM during start-up is a clean stop once started.
    const signal = waitForSignal();
    const { createDaemon } = await import('../service/daemon.ts');
    const daemon = createDaemon({ config, out });
    await daemon.start();
    await signal;
    // A second signal while stopping means "now".
    const force = (): void => process.exit(1);
    process.once('SIGINT', force);
    process.once('SIGTERM', force);
    await daemon.stop();
    // A send abandoned at the stop may still hold a socket; it must not keep the process alive.
    setTimeout(() => process.exit(), 1_000).unref();
    return 0;
  },
};

const silence: Command = {
  async run({ values, positionals, config }) {
    const [action, id] = positionals;
    const fail = (message: string): number => {
      err(`edgewatch silence ${action ?? ''}: ${message}`.replace('silence : ', 'silence: '));
      return 2;
    };
    if (action !== 'add' && action !== 'list' && action !== 'expire') return fail(`unknown action ${action ?? ''} (add, list or expire)`);
    if (action === 'expire' && id === undefined) return fail('missing <id> (usage: edgewatch silence expire <id>)');
    if (action !== 'expire' && id !== undefined) return fail(`unexpected argument ${id}`);
    const { silenceFromArgs, silenceLine, RECENTLY_EXPIRED_MS } = await import('./silence.ts');
    const now = new Date();
    // Judged before the database is opened: bad arguments store nothing.
    const made = action === 'add' ? silenceFromArgs(values, now, config.env.USER) : undefined;
    if (made && 'error' in made) return fail(made.error);
    const { openConfiguredStore } = await import('../service/app.ts');
    const { expireSilence, insertSilence, silencesEndingAfter } = await import('../store/index.ts');
    const store = await openConfiguredStore(config, { readonly: action === 'list' });
    try {
      if (made) {
        await insertSilence(store, made.silence, now);
        out(made.silence.id);
        return 0;
      }
      if (action === 'expire') {
        if (!(await expireSilence(store, id!, now))) return fail(`no active silence ${id} (see edgewatch silence list)`);
        out(`silence ${id} expired`);
        return 0;
      }
      const listed = await silencesEndingAfter(store, new Date(now.getTime() - RECENTLY_EXPIRED_MS));
      if (values.json) {
        json(listed.map(({ id: sid, matchers, starts_at, ends_at, comment, created_by }) => ({ id: sid, matchers, starts_at, ends_at, comment, created_by })));
        return 0;
      }
      const row = await tableRows();
      if (listed.length === 0) out('no silences (add one with: edgewatch silence add --rule NAME --for 2h)');
      for (const s of listed) row(silenceLine(s, now));
      return 0;
    } finally {
      await store.close();
    }
  },
};

/** A repeatable option's values (`--rule a --rule b`). */
const list = (value: OptionValues[string]): string[] => (Array.isArray(value) ? value : typeof value === 'string' ? [value] : []);
const text = (value: OptionValues[string]): string | undefined => (typeof value === 'string' ? value : undefined);

const backtest: Command = {
  async run({ values, config }) {
    const { runBacktestCommand } = await import('../service/rehearse.ts');
    return runBacktestCommand(config, {
      rules: list(values.rule),
      entities: list(values.entity),
      days: text(values.days),
      from: text(values.from),
      to: text(values.to),
      json: values.json === true,
      printJson: json,
      // A bar only for a person watching: none when standard error is piped or redirected.
      progress: process.stderr.isTTY === true,
      out: values.json ? out : await tableRows(),
      err,
    });
  },
};

const test: Command = {
  async run({ positionals, config }) {
    const { runRuleTestsCommand } = await import('../service/rehearse.ts');
    return runRuleTestsCommand(config, positionals, { out, err });
  },
};

const why: Command = {
  async run({ positionals, config }) {
    const { runWhyCommand } = await import('../service/rehearse.ts');
    const [rule, entity] = positionals as [string, string];
    return runWhyCommand(config, rule, entity, { out: await tableRows(), err });
  },
};

const render: Command = {
  async run({ positionals, values, config }) {
    const { runRenderCommand } = await import('../service/rehearse.ts');
    return runRenderCommand(config, positionals[0]!, { channel: text(values.channel), entity: text(values.entity), out: await tableRows(), err });
  },
};

const sendTest: Command = {
  async run({ positionals, config }) {
    const { runSendTestCommand } = await import('../service/rehearse.ts');
    return runSendTestCommand(config, positionals[0]!, { out, err });
  },
};

const schema: Command = {
  async run() {
    const { rulesJsonSchemaText } = await import('../rules/json-schema.ts');
    process.stdout.write(rulesJsonSchemaText());
    return 0;
  },
};

export const COMMANDS: Record<CommandName, Command> = { run, validate, poll, generate, runs, alerts, digest, sandbox, silence, backtest, why, test, render, 'send-test': sendTest, schema };
