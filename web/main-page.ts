// The main page: sources, rules, active silences and recent alerts (filtered by rule, severity and
// delivery status, a page at a time). Filters and page live in the address (?rule=&severity=
// &status=&before=&limit=), so that a refresh, a reload or a shared link keeps them.
import type { AlertJson, AlertsJson, RuleJson, RulesJson, SilencesJson, SourcesJson } from '../src/service/api-types.ts';
import { firingsChart, type ChartElement } from './charts.ts';
import { entityPath, getJson, h, table } from './dom.ts';
import { syncClock, timeElement } from './time.ts';
import { deliveryInWords, STATE_WORDS } from './words.ts';

const SEVERITIES = ['info', 'warning', 'critical'];
const DELIVERY_STATUSES = ['pending', 'delivered', 'dead', 'silenced', 'inhibited', 'digest'];
const FILTERS = ['rule', 'severity', 'status'] as const;
type FilterName = (typeof FILTERS)[number];

export interface Page {
  /** Reads the API and shows what it answered. */
  refresh(): Promise<void>;
}

/** A select of `all` plus the given values, showing `selected`. */
function filterSelect(name: FilterName, label: string, values: readonly string[], selected: string): HTMLSelectElement {
  const select = h('select', { name, id: `filter-${name}`, 'aria-label': label });
  setOptions(select, values, selected);
  return select;
}

function setOptions(select: HTMLSelectElement, values: readonly string[], selected: string): void {
  const current = [...select.options].map((option) => option.value);
  const wanted = ['', ...values];
  if (current.join('\n') !== wanted.join('\n')) {
    select.replaceChildren(...wanted.map((value) => h('option', { value }, value === '' ? 'all' : value)));
  }
  select.value = selected;
}

export function mainPage(main: HTMLElement, overall: HTMLElement, refreshNow: () => void): Page {
  const params = new URLSearchParams(location.search);
  const filters: Record<FilterName, string> = { rule: params.get('rule') ?? '', severity: params.get('severity') ?? '', status: params.get('status') ?? '' };
  let before = params.get('before') ?? '';
  /** Alerts per page (the API's default unless the address says). */
  const limit = params.get('limit') ?? '';
  /** The cursors of the newer pages, to go back. */
  const newer: string[] = [];
  let charts: ChartElement[] = [];

  const sources = h('section', { id: 'sources' });
  const rules = h('section', { id: 'rules' });
  const silences = h('section', { id: 'silences' });
  const alertList = h('div', { id: 'alert-list' });
  const pager = h('nav', { class: 'pager', 'aria-label': 'alert pages' });
  const selects = {
    rule: filterSelect('rule', 'rule', [], filters.rule),
    severity: filterSelect('severity', 'severity', SEVERITIES, filters.severity),
    status: filterSelect('status', 'delivery status', DELIVERY_STATUSES, filters.status),
  };
  const form = h(
    'form',
    { id: 'alert-filters', class: 'filters' },
    h('label', {}, 'rule ', selects.rule),
    h('label', {}, 'severity ', selects.severity),
    h('label', {}, 'delivery ', selects.status),
  );
  const alerts = h('section', { id: 'alerts' }, form, alertList, pager);
  main.replaceChildren(
    h('h2', {}, 'Sources'),
    sources,
    h('h2', {}, 'Rules'),
    rules,
    h('h2', {}, 'Active silences'),
    silences,
    h('h2', {}, 'Recent alerts'),
    alerts,
  );

  function saveAddress(): void {
    const query = new URLSearchParams();
    for (const name of FILTERS) if (filters[name] !== '') query.set(name, filters[name]);
    if (before !== '') query.set('before', before);
    if (limit !== '') query.set('limit', limit);
    const search = query.toString();
    history.replaceState(null, '', search === '' ? location.pathname : `?${search}`);
  }

  for (const name of FILTERS) {
    selects[name].addEventListener('change', () => {
      filters[name] = selects[name].value;
      before = '';
      newer.length = 0;
      saveAddress();
      refreshNow();
    });
  }
  form.addEventListener('submit', (event) => event.preventDefault());

  async function refresh(): Promise<void> {
    const query = new URLSearchParams();
    for (const name of FILTERS) if (filters[name] !== '') query.set(name, filters[name]);
    if (before !== '') query.set('before', before);
    if (limit !== '') query.set('limit', limit);
    const [sourcesJson, rulesJson, silencesJson, alertsJson] = await Promise.all([
      getJson<SourcesJson>('/api/sources'),
      getJson<RulesJson>('/api/rules'),
      getJson<SilencesJson>('/api/silences'),
      getJson<AlertsJson>(`/api/alerts?${query}`),
    ]);
    syncClock(sourcesJson.now);
    const scroll = window.scrollY;
    for (const chart of charts) chart.chart?.destroy();
    charts = [];
    overall.replaceChildren(...overallLine(sourcesJson, rulesJson));
    sources.replaceChildren(sourcesTable(sourcesJson));
    rules.replaceChildren(...rulesTable(rulesJson, charts));
    silences.replaceChildren(silencesTable(silencesJson));
    setOptions(selects.rule, rulesJson.rules.map((rule) => rule.name), filters.rule);
    const byName = new Map(rulesJson.rules.map((rule) => [rule.name, rule]));
    const filtered = FILTERS.some((name) => filters[name] !== '');
    alertList.replaceChildren(alertsTable(alertsJson.alerts, byName, filtered ? 'no alert matches these filters' : 'no alerts yet'));
    pager.replaceChildren(...pagerLinks(alertsJson));
    window.scrollTo(window.scrollX, scroll);
  }

  function pagerLinks(json: AlertsJson): HTMLElement[] {
    const links: HTMLElement[] = [];
    const go = (label: string, id: string, move: () => void): HTMLButtonElement => {
      const button = h('button', { type: 'button', id }, label);
      button.addEventListener('click', () => {
        move();
        saveAddress();
        document.getElementById('alerts')?.scrollIntoView();
        refreshNow();
      });
      return button;
    };
    if (before !== '') {
      links.push(go('« newest', 'page-newest', () => ((before = ''), (newer.length = 0))));
      links.push(go('‹ newer', 'page-newer', () => (before = newer.pop() ?? '')));
    }
    const next = json.next_before;
    if (next !== null) links.push(go('older ›', 'page-older', () => (newer.push(before), (before = next))));
    return links;
  }

  return { refresh };
}

