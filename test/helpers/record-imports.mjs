// Preloaded with `node --import`: appends the URL of every module the process loads through the
// module loader (its own, packages' entry points, builtins) to the file named by RECORD_IMPORTS_TO.
// Plain JavaScript: it runs in the command line's own process, which has no TypeScript loader.
import { register } from 'node:module';

register('./record-imports-hooks.mjs', import.meta.url);
