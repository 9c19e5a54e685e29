// Temporary folders and the files tests write into them.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A new empty folder under the system's temporary folder; the test removes it. */
export function tempDir(prefix = 'edgewatch-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

/** Creates `<dir>/rules` when needed and writes `text` (if any) as its `rules.yaml`; returns the folder. */
export function writeRules(dir: string, text?: string): string {
  const rulesDir = path.join(dir, 'rules');
  mkdirSync(rulesDir, { recursive: true });
  if (text !== undefined) writeFileSync(path.join(rulesDir, 'rules.yaml'), text);
  return rulesDir;
}
