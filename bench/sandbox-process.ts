// The bench's sandbox, in its own process so that serving pages does not share a core's event loop
// with the poll being measured. Started with fork(): argv gives the size, IPC carries commands.
//   parent -> { cmd: 'mutate', fraction }   child -> { ok: 'mutated', events, kpis }
//   parent -> { cmd: 'close' }              child exits
import { startSandbox } from '../src/sandbox/index.ts';

const events = Number(process.argv[2] ?? 50_000);
const kpis = Number(process.argv[3] ?? 5_000);
const sandbox = await startSandbox({ events, kpis, port: 0, host: '127.0.0.1', speed: 0 });

// A seeded generator, so every run moves the same entities the same way.
let state = 0x9e3779b9;
function random(): number {
  state = (state + 0x6d2b79f5) | 0;
  let t = Math.imul(state ^ (state >>> 15), 1 | state);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
}
const round1 = (x: number): number => Math.round(x * 10) / 10;

/** Moves `fraction` of the events (new snapshots, captured now) and of the KPI rows, then refreshes the market-search data. */
function mutate(fraction: number): { events: number; kpis: number } {
  const world = sandbox.world;
  // The clock stands still (speed 0): the new snapshots are captured at the watermark's minute.
  const tickers = world.eventTickers();
  const eventStep = Math.max(1, Math.round(1 / fraction));
  let movedEvents = 0;
  for (let i = 0; i < tickers.length; i += eventStep) {
    const patch: Record<string, unknown> = { edge_pp: round1(random() * 50 - 25) };
    if (random() < 0.5) patch.confidence_score = Math.floor(random() * 11);
    if (random() < 0.3) patch.market_probability = round1(1 + random() * 98);
    if (random() < 0.05) patch.eligibility_status = random() < 0.5 ? 'paused' : 'open';
    world.updateEvent(tickers[i]!, patch);
    movedEvents++;
  }
  const ids = world.kpiIds();
  const kpiStep = Math.max(1, Math.round(1 / fraction));
  let movedKpis = 0;
  for (let i = 0; i < ids.length; i += kpiStep) {
    const id = ids[i]!;
    if (movedKpis % 5 === 0) world.landActual(id, round1(random() * 1000));
    else world.updateKpi(id, { market_probability: round1(1 + random() * 98), model_probability: round1(1 + random() * 98) });
    if (movedKpis % 7 === 0) world.updateKpi(id, { liquidity_tier: ['high', 'medium', 'low'][Math.floor(random() * 3)] });
    movedKpis++;
  }
  // The market-search data's nightly refresh: it shows the moves too.
  world.refreshMarkets();
  return { events: movedEvents, kpis: movedKpis };
}

process.on('message', (message: { cmd: string; fraction?: number }) => {
  if (message.cmd === 'mutate') process.send!({ ok: 'mutated', ...mutate(message.fraction ?? 0.05) });
  if (message.cmd === 'close') void sandbox.close().then(() => process.exit(0));
});
// The parent going away ends the sandbox too.
process.on('disconnect', () => void sandbox.close().then(() => process.exit(0)));
process.send!({ ok: 'ready', url: sandbox.url });
