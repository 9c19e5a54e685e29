// Depth of API values. The store, the diff and the templates walk values recursively, so a value
// nested thousands of levels deep would overflow the stack far from where it came in; it is
// refused at the boundary instead, by a walk that does not recurse itself.

/** Deeper than this (counted from the response body), a body is refused. Real ones nest under 10. */
export const MAX_NESTING = 100;

interface Frame {
  value: object;
  depth: number;
  key: string | number | undefined;
  parent: Frame | undefined;
}

/** The path to the first object or array nested deeper than `maxDepth` in `value`, or undefined. */
export function pathTooDeep(value: unknown, maxDepth: number = MAX_NESTING): Array<string | number> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const stack: Frame[] = [{ value, depth: 1, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.depth > maxDepth) {
      const path: Array<string | number> = [];
      for (let f: Frame | undefined = frame; f?.key !== undefined; f = f.parent) path.unshift(f.key);
      return path;
    }
    const entries: Array<[string | number, unknown]> = Array.isArray(frame.value) ? frame.value.map((v, i) => [i, v]) : Object.entries(frame.value);
    for (const [key, child] of entries) {
      if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: frame.depth + 1, key, parent: frame });
    }
  }
  return undefined;
}
