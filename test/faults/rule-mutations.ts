// Random (seeded) damage to a rule file, as an editor in a hurry might do it: lines deleted,
// duplicated or swapped, re-indented, value types flipped, garbage inserted, the file truncated.
import { pick, type Rng } from './harness.ts';

const GARBAGE = [':', '{', '}', '[', ']', '&', '*', '!', '|', '>', "'", '"', '%', '@', '`', '#', ',', '-', '?', '\t', '\u0000', '\ufeff', '\u00e9', '\u{1F600}', '${', '\\', '\r', '\n', '  ', '<<: *a'];
const FLIPS: Array<[RegExp, string[]]> = [
  [/\b\d+(\.\d+)?\b/, ['"ten"', 'true', '[1, 2]', '{ a: 1 }', '-1', '1e999', 'null', '']],
  [/\b(true|false)\b/, ['"yes"', '0', '[]', '~']],
  [/: [a-z][\w-]*/, [': 12', ': [x]', ': { y: 1 }', ': null', ': ""', ': !!binary aGk=', ': &anchor x', ': *missing']],
  [/\[[^\]]*\]/, ['{}', '"list"', '7', '[[]]']],
];

export function mutate(text: string, rng: Rng): string {
  let lines = text.split('\n');
  const line = () => Math.floor(rng() * lines.length);
  const steps = 1 + Math.floor(rng() * 4);
  for (let step = 0; step < steps; step++) {
    const i = line();
    switch (Math.floor(rng() * 7)) {
      case 0:
        lines.splice(i, 1);
        break;
      case 1:
        lines.splice(i, 0, lines[i] ?? '');
        break;
      case 2: {
        const j = line();
        [lines[i], lines[j]] = [lines[j] ?? '', lines[i] ?? ''];
        break;
      }
      case 3: {
        const current = lines[i] ?? '';
        const shift = Math.floor(rng() * 7) - 3;
        lines[i] = shift >= 0 ? (rng() < 0.2 ? '\t' : ' '.repeat(shift)) + current : current.replace(new RegExp(`^ {0,${-shift}}`), '');
        break;
      }
      case 4: {
        const [pattern, replacements] = pick(rng, FLIPS);
        lines[i] = (lines[i] ?? '').replace(pattern, pick(rng, replacements));
        break;
      }
      case 5: {
        const current = lines[i] ?? '';
        const at = Math.floor(rng() * (current.length + 1));
        lines[i] = current.slice(0, at) + pick(rng, GARBAGE) + current.slice(at);
        break;
      }
      default: {
        const joined = lines.join('\n');
        lines = joined.slice(0, Math.floor(rng() * joined.length)).split('\n');
      }
    }
  }
  return lines.join('\n');
}

