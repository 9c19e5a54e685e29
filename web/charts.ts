// Charts, drawn by uPlot (bundled from npm, served by edgewatch itself): a rule's firings per hour,
// and an entity's field over its stored snapshots with the threshold, re-arm level and firings.
import uPlot from 'uplot';
import type { HistoryJson, ThresholdJson } from '../src/service/api-types.ts';
import { exactTime } from './time.ts';

/** The chart's container keeps its chart, so that tests (and curious readers) read what it draws. */
export type ChartElement = HTMLElement & { chart?: uPlot };

const COLORS = { line: '#1f6fb2', bar: '#5b8def', threshold: '#c0392b', rearm: '#e08e0b', firing: '#c0392b' };

/** 24 bars, one per hour, oldest first; `hoursFrom` is the first hour's start. */
export function firingsChart(counts: readonly number[], hoursFrom: string): ChartElement {
  const container: ChartElement = document.createElement('div');
  container.className = 'sparkline';
  const first = Date.parse(hoursFrom) / 1000;
  const hours = counts.map((_, i) => first + i * 3600);
  const max = Math.max(1, ...counts);
  container.title = `${counts.reduce((a, b) => a + b, 0)} alerts in the last 24 h (per hour, from ${exactTime(hoursFrom)})`;
  container.chart = new uPlot(
    {
      width: 120,
      height: 28,
      legend: { show: false },
      cursor: { show: false },
      select: { show: false, left: 0, top: 0, width: 0, height: 0 },
      padding: [2, 0, 0, 0],
      scales: { x: { time: false, range: [first - 1800, first + 23 * 3600 + 1800] }, y: { range: [0, max] } },
      axes: [{ show: false }, { show: false }],
      series: [{}, { stroke: COLORS.bar, fill: COLORS.bar, paths: uPlot.paths.bars!({ size: [0.8, 8] }), points: { show: false } }],
    },
    [hours, [...counts]],
    container,
  );
  return container;
}

/** A value as the chart plots it: numbers as they are, yes/no as 1/0, anything else a gap. */
function plotted(value: number | string | boolean | null): number | null {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return null;
}

/** A little room on both sides, so that a mark on the first or last snapshot shows whole. */
function padded(_chart: uPlot, min: number, max: number): uPlot.Range.MinMax {
  const pad = max > min ? (max - min) * 0.03 : 60;
  return [min - pad, max + pad];
}

/** Whether a history has values to draw (numbers or booleans). */
export function isPlottable(history: HistoryJson): boolean {
  return history.points.some((point) => plotted(point.value) !== null);
}

/** Levels drawn across the chart: the threshold and re-arm level (and their negatives for abs). */
function levels(threshold: ThresholdJson | null): Array<{ label: string; value: number; color: string }> {
  if (!threshold) return [];
  const lines = (sign: 1 | -1) => [
    { label: `threshold ${sign * threshold.value}`, value: sign * threshold.value, color: COLORS.threshold },
    { label: `re-arm ${sign * threshold.rearm_at}`, value: sign * threshold.rearm_at, color: COLORS.rearm },
  ];
  return threshold.abs ? [...lines(1), ...lines(-1)] : lines(1);
}

/**
 * The field over the stored snapshots (x: when each was stored), with the threshold and re-arm lines,
 * and each firing marked on the snapshot it fired on. `onFiring` gets the alert id of a clicked mark.
 */
export function historyChart(history: HistoryJson, threshold: ThresholdJson | null, width: number, onFiring: (alertId: string) => void): ChartElement {
  const container: ChartElement = document.createElement('div');
  container.className = 'history-chart';
  const x = history.points.map((point) => Date.parse(point.at) / 1000);
  const y = history.points.map((point) => plotted(point.value));
  const lines = levels(threshold);
  const bySeq = new Map(history.points.map((point, i) => [point.seq, i]));
  const firingAt = new Map<number, string>();
  for (const alert of history.alerts) {
    const i = bySeq.get(alert.seq);
    if (i !== undefined) firingAt.set(i, alert.id);
  }
  const marks = y.map((value, i) => (firingAt.has(i) ? value : null));
  const data: uPlot.AlignedData = [x, y, marks, ...lines.map((line) => x.map(() => line.value))];
  const series: uPlot.Series[] = [
    { label: 'stored at', value: (_u, v) => (v === null ? '' : exactTime(new Date(v * 1000).toISOString())) },
    { label: history.field, stroke: COLORS.line, width: 2, points: { show: true, size: 5 }, spanGaps: false },
    { label: 'fired', stroke: COLORS.firing, fill: COLORS.firing, paths: () => null, points: { show: true, size: 11, width: 2, stroke: '#fff', fill: COLORS.firing } },
    ...lines.map((line): uPlot.Series => ({ label: line.label, stroke: line.color, width: 1.5, dash: [6, 4], points: { show: false } })),
  ];
  const chart = new uPlot({ width, height: 300, series, scales: { x: { time: true, range: padded } }, cursor: { points: { size: 8 } } }, data, container);
  // A click on (or near) a mark opens its alert.
  chart.over.addEventListener('click', (event) => {
    // Relative to the plotting area (the event's target may be a hover point inside it).
    const area = chart.over.getBoundingClientRect();
    const left = event.clientX - area.left;
    const i = chart.posToIdx(left);
    const id = firingAt.get(i);
    const value = marks[i];
    if (id === undefined || value === null || value === undefined) return;
    const near = Math.hypot(chart.valToPos(x[i]!, 'x') - left, chart.valToPos(value, 'y') - (event.clientY - area.top)) <= 12;
    if (near) onFiring(id);
  });
  container.chart = chart;
  return container;
}
