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

/** Which check of a run's report a figure is, and how it passes. */
const CHECKS = {
  addedP50Ms: {
    name: 'added p50 ms',
    pass: (value, targets) => value <= targets.addedP50Ms,
    target: (t) => `<= ${t.addedP50Ms}`,
  },
  addedP99Ms: {
    name: 'added p99 ms',
    pass: (value, targets) => value <= targets.addedP99Ms,
    target: (t) => `<= ${t.addedP99Ms}`,
  },
  addedTtfbP50Ms: {
    name: 'added TTFB p50 ms',
    pass: (value, targets) => value <= targets.addedTtfbMs,
    target: (t) => `<= ${t.addedTtfbMs}`,
  },
  saturatedRps: {
    name: 'saturated req/s',
    pass: (value, targets) => value >= targets.throughputRps,
    target: (t) => `>= ${t.throughputRps}`,
  },
  rssMaxMb: {
    name: 'RSS max MB',
    pass: (value, targets) => value <= targets.rssMb,
    target: (t) => `<= ${t.rssMb}`,
  },
};

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
  const checks = {};
  const gateway = figures.gateway ?? {};
  for (const [key, check] of Object.entries(CHECKS)) {
    const figure = gateway[key];
    if (!figure) continue;
    checks[check.name] = {
      value: Number(figure.median.toFixed(3)),
      target: check.target(targets),
      pass: check.pass(figure.median, targets),
    };
  }
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

module.exports = { summarise, summaryLines, median };
