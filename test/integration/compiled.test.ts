// The command line as installed: `bin/edgewatch.js` runs the JavaScript that `npm install` bundled
// into dist/ (test/global-setup.ts builds it before the tests), not the TypeScript sources.
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/files.ts';

import { REPO } from '../helpers/cli.ts';

let dir: string;

beforeEach(() => {
  dir = tempDir('edgewatch-compiled-');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The top-level packages a production install holds (`npm install --omit=dev`), from the lockfile. */
function productionPackages(): string[] {
  const lock = JSON.parse(readFileSync(path.join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
  return Object.entries(lock.packages)
    .filter(([key, entry]) => /^node_modules\/(@[^/]+\/)?[^/]+$/.test(key) && !entry.dev)
    .map(([key]) => key.slice('node_modules/'.length));
}

/** What a user's install runs: bin, dist, the shipped templates and rules, package.json, the production packages; no sources. */
function copyInstalledPackage(to: string): void {
  for (const entry of ['bin', 'dist', 'templates', 'rules', 'package.json']) cpSync(path.join(REPO, entry), path.join(to, entry), { recursive: true });
  for (const name of productionPackages()) {
    mkdirSync(path.dirname(path.join(to, 'node_modules', name)), { recursive: true });
    symlinkSync(path.join(REPO, 'node_modules', name), path.join(to, 'node_modules', name));
  }
}

/** Every file below `root` with one of the extensions, relative, without the extension. */
function modulesBelow(root: string, extension: RegExp): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((file) => extension.test(file) && !file.endsWith('.d.ts'))
    .map((file) => file.replace(extension, ''))
    .sort();
}

it('runs from dist/ with the production packages only: no TypeScript sources, no TypeScript loader', async () => {
  const installed = path.join(dir, 'edgewatch');
  copyInstalledPackage(installed);
  // A folder of one's own with no templates: the shipped defaults come from the package, wherever the command runs.
  const elsewhere = path.join(dir, 'elsewhere');
  mkdirSync(path.join(elsewhere, 'templates'), { recursive: true });
  const bin = path.join(installed, 'bin/edgewatch.js');
  const db = path.join(dir, 'edgewatch.db');
  const env = { EDGEWATCH_RULES: path.join(installed, 'rules'), EDGEWATCH_TEMPLATES: path.join(elsewhere, 'templates'), EDGEWATCH_DB: db };
  const { version } = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string };

  const shown = await runCli(['--version'], env, { bin, cwd: elsewhere });
  expect(shown).toMatchObject({ code: 0, stdout: `edgewatch ${version}\n`, stderr: '' });

  const validated = await runCli(['validate'], env, { bin, cwd: elsewhere });
  expect(validated.stderr).toBe('');
  expect(validated.stdout).toMatch(/^\d+ rules and \d+ channels? in .*: valid\n$/);
  expect(validated.code).toBe(0);

  // A new database gets every migration, compiled.
  const listed = await runCli(['alerts', '--json'], env, { bin, cwd: elsewhere });
  expect(listed).toMatchObject({ code: 0, stdout: '[]\n', stderr: '' });
  const store = new Database(db, { readonly: true });
  const applied = store.prepare<[], { name: string }>('SELECT name FROM kysely_migration ORDER BY name').all();
  store.close();
  expect(applied.map((row) => row.name)).toEqual(modulesBelow(path.join(REPO, 'migrations'), /\.ts$/));
});

it('dist/ is built from the sources as they are now: every migration, and the command line after the last change', () => {
  const dist = path.join(REPO, 'dist');
  expect(modulesBelow(path.join(dist, 'migrations'), /\.js$/)).toEqual(modulesBelow(path.join(REPO, 'migrations'), /\.ts$/));
  const built = statSync(path.join(dist, 'src/cli/main.js')).mtimeMs;
  for (const folder of ['src', 'migrations']) {
    for (const name of modulesBelow(path.join(REPO, folder), /\.ts$/)) {
      expect(statSync(path.join(REPO, folder, `${name}.ts`)).mtimeMs, `${folder}/${name}.ts`).toBeLessThanOrEqual(built);
    }
  }
});
