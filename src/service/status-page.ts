// The status page: one HTML document for `/` and for an entity's page, which its script
// (web/status-page.ts, built by `npm run build` into dist/web/ with the charting library) fills
// from the JSON API. The document holds no data and no inline script, so the Content-Security-Policy
// can allow only the page's own files.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PACKAGE_ROOT } from '../package-root.ts';

/** Where `npm run build` writes the page's files. */
export const WEB_ASSETS_DIR = path.join(PACKAGE_ROOT, 'dist', 'web');

/** The files served under /assets/, and nothing else: no path reaches beyond them. */
const ASSET_TYPES: Readonly<Record<string, string>> = {
  'status-page.js': 'text/javascript; charset=utf-8',
  'status-page.css': 'text/css; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
};

export async function readAsset(name: string): Promise<{ contentType: string; body: Buffer } | undefined> {
  const contentType = ASSET_TYPES[name];
  if (contentType === undefined) return undefined;
  try {
    return { contentType, body: await readFile(path.join(WEB_ASSETS_DIR, name)) };
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`status page file ${name} is not built in ${WEB_ASSETS_DIR}: run npm run build`, { cause });
    throw cause;
  }
}

export const STATUS_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>edgewatch</title>
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/status-page.css">
<script src="/assets/status-page.js" defer></script>
</head>
<body>
<header>
<h1><a href="/">edgewatch</a></h1>
<p id="overall" aria-live="polite">Loading…</p>
</header>
<main id="main"></main>
<noscript><p>The status page needs JavaScript. The same data is at <a href="/api/sources">/api/sources</a>, <a href="/api/rules">/api/rules</a>, <a href="/api/alerts">/api/alerts</a> and <a href="/api/silences">/api/silences</a>.</p></noscript>
</body>
</html>
`;
