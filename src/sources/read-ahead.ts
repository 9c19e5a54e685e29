// Read-ahead of one page: the next page is requested before the consumer stores the current one,
// so the network (and the API's own work) overlaps the synchronous database transaction instead
// of waiting behind it.
import { setImmediate as turn } from 'node:timers/promises';

/**
 * Yields the pages of `pages` in order. Before each page is handed out, the following one is
 * requested unless `wantMore(page)` says the consumer will stop after this page. A failure of
 * the prefetched request surfaces where the consumer asks for that page, as without read-ahead.
 */
export async function* readAhead<T>(pages: AsyncIterable<T>, wantMore: (page: T) => boolean = () => true): AsyncGenerator<T, void, undefined> {
  const iterator = pages[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<T>> | undefined = iterator.next();
  try {
    while (pending) {
      const current: IteratorResult<T> = await pending;
      pending = undefined;
      if (current.done) return;
      if (wantMore(current.value)) {
        pending = iterator.next();
        // Handled where it is awaited; this only keeps an abandoned prefetch from being unhandled.
        pending.catch(() => undefined);
        // One turn of the event loop, so the request is on the wire before the caller blocks it.
        await turn();
      }
      yield current.value;
    }
  } finally {
    // The consumer stopped early (break or error): settle the prefetch and close the source.
    if (pending) await pending.catch(() => undefined);
    await iterator.return?.();
  }
}
