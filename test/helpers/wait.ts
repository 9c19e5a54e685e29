// Waiting on a condition instead of sleeping a fixed time: as fast as the machine allows, and a
// failure that says what never happened.
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Retries `check` every 100 ms until it returns a value other than undefined/false, and resolves
 * with that value; throws after `timeoutMs`, naming `what` it waited for.
 */
export async function waitFor<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}
