// Builds dist/ before the tests when it is missing or older than a source: the tests that start the
// command line run bin/edgewatch.js, which runs dist/, as users do. As root, makes the user the
// tests' PostgreSQL servers run as (helpers/postgres.ts).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { preparePostgresUser } from './helpers/postgres.ts';

const REPO = path.resolve(import.meta.dirname, '..');
/** What the build reads: the folders (whose own times change when a file is added or removed), their files, the packages it bundles. */
const BUILD_INPUTS = ['src', 'migrations', 'web', 'scripts/build.js', 'package.json', 'package-lock.json'];

function pathsBelow(entry: string): string[] {
  const full = path.join(REPO, entry);
  if (!statSync(full).isDirectory()) return [full];
  return [full, ...readdirSync(full, { recursive: true, encoding: 'utf8' }).map((file) => path.join(full, file))];
}

function newestInput(): number {
  return Math.max(...BUILD_INPUTS.flatMap(pathsBelow).map((file) => statSync(file).mtimeMs));
}

/** When the build that wrote dist/ started, at the latest: the build empties dist/ first, so its oldest file. */
function builtAt(): number {
  const dist = path.join(REPO, 'dist');
  if (!existsSync(dist)) return -Infinity;
  const files = pathsBelow('dist').filter((file) => statSync(file).isFile());
  return files.length === 0 ? -Infinity : Math.min(...files.map((file) => statSync(file).mtimeMs));
}

export default async function setup(): Promise<void> {
  if (builtAt() < newestInput()) execFileSync('npm', ['run', 'build'], { cwd: REPO, stdio: 'inherit' });
  await preparePostgresUser();
}
