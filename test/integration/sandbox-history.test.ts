// The sandbox keeps each event's history as its world moves (for `backtest`): every snapshot
// recorded, served newest first in cursor pages, `captured_from`/`captured_to` inclusive bounds,
// at most 500 snapshots an event. Read over HTTP, raw and through the API client.
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type HistorySnapshot } from '../../src/api/index.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import type { Json } from '../helpers/json.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function sandbox(): Promise<Sandbox> {
  const s = await startSandbox({ seed: 4 });
  cleanups.push(() => s.close());
  return s;
}

function client(s: Sandbox): ApiClient {
  const c = createApiClient({ baseUrl: s.url, apiKey: 'k', backoffBaseMs: 1 });
  cleanups.push(() => c.close());
  return c;
}

/** Every row of an event's history, through cursor pages of `limit`. */
async function history(s: Sandbox, ticker: string, query = '', limit = 3): Promise<Json[]> {
  const rows: Json[] = [];
  let cursor: string | null = null;
  do {
    const url: string = `${s.url}/predictions/events/${ticker}/history?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await fetch(url, { headers: { authorization: 'Bearer k' } });
    expect(res.status).toBe(200);
    const page = (await res.json()) as Json;
    expect(page.event_ticker).toBe(ticker);
    expect(page.data.length).toBeLessThanOrEqual(limit);
    expect(page.has_more).toBe(page.next_cursor !== null);
    rows.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return rows;
}

const at = (s: Sandbox) => s.now().toISOString().replace('.000Z', 'Z');

describe('sandbox event history', () => {
  it('records each snapshot as the world moves and serves them newest first', async () => {
    const s = await sandbox();
    const ticker = s.world.eventTickers()[0]!;
    const before = await history(s, ticker);
    const times: string[] = [];
    for (let i = 0; i < 5; i++) {
      s.advance(7);
      s.world.updateEvent(ticker, { edge_pp: 5 + i });
      times.push(at(s));
    }
    const after = await history(s, ticker);
    // New snapshots (the world may have moved this event on its own too) come first, the old ones stay as they were.
    expect(after.slice(after.length - before.length)).toEqual(before);
    const added = after.slice(0, after.length - before.length);
    expect(added.length).toBeGreaterThanOrEqual(5);
    for (const [i, time] of times.entries()) expect(added.find((r) => r.captured_at === time)?.edge_pp).toBe(5 + i);
    for (let i = 1; i < after.length; i++) {
      expect(after[i - 1]!.captured_at >= after[i]!.captured_at).toBe(true);
      expect(after[i - 1]!.history_id).toBeGreaterThan(after[i]!.history_id);
    }
  });

  it('bounds the range by captured_from and captured_to, both inclusive, across pages', async () => {
    const s = await sandbox();
    const ticker = s.world.eventTickers()[1]!;
    for (let i = 0; i < 8; i++) {
      s.advance(11);
      s.world.updateEvent(ticker, { edge_pp: i });
    }
    const all = await history(s, ticker, '', 200);
    const from = all[5]!.captured_at;
    const to = all[1]!.captured_at;
    const inside = all.filter((r) => r.captured_at >= from && r.captured_at <= to);
    expect(inside.length).toBeGreaterThanOrEqual(5);
    expect(await history(s, ticker, `&captured_from=${from}&captured_to=${to}`, 2)).toEqual(inside);
    expect(await history(s, ticker, `&captured_from=${to}`, 2)).toEqual(all.filter((r) => r.captured_at >= to));
    expect(await history(s, ticker, `&captured_to=${from}`, 2)).toEqual(all.filter((r) => r.captured_at <= from));
    expect(await history(s, ticker, `&captured_from=${to}&captured_to=${from}`)).toEqual([]);
  });

  it('keeps at most 500 snapshots of an event, the newest', async () => {
    const s = await sandbox();
    const ticker = s.world.eventTickers()[2]!;
    for (let i = 0; i < 520; i++) {
      s.advance(0.01);
      s.world.updateEvent(ticker, { edge_pp: i % 20 });
    }
    const rows = await history(s, ticker, '', 200);
    expect(rows).toHaveLength(500);
    expect(rows[0]!.edge_pp).toBe(519 % 20);
    expect(rows[499]!.edge_pp).toBe(20 % 20);
  });

  it('is read by the client within bounds, page by page', async () => {
    const s = await sandbox();
    const ticker = s.world.eventTickers()[3]!;
    for (let i = 0; i < 6; i++) {
      s.advance(13);
      s.world.updateEvent(ticker, { edge_pp: 10 + i });
    }
    const all = await history(s, ticker, '', 200);
    const capturedFrom = all[4]!.captured_at;
    const capturedTo = all[1]!.captured_at;
    const rows: HistorySnapshot[] = [];
    let pages = 0;
    for await (const page of client(s).eventHistoryPages(ticker, { capturedFrom, capturedTo, limit: 2 })) {
      pages++;
      rows.push(...page.rows);
    }
    expect(pages).toBeGreaterThan(1);
    expect(rows.map((r) => r.history_id)).toEqual(all.filter((r) => r.captured_at >= capturedFrom && r.captured_at <= capturedTo).map((r) => r.history_id));
  });
});
