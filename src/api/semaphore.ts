// A counting semaphore: bounds the requests in flight across every call of one client.

export interface Semaphore {
  /** Waits for a slot; call the returned function once to give it back. */
  acquire(): Promise<() => void>;
}

export function createSemaphore(limit: number): Semaphore {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`semaphore limit must be a positive integer: ${limit}`);
  let active = 0;
  const waiting: Array<() => void> = [];

  const release = (): void => {
    const next = waiting.shift();
    // Hand the slot straight to the next waiter, so `active` never drops and rises again.
    if (next) next();
    else active -= 1;
  };

  return {
    acquire() {
      return new Promise((resolve) => {
        let released = false;
        const grant = (): void =>
          resolve(() => {
            if (released) return;
            released = true;
            release();
          });
        if (active < limit) {
          active += 1;
          grant();
        } else waiting.push(grant);
      });
    },
  };
}
