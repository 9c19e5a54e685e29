// The status page's script: shows the main page or an entity's page from the JSON API, and
// refreshes it every 10 seconds in place, keeping the reader's scroll and filters.
import { entityPage } from './entity-page.ts';
import { mainPage, type Page } from './main-page.ts';
import { tickTimes } from './time.ts';

const REFRESH_MS = 10_000;

function start(): void {
  const main = document.getElementById('main')!;
  const overall = document.getElementById('overall')!;
  const entity = /^\/entities\/([^/]+)\/(.+)$/.exec(location.pathname);
  const page: Page = entity ? entityPage(main, overall, decodeURIComponent(entity[1]!), decodeURIComponent(entity[2]!), () => void refresh()) : mainPage(main, overall, () => void refresh());
  const banner = document.createElement('p');
  banner.id = 'refresh-error';
  banner.className = 'bad';
  banner.hidden = true;
  main.before(banner);
  let running = false;
  /** A refresh asked for while one runs (a filter changed): it follows at once. */
  let again = false;
  async function refresh(): Promise<void> {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      await page.refresh();
      banner.hidden = true;
      document.body.dataset.loaded = 'true';
    } catch (error) {
      // Shown on the page (the last data stays): the daemon may be restarting.
      banner.textContent = `could not refresh: ${error instanceof Error ? error.message : String(error)}`;
      banner.hidden = false;
    } finally {
      running = false;
    }
    if (again) {
      again = false;
      await refresh();
    }
  }
  void refresh();
  setInterval(() => void refresh(), REFRESH_MS);
  setInterval(() => tickTimes(document), 1_000);
}

start();
