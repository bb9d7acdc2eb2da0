'use strict';
/**
 * The summary of repeated benchmark runs (`node bench/run.js --repeat <n>`): for each figure of
 * the floor and the gateway, the median over the runs and the range, and the targets checked on
 * the medians. Runs on a shared machine move by tens of percent; one run proves little, the
 * median of several is what the README reports.
 */

/** The figures summarised, read from one run's report (see buildReport in run.js). */
const FIGURES = [
  {
    key: 'saturatedRps',
    label: 'saturated req/s',
    digits: 0,
    read: (r, t) => r.results[t]?.saturated.requestsPerSecond,
  },
  { key: 'addedP50Ms', label: 'added p50 ms', digits: 3, read: (r, t) => r.added[t]?.p50Ms },
  { key: 'addedP99Ms', label: 'added p99 ms', digits: 3, read: (r, t) => r.added[t]?.p99Ms },
  { key: 'addedTtfbP50Ms', label: 'added TTFB p50 ms', digits: 3, read: (r, t) => r.added[t]?.ttfbP50Ms },
  { key: 'rssMaxMb', label: 'RSS max MB', digits: 0, read: (r, t) => r.results[t]?.rss?.maxMb },
];

/** The gateway's ratios to the floor of the same run; their medians are summarised too. */
const RATIOS = ['throughput', 'addedP50', 'addedP99', 'addedTtfbP50', 'rss'];

/** Median of the finite values (the mean of the middle two for an even count); null when none. */
function median(values) {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function spread(values) {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return null;
  return { median: median(finite), min: Math.min(...finite), max: Math.max(...finite), runs: finite.length };
}

/** The five targets, each against the figure it judges (the keys of FIGURES). */
const CHECKS = {
  addedP50Ms: { name: 'added p50 ms', limit: 'addedP50Ms', atMost: true },
  addedP99Ms: { name: 'added p99 ms', limit: 'addedP99Ms', atMost: true },
  addedTtfbP50Ms: { name: 'added TTFB p50 ms', limit: 'addedTtfbMs', atMost: true },
  saturatedRps: { name: 'saturated req/s', limit: 'throughputRps', atMost: false },
  rssMaxMb: { name: 'RSS max MB', limit: 'rssMb', atMost: true },
};

/**
 * The targets checked against figures, for one run's report and for the medians alike. A figure
 * left undefined is not checked; one that is null (not measured) fails. `shown` is how the value
 * is reported (the comparison uses it as given).
 * @param {Record<string, number | null | undefined>} values by the keys of CHECKS
 * @param {object} targets the TARGETS of run.js
 */
function checkTargets(values, targets, shown = (value) => value) {
  const checks = {};
  for (const [key, check] of Object.entries(CHECKS)) {
    const value = values[key];
    if (value === undefined) continue;
    const limit = targets[check.limit];
    checks[check.name] = {
      value: value === null ? null : shown(value),
      target: `${check.atMost ? '<=' : '>='} ${limit}`,
      pass: value !== null && (check.atMost ? value <= limit : value >= limit),
    };
  }
  return checks;
}

/**
 * @param {object[]} reports one report per run, as buildReport returns them
 * @param {object} targets the TARGETS of run.js
 */
function summarise(reports, targets) {
  const figures = {};
  for (const target of ['floor', 'gateway']) {
    const byFigure = {};
    for (const figure of FIGURES) {
      const found = spread(reports.map((report) => figure.read(report, target)));
      if (found) byFigure[figure.key] = found;
    }
    if (Object.keys(byFigure).length > 0) figures[target] = byFigure;
  }
  const ratiosToFloor = {};
  for (const name of RATIOS) {
    const found = spread(reports.map((report) => report.ratiosToFloor?.[name]));
    if (found) ratiosToFloor[name] = found;
  }
  const medians = {};
  for (const [key, found] of Object.entries(figures.gateway ?? {})) medians[key] = found.median;
  const checks = checkTargets(medians, targets, (value) => Number(value.toFixed(3)));
  return { runs: reports.length, figures, ratiosToFloor, checks };
}

function formatSpread(found, digits) {
  if (!found) return '-';
  const fixed = (value) => value.toFixed(digits);
  return found.runs === 1
    ? fixed(found.median)
    : `${fixed(found.median)} (${fixed(found.min)}-${fixed(found.max)})`;
}

/** The summary as text lines: one row per figure, floor and gateway side by side. */
function summaryLines(summary) {
  const rows = FIGURES.map((figure) => [
    figure.label,
    formatSpread(summary.figures.floor?.[figure.key], figure.digits),
    formatSpread(summary.figures.gateway?.[figure.key], figure.digits),
  ]);
  const header = ['figure', 'floor, median (range)', 'gateway, median (range)'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  const lines = [
    `median of ${summary.runs} run${summary.runs === 1 ? '' : 's'}`,
    line(header),
    widths.map((w) => '-'.repeat(w)).join('  '),
  ];
  for (const row of rows) lines.push(line(row));
  const ratios = Object.entries(summary.ratiosToFloor)
    .map(([name, found]) => `${name} x${found.median.toFixed(2)}`)
    .join(', ');
  if (ratios) lines.push(`gateway vs floor (median of the runs' ratios): ${ratios}`);
  for (const [name, check] of Object.entries(summary.checks)) {
    lines.push(
      `  ${check.pass ? 'PASS' : 'FAIL'}  ${name} (median): ${check.value} (target ${check.target})`,
    );
  }
  return lines;
}

module.exports = { summarise, summaryLines, median, checkTargets };
