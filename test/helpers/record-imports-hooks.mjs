// The loader hooks of record-imports.mjs (they run on the loader's own thread).
import { appendFileSync } from 'node:fs';

export async function load(url, context, nextLoad) {
  appendFileSync(process.env.RECORD_IMPORTS_TO, `${url}\n`);
  return nextLoad(url, context);
}
