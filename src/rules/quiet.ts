// Quiet hours of a channel: a daily window in a time zone (by IANA name), on some weekdays. A
// window whose end is not after its start runs across midnight; `days` name the day it starts.
// Pure: the time is a parameter.
import type { Quiet, Weekday } from './schema.ts';
import { WEEKDAYS } from './schema.ts';

interface LocalTime {
  year: number;
  month: number;
  day: number;
  minutes: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The wall-clock time of an instant in a zone (seconds dropped). */
function localTime(instant: number, timeZone: string): LocalTime & { seconds: number } {
  const parts = Object.fromEntries(formatterFor(timeZone).formatToParts(new Date(instant)).map((p) => [p.type, Number(p.value)]));
  return { year: parts.year!, month: parts.month!, day: parts.day!, minutes: parts.hour! * 60 + parts.minute!, seconds: parts.second! };
}

/** The zone's offset from UTC at an instant, in milliseconds. */
function offsetAt(instant: number, timeZone: string): number {
  const t = localTime(instant, timeZone);
  return Date.UTC(t.year, t.month - 1, t.day, 0, t.minutes, t.seconds) - Math.floor(instant / 1000) * 1000;
}

/** The instant of a wall-clock time in a zone (a time skipped by a DST change falls after the gap). */
function instantOf(local: LocalTime, timeZone: string): number {
  const guess = Date.UTC(local.year, local.month - 1, local.day, 0, local.minutes);
  const first = guess - offsetAt(guess, timeZone);
  return guess - offsetAt(first, timeZone);
}

function weekday(local: Pick<LocalTime, 'year' | 'month' | 'day'>, shiftDays = 0): Weekday {
  return WEEKDAYS[new Date(Date.UTC(local.year, local.month - 1, local.day + shiftDays)).getUTCDay()]!;
}

/** The calendar day `shiftDays` from a local date, at `minutes` past midnight. */
function dayAt(local: LocalTime, shiftDays: number, minutes: number): LocalTime {
  const date = new Date(Date.UTC(local.year, local.month - 1, local.day + shiftDays));
  return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate(), minutes };
}

function minutesOf(clock: string): number {
  const [hours, minutes] = clock.split(':').map(Number) as [number, number];
  return hours * 60 + minutes;
}

/** When the quiet window holding `now` ends, or undefined when `now` is outside every window. */
export function quietUntil(quiet: Quiet, now: Date): Date | undefined {
  const zone = quiet.timezone;
  const local = localTime(now.getTime(), zone);
  const from = minutesOf(quiet.from);
  const to = minutesOf(quiet.to);
  const on = (day: Weekday): boolean => quiet.days === undefined || quiet.days.includes(day);
  const end = (shiftDays: number): Date => new Date(instantOf(dayAt(local, shiftDays, to), zone));
  if (from < to) {
    return on(weekday(local)) && local.minutes >= from && local.minutes < to ? end(0) : undefined;
  }
  // Across midnight (or a whole day when from equals to): started today, or yesterday.
  if (local.minutes >= from && on(weekday(local))) return end(1);
  if (local.minutes < to && on(weekday(local, -1))) return end(0);
  return undefined;
}
