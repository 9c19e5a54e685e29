// The folder of edgewatch's own package.json, which holds the shipped templates/ and the version.
// Found by walking up, since this module runs from src/ (tsx, vitest) or from dist/src/ (the build).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function folderWithPackageJson(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`edgewatch: no package.json in ${start} or above it`);
  }
}

export const PACKAGE_ROOT = folderWithPackageJson(path.dirname(fileURLToPath(import.meta.url)));
