#!/usr/bin/env node
// Runs the JavaScript that `npm install` compiled into dist/ (`npm run build`); `npm run dev` runs
// the TypeScript sources instead.
import { existsSync } from 'node:fs';

const main = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('edgewatch: dist/src/cli/main.js is missing: run `npm run build` (npm install runs it)\n');
  process.exit(1);
}
await import(main.href);
