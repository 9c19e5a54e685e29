// A daemon run in-process against a sandbox whose world stands still (the test moves it), for the
// status page and its API; and a headless Chromium to look at the page.
import { rmSync } from 'node:fs';
import { chromium, type BrowserContext } from 'playwright-core';
import { readConfig } from '../../src/config.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { createDaemon, type Daemon } from '../../src/service/daemon.ts';
import { createLogger } from '../../src/service/logger.ts';
import { startSandboxWithRules, type SandboxWithRules } from './cli.ts';
import { eventsBaselineDone } from './daemon.ts';
import { tempDir, writeRules } from './files.ts';
import { TEMPLATES_DIR } from './pipeline.ts';

export interface StatusScene {
  sandbox: Sandbox;
  /** The sandbox's event tickers, in its order. */
  tickers: string[];
  /** The database file the daemon writes. */
  dbPath: string;
  /** The status page root, `http://127.0.0.1:<port>/`. */
  url: string;
  /** What console channels printed. */
  printed: string[];
  close(): Promise<void>;
}

/**
 * A sandbox of 10 events, rules written by `rules(tickers)` (after `prepare` set the world up), and
 * a daemon polling every second, started and past its events baseline: what changes next fires.
 */
export async function startStatusScene(rules: (tickers: string[]) => string, prepare: (sandbox: Sandbox, tickers: string[]) => void = () => undefined): Promise<StatusScene> {
  const scene: SandboxWithRules = await startSandboxWithRules({ sandbox: { events: 10, kpis: 3 }, dirPrefix: 'edgewatch-status-' });
  const tickers = scene.sandbox.world.eventTickers();
  let daemon: Daemon | undefined;
  const close = async () => {
    await daemon?.stop();
    await scene.close();
  };
  try {
    prepare(scene.sandbox, tickers);
    writeRules(scene.dir, rules(tickers));
    const printed: string[] = [];
    const config = readConfig({ ...scene.env, EDGEWATCH_TEMPLATES: TEMPLATES_DIR, EDGEWATCH_PORT: '0', EDGEWATCH_POLL_EVENTS: '1s', EDGEWATCH_POLL_KPIS: '1s' });
    daemon = createDaemon({ config, logger: createLogger('silent'), out: (line) => printed.push(line) });
    const { url } = await daemon.start();
    await eventsBaselineDone(url);
    return { sandbox: scene.sandbox, tickers, dbPath: scene.dbPath, url, printed, close };
  } catch (error) {
    await close();
    throw error;
  }
}

export interface Chromium {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Debian's chromium, headless, on a fresh profile that close() removes. */
export async function launchChromium(): Promise<Chromium> {
  const profile = tempDir('edgewatch-chromium-');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1400, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
