// `npm ci` installs exactly the committed lockfile, and refuses it when a dependency of a locked
// package has no entry, even an optional one for another platform (rollup's, through vitest).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';

interface LockedPackage {
  dependencies?: Record<string, string>;
  /** The root's only: the lockfile does not hold other packages' own development dependencies. */
  devDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

const lock = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../package-lock.json'), 'utf8')) as {
  packages: Record<string, LockedPackage>;
};

/** Where node (and npm) would find `name` from the package at `at`: its own node_modules, then each one above. */
function resolves(at: string, name: string): boolean {
  for (let dir = at; ; dir = dir.includes('/node_modules/') ? dir.slice(0, dir.lastIndexOf('/node_modules/')) : '') {
    if (lock.packages[dir === '' ? `node_modules/${name}` : `${dir}/node_modules/${name}`]) return true;
    if (dir === '') return false;
  }
}

it('locks every dependency of every locked package, the optional ones of every platform included', () => {
  const missing = Object.entries(lock.packages).flatMap(([at, entry]) =>
    Object.keys({ ...entry.dependencies, ...entry.devDependencies, ...entry.optionalDependencies })
      .filter((name) => !resolves(at, name))
      .map((name) => `${at || '(root)'} -> ${name}`),
  );
  expect(missing).toEqual([]);
});
