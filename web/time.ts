// Times as people read them: relative to the server's clock ("3 min ago"), the exact time on hover.

let skewMs = 0;

/** Counts relative times from the server's clock (its `now`), whatever the browser's says. */
export function syncClock(serverNow: string): void {
  skewMs = Date.parse(serverNow) - Date.now();
}

function serverNow(): number {
  return Date.now() + skewMs;
}

/** `2026-11-21 18:00:03 UTC` */
export function exactTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

export function relativeTime(iso: string, now = serverNow()): string {
  const ms = now - Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  const future = ms < 0;
  const s = Math.abs(ms) / 1000;
  let text: string;
  if (s < 5) return 'just now';
  if (s < 60) text = `${Math.floor(s)} s`;
  else if (s < 3600) text = `${Math.floor(s / 60)} min`;
  else if (s < 86_400 * 2) text = `${Math.floor(s / 3600)} h`;
  else text = `${Math.floor(s / 86_400)} d`;
  return future ? `in ${text}` : `${text} ago`;
}

/** A `<time>` showing the relative time, the exact one on hover; `never` for none. */
export function timeElement(iso: string | null, never = 'never'): HTMLElement {
  if (iso === null) {
    const span = document.createElement('span');
    span.className = 'muted';
    span.textContent = never;
    return span;
  }
  const time = document.createElement('time');
  time.dateTime = iso;
  time.title = exactTime(iso);
  time.textContent = relativeTime(iso);
  return time;
}

/** Brings every relative time of the page up to date, between two refreshes. */
export function tickTimes(root: ParentNode): void {
  for (const time of root.querySelectorAll('time')) time.textContent = relativeTime(time.dateTime);
}
