// The command line. The only place that exits the process.
import 'dotenv/config';
import { parseArgs } from 'node:util';
import { readConfig } from '../config.ts';
import { EdgewatchError } from '../core/errors.ts';
import { COMMANDS, USAGE } from './commands.ts';

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`edgewatch: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: command.options, allowPositionals: true, strict: true });
  } catch (error) {
    process.stderr.write(`edgewatch ${name}: ${(error as Error).message}\n`);
    return 2;
  }
  const config = readConfig();
  return command.run({ values: parsed.values, positionals: parsed.positionals, config });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const message = error instanceof EdgewatchError ? error.message : ((error as Error)?.stack ?? String(error));
    process.stderr.write(`edgewatch: ${message}\n`);
    process.exitCode = 1;
  },
);
