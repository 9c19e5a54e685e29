// The read-only status page at `/`, rendered on the server. Every value is escaped: text from the
// API (event names, summaries) is data, never markup.
import { escapeHtml } from '../render/index.ts';
import type { AlertListing } from '../store/index.ts';
import type { HealthReport } from './health.ts';

export interface StatusRule {
  name: string;
  source: string;
  trigger: string;
  notify: string[];
  lastFiredAt: string | null;
}

export interface StatusPageView {
  now: string;
  api: string;
  health: HealthReport;
  rules: StatusRule[];
  alerts: AlertListing[];
}

const e = (value: unknown): string => escapeHtml(value === null || value === undefined ? '' : String(value));

function table(head: string[], rows: string[][], empty: string): string {
  if (rows.length === 0) return `<p class="empty">${e(empty)}</p>`;
  const th = head.map((h) => `<th>${e(h)}</th>`).join('');
  // Cells arrive escaped (some hold small markup of our own, such as the delivery lists).
  const body = rows.map((cells) => `<tr>${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('\n');
  return `<table><thead><tr>${th}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

export function renderStatusPage(view: StatusPageView): string {
  const { health } = view;
  const sources = Object.entries(health.sources).map(([name, s]) => [
    e(name),
    !s.leader && health.database.kind === 'postgres' ? 'polled by another process' : s.stale ? '<span class="bad">stale</span>' : s.idle ? 'idle (nothing to check)' : '<span class="good">ok</span>',
    e(s.last_success_at ?? 'never'),
    e(s.last_error ? `${s.last_error_at ?? ''} ${s.last_error}` : ''),
    e(`${s.interval_seconds} s`),
  ]);
  const rules = view.rules.map((r) => [e(r.name), e(r.source), e(r.trigger), e(r.notify.join(', ')), e(r.lastFiredAt ?? 'never')]);
  const alerts = view.alerts.map((a) => [
    e(a.fired_at),
    e(a.severity),
    e(a.rule),
    e(`${a.source}/${a.entity}`),
    e(a.summary),
    a.deliveries.map((d) => `<div>${e(`${d.channel}: ${d.status} (${d.attempts})`)}${d.last_error ? ` <small>${e(d.last_error)}</small>` : ''}</div>`).join(''),
  ]);
  const reload = health.rules.last_reload;
  const problems = health.rules.problems.map((p) => `<li>${e(p)}</li>`).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="15">
<title>edgewatch</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #222; }
table { border-collapse: collapse; margin-bottom: 1.5rem; }
th, td { border: 1px solid #ddd; padding: 0.3rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
.bad { color: #b00; font-weight: bold; } .good { color: #070; } .empty { color: #777; }
small { color: #777; }
</style>
</head>
<body>
<h1>edgewatch</h1>
<p id="overall">Status: <strong class="${health.status === 'ok' ? 'good' : 'bad'}">${e(health.status)}</strong>${health.reasons.length > 0 ? ` (${e(health.reasons.join('; '))})` : ''}. API: ${e(view.api)}. Database: ${e(health.database.kind)}${health.database.ok ? '' : ' <span class="bad">(unreachable)</span>'}. Page rendered ${e(view.now)}.</p>
<h2>Sources</h2>
<section id="sources">${table(['source', 'state', 'last success', 'last error', 'interval'], sources, 'no sources')}</section>
<h2>Rules</h2>
<section id="rules">
<p>${e(`${health.rules.rules} rules, ${health.rules.channels} channels, loaded ${health.rules.loaded_at}`)}${reload ? e(`; last reload ${reload.at}: ${reload.ok ? 'ok' : 'failed, the previous rules keep running'}`) : ''}</p>
${problems ? `<ul class="bad">${problems}</ul>` : ''}
${table(['rule', 'source', 'trigger', 'notify', 'last fired'], rules, 'no rules loaded')}
</section>
<h2>Recent alerts</h2>
<section id="alerts">${table(['fired', 'severity', 'rule', 'entity', 'summary', 'deliveries'], alerts, 'no alerts yet')}</section>
</body>
</html>
`;
}
