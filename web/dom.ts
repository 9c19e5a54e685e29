// Building the page from API data: elements with text children only, so that every text from the
// API or a rule is shown as text (never parsed as markup). No innerHTML anywhere.

export type Child = Node | string | number | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Record<string, string | undefined> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) element.setAttribute(name, value);
  append(element, children);
  return element;
}

export function append(parent: Element, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(typeof child === 'number' ? String(child) : child);
  }
}

/** A table with a header row, or a short note when there are no rows. */
export function table(head: readonly string[], rows: readonly HTMLTableRowElement[], empty: string): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'empty' }, empty);
  return h('table', {}, h('thead', {}, h('tr', {}, ...head.map((title) => h('th', {}, title)))), h('tbody', {}, ...rows));
}

/** The path of an entity's page. */
export function entityPath(source: string, key: string): string {
  return `/entities/${encodeURIComponent(source)}/${encodeURIComponent(key)}`;
}

export async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(path, { headers: { accept: 'application/json' } });
  const body = (await response.json()) as T & { error?: { code: string; message: string } };
  if (!response.ok) throw new Error(body.error ? `${body.error.code}: ${body.error.message}` : `HTTP ${response.status} from ${path}`);
  return body;
}
