// An entity's page (/entities/{source}/{key}?rule=NAME or ?field=NAME): a chart of a rule's trigger
// field over the stored snapshots with the threshold and re-arm lines and each firing marked and
// linked to its alert, then its alerts and its latest snapshot's fields.
import type { EntityJson, HistoryJson, RuleJson, RulesJson } from '../src/service/api-types.ts';
import { historyChart, isPlottable, type ChartElement } from './charts.ts';
import { getJson, h, table } from './dom.ts';
import type { Page } from './main-page.ts';
import { alertsTable } from './main-page.ts';
import { syncClock, timeElement } from './time.ts';

/** The rule (and field) to chart: the one asked for, else the one that fired last here, else the source's first with a field. */
function chooseChart(entity: EntityJson, rules: readonly RuleJson[], params: URLSearchParams): { rule?: RuleJson; field?: string } {
  const withField = rules.filter((rule) => rule.source === entity.source && rule.field !== null);
  const asked = withField.find((rule) => rule.name === params.get('rule'));
  if (asked) return { rule: asked, field: asked.field! };
  const field = params.get('field');
  if (field) return { field };
  const fired = entity.alerts.map((alert) => withField.find((rule) => rule.name === alert.rule)).find((rule) => rule !== undefined);
  const rule = fired ?? withField[0];
  if (rule) return { rule, field: rule.field! };
  const numeric = Object.entries(entity.snapshot).find(([, value]) => typeof value === 'number');
  return numeric ? { field: numeric[0] } : {};
}

function historyPath(entity: EntityJson, field: string): string {
  return `/api/entities/${encodeURIComponent(entity.source)}/${encodeURIComponent(entity.key)}/history?field=${encodeURIComponent(field)}`;
}

export function entityPage(main: HTMLElement, overall: HTMLElement, source: string, key: string, refreshNow: () => void): Page {
  const params = new URLSearchParams(location.search);
  let chart: ChartElement | undefined;
  let scrolledToTarget = false;

  async function refresh(): Promise<void> {
    const entityApi = `/api/entities/${encodeURIComponent(source)}/${encodeURIComponent(key)}`;
    const [entity, rules] = await Promise.all([getJson<EntityJson>(entityApi), getJson<RulesJson>('/api/rules')]);
    syncClock(entity.now);
    const choice = chooseChart(entity, rules.rules, params);
    const history = choice.field === undefined ? undefined : await getJson<HistoryJson>(historyPath(entity, choice.field));
    const scroll = window.scrollY;
    chart?.chart?.destroy();
    chart = undefined;
    document.title = `${entity.title} · edgewatch`;
    overall.replaceChildren(h('a', { href: '/' }, '« status'), ` · ${entity.source}/${entity.key} · updated `, timeElement(entity.now));
    const byName = new Map(rules.rules.map((rule) => [rule.name, rule]));
    const chartSection = h('section', { id: 'chart-section' });
    if (history && choice.field !== undefined) {
      chartSection.append(...chartParts(entity, rules.rules, choice, history));
    } else {
      chartSection.append(h('p', { class: 'empty' }, 'no rule of this source watches a field, and the snapshot has no number to chart'));
    }
    main.replaceChildren(
      h('h2', {}, entity.title),
      h('p', { class: 'muted' }, `${entity.source}/${entity.key} · snapshot #${entity.seq} · first seen `, timeElement(entity.first_seen_at), ' · last changed ', timeElement(entity.updated_at)),
      chartSection,
      h('h3', {}, 'Open alerts'),
      h('section', { id: 'open-alerts' }, alertsTable(entity.open_alerts, byName, 'no open alert')),
      h('h3', {}, 'Latest alerts'),
      h('section', { id: 'entity-alerts' }, alertsTable(entity.alerts, byName, 'no alert fired on this entity')),
      h('h3', {}, 'Latest snapshot'),
      h('section', { id: 'fields' }, table(['field', 'value'], entity.fields.map((f) => h('tr', {}, h('th', {}, f.field), h('td', {}, f.text))), 'no fields')),
    );
    const place = document.getElementById('chart');
    if (history && place) {
      chart = historyChart(history, choice.rule?.threshold ?? null, Math.max(320, place.clientWidth), (id) => {
        location.hash = `alert-${id}`;
      });
      place.replaceChildren(chart);
    }
    window.scrollTo(window.scrollX, scroll);
    // The content came after the browser looked for the #alert-... target: look again, once.
    if (!scrolledToTarget && location.hash.length > 1) document.getElementById(decodeURIComponent(location.hash.slice(1)))?.scrollIntoView({ block: 'center' });
    scrolledToTarget = true;
  }

  function chartParts(entity: EntityJson, rules: readonly RuleJson[], choice: { rule?: RuleJson; field?: string }, history: HistoryJson): HTMLElement[] {
    const candidates = rules.filter((rule) => rule.source === entity.source && rule.field !== null);
    const select = h('select', { id: 'chart-rule', 'aria-label': 'rule to chart' }, ...candidates.map((rule) => h('option', { value: rule.name }, `${rule.name}: ${rule.trigger_text}`)));
    if (choice.rule) select.value = choice.rule.name;
    else select.prepend(h('option', { value: '', selected: '' }, `field ${history.field}`));
    select.addEventListener('change', () => {
      params.delete('field');
      params.set('rule', select.value);
      window.history.replaceState(null, '', `${location.pathname}?${params}${location.hash}`);
      refreshNow();
    });
    const firings = history.alerts
      .slice()
      .reverse()
      .map((alert) =>
        h(
          'tr',
          { id: `alert-${alert.id}`, class: `alert sev-${alert.severity}` },
          h('td', {}, timeElement(alert.fired_at)),
          h('td', {}, h('span', { class: `severity sev-${alert.severity}` }, alert.severity)),
          h('td', {}, alert.rule),
          h('td', { class: 'summary' }, alert.summary),
          h('td', { class: 'num' }, `#${alert.seq}`),
        ),
      );
    return [
      h('h3', {}, `${history.field} over the stored snapshots`),
      h('label', { class: 'filters' }, 'chart ', select),
      isPlottable(history) ? h('div', { id: 'chart', class: 'chart' }) : h('p', { class: 'empty' }, `${history.field} holds no number in the stored snapshots`),
      h('p', { class: 'muted' }, `${history.points.length} stored snapshots; red marks: alerts fired on ${history.field} (click one to see it below).`),
      h('h3', {}, 'Firings on this chart'),
      h('section', { id: 'firings' }, table(['fired', 'severity', 'rule', 'summary', 'snapshot'], firings, 'no alert fired on this field')),
    ];
  }

  return { refresh };
}
