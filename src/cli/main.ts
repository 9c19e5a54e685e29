// The command line. The only place that exits the process.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import { PACKAGE_ROOT } from '../package-root.ts';
import { parseCommandLine } from './args.ts';
import { failureLines } from './failure.ts';

const print = (stream: NodeJS.WriteStream, text: string): void => void stream.write(text.endsWith('\n') ? text : `${text}\n`);

async function main(argv: string[]): Promise<number> {
  const line = parseCommandLine(argv);
  if (line.kind === 'help') {
    print(process.stdout, line.text);
    return 0;
  }
  if (line.kind === 'version') {
    const { version } = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };
    print(process.stdout, `edgewatch ${version}`);
    return 0;
  }
  if (line.kind === 'error') {
    print(process.stderr, line.usage ? `${line.message}\n\n${line.usage}` : line.message);
    return 2;
  }
  let config: Config | undefined;
  try {
    // Loaded only now, like each command's own modules: help, the version or an argument error needs none of it.
    await import('dotenv/config');
    const { readConfig } = await import('../config.ts');
    config = readConfig();
    // The daemon reports them in its log, with everything else it says at start.
    if (line.name !== 'run') for (const warning of config.warnings) print(process.stderr, `edgewatch: warning: ${warning}`);
    const { COMMANDS } = await import('./commands.ts');
    return await COMMANDS[line.name].run({ values: line.values, positionals: line.positionals, config });
  } catch (error) {
    for (const text of failureLines(error, config?.dbPath)) print(process.stderr, `edgewatch: ${text}`);
    return 1;
  }
}

// main() answers every failure with an exit code: it does not reject.
void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