function overallLine(sources: SourcesJson, rules: RulesJson): Array<string | HTMLElement> {
  const parts: Array<string | HTMLElement> = [h('strong', { class: sources.status === 'ok' ? 'good' : 'bad' }, sources.status === 'ok' ? 'healthy' : 'unhealthy')];
  if (sources.reasons.length > 0) parts.push(` (${sources.reasons.join('; ')})`);
  parts.push(` · API: ${sources.api} · database: ${sources.database.kind}${sources.database.ok ? '' : ' (unreachable)'} · ${rules.rules.length} rules loaded `, timeElement(rules.loaded_at));
  if (rules.last_reload && !rules.last_reload.ok) parts.push(' · ', h('span', { class: 'bad' }, 'the last reload failed: the previous rules keep running'));
  parts.push(' · updated ', timeElement(sources.now));
  return parts;
}

function sourcesTable(json: SourcesJson): HTMLElement {
  const rows = json.sources.map((s) =>
    h(
      'tr',
      { 'data-source': s.name },
      h('td', {}, s.name),
      h('td', {}, h('span', { class: `state state-${s.state}` }, STATE_WORDS[s.state]), s.recovered ? h('span', { class: 'state state-recovered', title: 'the last poll succeeded after an error' }, 'recovered') : null),
      h('td', {}, timeElement(s.last_success_at)),
      h('td', {}, s.last_error_at === null ? h('span', { class: 'muted' }, 'none') : h('span', {}, timeElement(s.last_error_at), h('div', { class: 'error-text' }, s.last_error ?? ''))),
      h('td', { class: 'num' }, `every ${s.interval_seconds} s`),
      h('td', { class: 'num' }, s.entities),
    ),
  );
  return table(['source', 'state', 'last success', 'last error', 'polled', 'entities'], rows, 'no sources');
}

function rulesTable(json: RulesJson, charts: ChartElement[]): HTMLElement[] {
  const problems = json.problems.length > 0 ? [h('ul', { class: 'problems' }, ...json.problems.map((problem) => h('li', {}, problem)))] : [];
  const rows = json.rules.map((rule) => {
    const chart = firingsChart(rule.firings_per_hour, rule.hours_from);
    charts.push(chart);
    return h(
      'tr',
      { 'data-rule': rule.name },
      h('td', {}, h('div', { class: 'rule-name' }, rule.name), rule.description ? h('div', { class: 'muted' }, rule.description) : null),
      h('td', {}, rule.source),
      h('td', {}, rule.trigger_text),
      h('td', {}, rule.filter_text === '' ? h('span', { class: 'muted' }, 'none') : rule.filter_text),
      h('td', {}, rule.notify.join(', '), rule.digest ? h('div', { class: 'muted' }, `digest: ${rule.digest.waiting_for}`) : null),
      h('td', {}, h('span', { class: `severity sev-${rule.severity}` }, rule.severity)),
      h('td', {}, timeElement(rule.last_fired_at)),
      h('td', { class: 'firings' }, chart, h('span', { class: 'count' }, rule.alerts_24h)),
    );
  });
  return [...problems, table(['rule', 'source', 'trigger', 'filter', 'notify', 'severity', 'last fired', 'last 24 h'], rows, 'no rules loaded')];
}

function silencesTable(json: SilencesJson): HTMLElement {
  const rows = json.silences.map((s) =>
    h(
      'tr',
      {},
      h('td', {}, Object.entries(s.matchers).map(([key, value]) => `${key}=${value}`).join(', ')),
      h('td', {}, timeElement(s.starts_at)),
      h('td', {}, timeElement(s.ends_at)),
      h('td', {}, s.comment ?? ''),
      h('td', {}, s.created_by ?? ''),
    ),
  );
  return table(['matchers', 'since', 'until', 'comment', 'by'], rows, 'no active silences');
}

export function alertsTable(alerts: readonly AlertJson[], rules: ReadonlyMap<string, RuleJson>, empty: string): HTMLElement {
  const rows = alerts.map((alert) =>
    h(
      'tr',
      { class: `alert sev-${alert.severity}`, 'data-alert': alert.id },
      h('td', {}, timeElement(alert.fired_at)),
      h('td', {}, h('span', { class: `severity sev-${alert.severity}` }, alert.severity)),
      h('td', {}, alert.rule),
      h('td', {}, h('a', { href: `${entityPath(alert.source, alert.entity)}?rule=${encodeURIComponent(alert.rule)}#alert-${alert.id}` }, `${alert.source}/${alert.entity}`)),
      h('td', { class: 'summary' }, alert.summary),
      h(
        'td',
        { class: 'deliveries' },
        ...alert.deliveries.map((d) => h('div', { class: `delivery status-${d.status}` }, deliveryInWords(d, rules.get(alert.rule)), d.last_error ? h('div', { class: 'error-text' }, d.last_error) : null)),
      ),
    ),
  );
  return table(['fired', 'severity', 'rule', 'entity', 'summary', 'deliveries'], rows, empty);
}
