// `npm run build` (npm install runs it): the command line and the migrations bundled with esbuild
// into dist/, which bin/edgewatch.js runs. Bundled, a command reads a few files instead of the
// hundreds of modules its packages are made of: `validate` starts in half the time of a per-file
// tsc build (docs/performance.md). The type check is `tsc --noEmit` (npm test), not this build.
import { copyFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

const migrations = readdirSync('migrations')
  .filter((file) => file.endsWith('.ts'))
  .map((file) => `migrations/${file}`);

rmSync('dist', { recursive: true, force: true });
const { metafile } = await build({
  // dist/src/cli/main.js and dist/migrations/*.js; the migrations share the app's one copy of kysely.
  entryPoints: ['src/cli/main.ts', ...migrations],
  outbase: '.',
  outdir: 'dist',
  // Each command's dynamic import() becomes a chunk, loaded only by the commands that use it. The
  // chunks sit as deep below dist/ as their sources below the repository, so that paths relative to
  // a module (connection.ts's `../../migrations`) lead to dist/migrations.
  chunkNames: 'src/chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Not bundled: the native addon, and packages that start workers or processes from their own
  // files (pino's transports, node-cron's background tasks); only the daemon loads them.
  external: ['better-sqlite3', 'pino', 'pino-pretty', 'node-cron'],
  // The bundled CommonJS packages call require() (node's builtins), which an ES module lacks.
  banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  logLevel: 'warning',
  metafile: true,
});
// Which sources and packages each file of dist/ holds: for a look at the bundle, and for the test
// that checks what each command loads (test/integration/lean-start.test.ts).
writeFileSync('dist/metafile.json', JSON.stringify(metafile));

// The status page's script and styles, with the charting library (uPlot) bundled in: the browser
// loads them from the daemon (/assets/), never from elsewhere.
await build({
  entryPoints: ['web/status-page.ts', 'web/status-page.css'],
  outdir: 'dist/web',
  bundle: true,
  minify: true,
  format: 'iife',
  platform: 'browser',
  target: ['chrome109', 'firefox115', 'safari16'],
  logLevel: 'warning',
});
copyFileSync('web/favicon.svg', 'dist/web/favicon.svg');
