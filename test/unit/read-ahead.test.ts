import { describe, expect, it } from 'vitest';
import { readAhead } from '../../src/sources/read-ahead.ts';

/** A source of pages that logs when each page is requested. */
function source(pages: number, failAt?: number): { pages: AsyncIterable<number>; log: string[] } {
  const log: string[] = [];
  async function* generate(): AsyncGenerator<number> {
    for (let i = 0; i < pages; i++) {
      log.push(`fetch ${i}`);
      await Promise.resolve();
      if (i === failAt) throw new Error(`page ${i} failed`);
      yield i;
    }
  }
  return { pages: generate(), log };
}

describe('readAhead', () => {
  it('hands out every page in order, the next one requested before the current is consumed', async () => {
    const { pages, log } = source(3);
    const seen: number[] = [];
    for await (const page of readAhead(pages)) {
      log.push(`store ${page}`);
      seen.push(page);
    }
    expect(seen).toEqual([0, 1, 2]);
    expect(log).toEqual(['fetch 0', 'fetch 1', 'store 0', 'fetch 2', 'store 1', 'store 2']);
  });

  it('requests nothing more once wantMore says the consumer stops', async () => {
    const { pages, log } = source(5);
    const seen: number[] = [];
    for await (const page of readAhead(pages, (p) => p < 1)) {
      seen.push(page);
      if (page === 1) break;
    }
    expect(seen).toEqual([0, 1]);
    expect(log).toEqual(['fetch 0', 'fetch 1']);
  });

  it('surfaces a failed page where the consumer asks for it, after storing the pages before it', async () => {
    const { pages } = source(3, 1);
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const page of readAhead(pages)) seen.push(page);
      })(),
    ).rejects.toThrow('page 1 failed');
    expect(seen).toEqual([0]);
  });
});
