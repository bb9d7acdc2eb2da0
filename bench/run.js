'use strict';
/**
 * Switchboard data-plane benchmark. Starts, on 127.0.0.1: a mock OpenAI upstream and the floor
 * proxy (each in its own process), and the gateway (see gateway-target.js); then measures the
 * upstream called directly, the floor and the gateway with the same load, one after the other:
 *
 *   1. saturated JSON throughput and latency (autocannon, closed loop, ~50 connections);
 *   2. JSON latency at a fixed rate (our open-loop client: requests leave on a uniform schedule);
 *   3. the same at the same rate through autocannon `overallRate`, for comparison;
 *   4. stream time to first byte at a fixed rate (open-loop client);
 *   and the RSS of the process under test, sampled from /proc during its runs.
 *
 * Usage: node bench/run.js [--quick] [--duration <s>] [--rate <req/s>] [--connections <n>] [--no-gateway]
 *                         [--repeat <n>]   (n runs, then the median of each figure)
 *        node bench/run.js --soak [--duration <s>] [--rate <req/s>] [--sample-every <s>]   (memory soak)
 * See bench/README.md for what the figures mean.
 */
const { fork } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');
const autocannon = require('autocannon');
const { Pool } = require('undici');
const { startGateway } = require('./gateway-target');
const { runSoak } = require('./soak');
const { checkTargets, summarise, summaryLines } = require('./summary');

const ROUTE = '/v1/chat/completions';
const JSON_BODY = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'Hello, how are you today?' },
  ],
  temperature: 0.7,
});
const STREAM_BODY = JSON.stringify({ ...JSON.parse(JSON_BODY), stream: true });
/** Latency samples kept per run; beyond it the run still counts requests but stops sampling. */
const MAX_SAMPLES = 2_000_000;
const CHILD_READY_TIMEOUT_MS = 10_000;

/** Targets from issue 3, checked against the gateway's figures. */
const TARGETS = {
  addedP50Ms: 0.5,
  addedP99Ms: 2,
  addedTtfbMs: 0.5,
  throughputRps: 5000,
  rssMb: 200,
};

// ---------------------------------------------------------------------------------------------
// Process hygiene: every child is tracked and killed on exit, on signals and on errors.

const children = new Set();

function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

function killAll(signal = 'SIGTERM') {
  for (const child of children) {
    try {
      child.kill(signal);
    } catch {
      // Already gone.
    }
  }
}

async function stopAll() {
  const waiting = [...children].map(
    (child) =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
      }),
  );
  killAll('SIGTERM');
  await Promise.all(waiting);
}

process.on('exit', () => killAll('SIGKILL'));
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    console.error(`\nbench: ${signal}, stopping children`);
    killAll('SIGKILL');
    process.exit(130);
  });
}

function forkReady(script, env) {
  const child = track(
    fork(path.join(__dirname, script), [], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${script} not ready in ${CHILD_READY_TIMEOUT_MS} ms`)),
      CHILD_READY_TIMEOUT_MS,
    );
    child.once('message', (message) => {
      clearTimeout(timer);
      if (message && message.type === 'ready') resolve({ child, url: `http://127.0.0.1:${message.port}` });
      else reject(new Error(`${script}: unexpected message ${JSON.stringify(message)}`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with code ${code}`));
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Statistics.

/** Nearest-rank percentile of a sorted sample. */
function percentile(sorted, q) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

function summarize(samples, count = samples.length) {
  const sorted = Float64Array.from(
    samples.subarray ? samples.subarray(0, count) : samples.slice(0, count),
  ).sort();
  return {
    samples: sorted.length,
    p50: round(percentile(sorted, 0.5)),
    p90: round(percentile(sorted, 0.9)),
    p99: round(percentile(sorted, 0.99)),
    max: round(sorted[sorted.length - 1]),
  };
}

function round(value, digits = 3) {
  return Number.isFinite(value) ? Number(value.toFixed(digits)) : null;
}

/** Samples VmRSS of a process from /proc every `everyMs` until stopped. */
function rssSampler(pid, everyMs = 250) {
  const values = [];
  const read = () => {
    try {
      const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
      const match = /VmRSS:\s+(\d+) kB/.exec(status);
      if (match && values.length < 100_000) values.push(Number(match[1]) / 1024);
    } catch {
      // Process gone or /proc unavailable: no sample.
    }
  };
  read();
  const timer = setInterval(read, everyMs);
  return () => {
    clearInterval(timer);
    read();
    if (values.length === 0) return null;
    return {
      samples: values.length,
      firstMb: round(values[0], 1),
      lastMb: round(values[values.length - 1], 1),
      maxMb: round(Math.max(...values), 1),
    };
  };
}

// ---------------------------------------------------------------------------------------------
// Load.

function requestHeaders(target) {
  return { 'content-type': 'application/json', ...target.headers };
}

/** Closed-loop load with autocannon; latencies are taken from its per-response event in float ms. */
function runAutocannon(target, { connections, durationS, overallRate, body = JSON_BODY }) {
  return new Promise((resolve, reject) => {
    const latencies = new Float64Array(
      Math.min(MAX_SAMPLES, Math.ceil((overallRate ?? 50_000) * durationS * 1.2) + 1000),
    );
    let count = 0;
    const instance = autocannon(
      {
        url: `${target.url}${ROUTE}`,
        method: 'POST',
        headers: requestHeaders(target),
        body,
        connections,
        duration: durationS,
        pipelining: 1,
        timeout: 10,
        ...(overallRate ? { overallRate } : {}),
      },
      (error, result) => {
        if (error) return reject(error);
        const latency = summarize(latencies, count);
        resolve({
          requestsPerSecond: round(result.requests.average, 1),
          totalRequests: result.requests.total,
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          latencyMs: latency,
        });
      },
    );
    // autocannon's own histogram has 1 ms resolution; sub-millisecond differences need the raw times.
    instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
      if (statusCode >= 200 && statusCode < 300 && count < latencies.length)
        latencies[count++] = responseTimeMs;
    });
  });
}

/**
 * Open-loop fixed-rate client: request i leaves at start + i/rate whether or not earlier ones have
 * answered, so a slow answer cannot delay the next send (no coordinated omission). Records the time
 * to the first body byte and to the end of the body, from the moment the request is sent. Returns
 * the raw samples of one slice; `fixedRateResult` merges slices into the reported figures.
 */
async function fixedRateSlice(target, pool, { rate, durationS, body, maxInFlight = 512 }) {
  const total = Math.max(1, Math.round(rate * durationS));
  const ttfb = new Float64Array(total);
  const latency = new Float64Array(total);
  const headers = requestHeaders(target);
  const interval = 1000 / rate;
  let ok = 0;
  let failed = 0;
  let skipped = 0;
  let inFlight = 0;
  let maxLagMs = 0;
  let firstError;

  const one = async () => {
    const sentAt = performance.now();
    try {
      const response = await pool.request({ path: ROUTE, method: 'POST', headers, body });
      let firstByteAt = -1;
      for await (const _chunk of response.body) {
        if (firstByteAt < 0) firstByteAt = performance.now();
      }
      const endAt = performance.now();
      if (response.statusCode >= 200 && response.statusCode < 300 && firstByteAt >= 0) {
        ttfb[ok] = firstByteAt - sentAt;
        latency[ok] = endAt - sentAt;
        ok++;
      } else {
        failed++;
        firstError ??= `HTTP ${response.statusCode}`;
      }
    } catch (error) {
      failed++;
      firstError ??= error.message;
    } finally {
      inFlight--;
    }
  };

  const start = performance.now();
  const deadline = start + durationS * 1000 + 15_000;
  let sent = 0;
  while (sent < total && performance.now() < deadline) {
    const now = performance.now();
    const due = Math.min(total, Math.floor((now - start) / interval) + 1);
    while (sent < due) {
      maxLagMs = Math.max(maxLagMs, now - (start + sent * interval));
      sent++;
      // Past this bound the target is overloaded; count the miss rather than queue without limit.
      if (inFlight >= maxInFlight) {
        skipped++;
        continue;
      }
      inFlight++;
      void one();
    }
    const wait = start + sent * interval - performance.now();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait)));
  }
  while (inFlight > 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  return {
    sent,
    elapsedS: (performance.now() - start) / 1000,
    ok,
    failed,
    skipped,
    firstError,
    maxLagMs,
    ttfb: ttfb.subarray(0, ok),
    latency: latency.subarray(0, ok),
  };
}

/** The figures of one target's fixed-rate slices, taken together. */
function fixedRateResult(rate, slices) {
  const join = (key) => {
    const all = new Float64Array(slices.reduce((sum, slice) => sum + slice[key].length, 0));
    let offset = 0;
    for (const slice of slices) {
      all.set(slice[key], offset);
      offset += slice[key].length;
    }
    return all;
  };
  const sum = (key) => slices.reduce((total, slice) => total + slice[key], 0);
  const ok = sum('ok');
  return {
    rate,
    achievedRps: round(sum('sent') / Math.max(sum('elapsedS'), 0.001), 1),
    ok,
    failed: sum('failed'),
    skipped: sum('skipped'),
    firstError: slices.find((slice) => slice.firstError)?.firstError,
    generatorMaxLagMs: round(Math.max(...slices.map((slice) => slice.maxLagMs))),
    slices: slices.length,
    ttfbMs: summarize(join('ttfb'), ok),
    latencyMs: summarize(join('latency'), ok),
  };
}

function fixedRatePool(target) {
  return new Pool(target.url, { connections: 128, pipelining: 1, keepAliveTimeout: 30_000 });
}

/** One fixed-rate phase for one target (warm-ups), in one slice. */
async function runFixedRate(target, options) {
  const pool = fixedRatePool(target);
  try {
    return fixedRateResult(options.rate, [await fixedRateSlice(target, pool, options)]);
  } finally {
    await pool.destroy();
  }
}

/** One request of each kind; a non-2xx answer means the target cannot be measured. */
async function probe(target) {
  const headers = requestHeaders(target);
  for (const body of [JSON_BODY, STREAM_BODY]) {
    const response = await fetch(`${target.url}${ROUTE}`, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    if (!response.ok) {
      return `${ROUTE} answered ${response.status}: ${text.slice(0, 300).replace(/\s+/g, ' ')}`;
    }
  }
  return undefined;
}

/** Seconds each target is measured at a time in the interleaved fixed-rate phases. */
const SLICE_S = 1;

/**
 * Every phase for every target. The fixed-rate phases are interleaved: slices of SLICE_S seconds,
 * JSON then stream, taking the targets in turn (the order reversed every other round), so that
 * a change in the machine's load during the run (other tenants of the host, this machine's own
 * background work) falls on all the targets alike instead of on whichever was being measured
 * then. "Added" figures are differences between targets, and measured one after the other they
 * moved by as much as 0.1 ms from run to run on this host. Warm-ups come first and saturation
 * last, one target at a time.
 */
async function measureAll(targets, settings, log) {
  const rss = new Map(
    targets.map((target) => [target.name, target.pid ? rssSampler(target.pid) : () => null]),
  );
  for (const target of targets) {
    log(`  [${target.name}] warm-up (${settings.warmupS} s)`);
    await runAutocannon(target, { connections: settings.connections, durationS: settings.warmupS });
    await runFixedRate(target, {
      rate: settings.rate,
      durationS: Math.min(1, settings.warmupS),
      body: STREAM_BODY,
    });
  }
  // The fixed-rate phases measure a target at ease, not one still digesting a burst (its GC, its
  // log backlog): they come after a pause and before the saturation phase.
  await new Promise((resolve) => setTimeout(resolve, settings.settleMs));

  const rounds = Math.max(1, Math.round(settings.durationS / SLICE_S));
  const sliceS = settings.durationS / rounds;
  log(
    `  JSON and stream at ${settings.rate} req/s, open loop: ${rounds} rounds of ${round(sliceS, 2)} s each per target, interleaved`,
  );
  const pools = new Map(targets.map((target) => [target.name, fixedRatePool(target)]));
  const slices = new Map(targets.map((target) => [target.name, { json: [], stream: [] }]));
  try {
    for (let turn = 0; turn < rounds; turn++) {
      for (const target of turn % 2 === 0 ? targets : [...targets].reverse()) {
        const pool = pools.get(target.name);
        const own = slices.get(target.name);
        const options = { rate: settings.rate, durationS: sliceS };
        own.json.push(await fixedRateSlice(target, pool, { ...options, body: JSON_BODY }));
        own.stream.push(await fixedRateSlice(target, pool, { ...options, body: STREAM_BODY }));
      }
    }
  } finally {
    await Promise.all([...pools.values()].map((pool) => pool.destroy()));
  }

  const results = {};
  for (const target of targets) {
    log(`  [${target.name}] JSON at ${settings.rate} req/s, autocannon overallRate, ${settings.durationS} s`);
    const autocannonRate = await runAutocannon(target, {
      connections: 10,
      durationS: settings.durationS,
      overallRate: settings.rate,
    });
    log(`  [${target.name}] saturated JSON, ${settings.connections} connections, ${settings.durationS} s`);
    const saturated = await runAutocannon(target, {
      connections: settings.connections,
      durationS: settings.durationS,
    });
    const own = slices.get(target.name);
    results[target.name] = {
      saturated,
      fixedJson: fixedRateResult(settings.rate, own.json),
      autocannonRate,
      fixedStream: fixedRateResult(settings.rate, own.stream),
      rss: rss.get(target.name)(),
    };
  }
  return results;
}

// ---------------------------------------------------------------------------------------------
// Report.

function added(result, direct) {
  if (!result || !direct) return null;
  return {
    p50Ms: round(result.fixedJson.latencyMs.p50 - direct.fixedJson.latencyMs.p50),
    p99Ms: round(result.fixedJson.latencyMs.p99 - direct.fixedJson.latencyMs.p99),
    ttfbP50Ms: round(result.fixedStream.ttfbMs.p50 - direct.fixedStream.ttfbMs.p50),
    ttfbP99Ms: round(result.fixedStream.ttfbMs.p99 - direct.fixedStream.ttfbMs.p99),
    saturatedP50Ms: round(result.saturated.latencyMs.p50 - direct.saturated.latencyMs.p50),
  };
}

function ratio(a, b) {
  return Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? round(a / b, 2) : null;
}

function fmt(value, digits = 2) {
  return value === null || value === undefined || Number.isNaN(value) ? '-' : Number(value).toFixed(digits);
}

function printTable(report) {
  const rows = [];
  for (const name of ['direct', 'floor', 'gateway']) {
    const result = report.results[name];
    if (!result) continue;
    const extra = report.added[name];
    rows.push([
      name,
      fmt(result.saturated.requestsPerSecond, 0),
      `${fmt(result.fixedJson.latencyMs.p50, 3)} / ${fmt(result.fixedJson.latencyMs.p99, 3)}`,
      extra ? `${fmt(extra.p50Ms, 3)} / ${fmt(extra.p99Ms, 3)}` : '-',
      `${fmt(result.fixedStream.ttfbMs.p50, 3)} / ${fmt(result.fixedStream.ttfbMs.p99, 3)}`,
      extra ? `${fmt(extra.ttfbP50Ms, 3)} / ${fmt(extra.ttfbP99Ms, 3)}` : '-',
      `${fmt(result.autocannonRate.latencyMs.p50, 3)} / ${fmt(result.autocannonRate.latencyMs.p99, 3)}`,
      result.rss ? fmt(result.rss.maxMb, 0) : '-',
    ]);
  }
  const header = [
    'target',
    'sat. req/s',
    `p50/p99 ms @${report.settings.rate}`,
    'added p50/p99',
    'TTFB p50/p99',
    'added TTFB',
    'autocannon p50/p99',
    'RSS MB',
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
  console.log(`\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const row of rows) console.log(line(row));

  const gateway = report.results.gateway;
  if (!gateway) {
    console.log(
      `\ngateway: unavailable (${report.gatewayUnavailable}); direct upstream and floor measured only.`,
    );
  } else {
    const r = report.ratiosToFloor;
    console.log(
      `\ngateway vs floor: throughput x${fmt(r.throughput)}, added p50 x${fmt(r.addedP50)}, added p99 x${fmt(r.addedP99)}, added TTFB p50 x${fmt(r.addedTtfbP50)}`,
    );
    for (const [name, check] of Object.entries(report.checks)) {
      console.log(`  ${check.pass ? 'PASS' : 'FAIL'}  ${name}: ${check.value} (target ${check.target})`);
    }
  }
  for (const name of ['direct', 'floor', 'gateway']) {
    const result = report.results[name];
    if (!result) continue;
    for (const [kind, run] of [
      ['saturated', result.saturated],
      ['autocannon rate', result.autocannonRate],
    ]) {
      if (run.non2xx || run.errors || run.timeouts) {
        console.log(
          `  note: ${name} ${kind}: ${run.non2xx} non-2xx, ${run.errors} errors, ${run.timeouts} timeouts`,
        );
      }
    }
    for (const [kind, run] of [
      ['JSON fixed rate', result.fixedJson],
      ['stream fixed rate', result.fixedStream],
    ]) {
      if (run.failed || run.skipped) {
        console.log(
          `  note: ${name} ${kind}: ${run.failed} failed, ${run.skipped} skipped (${run.firstError ?? 'overloaded'})`,
        );
      }
      if (run.generatorMaxLagMs > 5) {
        console.log(
          `  note: ${name} ${kind}: load generator lagged up to ${run.generatorMaxLagMs} ms behind schedule`,
        );
      }
    }
  }
}

function buildReport(settings, results, gatewayUnavailable) {
  const report = {
    date: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      node: process.version,
      platform: process.platform,
    },
    settings,
    note: 'All processes share this machine: the load generator competes with the target for the same cores.',
    results,
    gatewayUnavailable,
    added: { floor: added(results.floor, results.direct), gateway: added(results.gateway, results.direct) },
    targets: TARGETS,
  };
  const g = report.added.gateway;
  const f = report.added.floor;
  if (results.gateway && f && g) {
    report.ratiosToFloor = {
      throughput: ratio(
        results.gateway.saturated.requestsPerSecond,
        results.floor.saturated.requestsPerSecond,
      ),
      addedP50: ratio(g.p50Ms, f.p50Ms),
      addedP99: ratio(g.p99Ms, f.p99Ms),
      addedTtfbP50: ratio(g.ttfbP50Ms, f.ttfbP50Ms),
      rss:
        results.gateway.rss && results.floor.rss
          ? ratio(results.gateway.rss.maxMb, results.floor.rss.maxMb)
          : null,
    };
    report.checks = checkTargets(
      {
        addedP50Ms: g.p50Ms,
        addedP99Ms: g.p99Ms,
        addedTtfbP50Ms: g.ttfbP50Ms,
        saturatedRps: results.gateway.saturated.requestsPerSecond,
        rssMaxMb: results.gateway.rss?.maxMb ?? null,
      },
      TARGETS,
    );
  }
  return report;
}

// ---------------------------------------------------------------------------------------------

function readSettings() {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      duration: { type: 'string' },
      rate: { type: 'string' },
      connections: { type: 'string' },
      'no-gateway': { type: 'boolean', default: false },
      'stream-chunks': { type: 'string' },
      'chunk-delay': { type: 'string' },
      soak: { type: 'boolean', default: false },
      'sample-every': { type: 'string' },
      'gateway-node-args': { type: 'string' },
      repeat: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(
      'node bench/run.js [--quick] [--duration s] [--rate req/s] [--connections n] [--no-gateway] [--stream-chunks n] [--chunk-delay ms] [--gateway-node-args="<node flags>"] [--repeat n]\n' +
        'node bench/run.js --soak [--duration s (default 300)] [--rate req/s (default 1000)] [--sample-every s (default 5)]',
    );
    process.exit(0);
  }
  const positive = (text, name, fallback) => {
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
    return value;
  };
  const durationS = positive(values.duration, 'duration', values.soak ? 300 : values.quick ? 2 : 10);
  // Bounds keep a typo from starting an hour-long run or a million connections.
  if (durationS > 600) throw new Error('--duration is capped at 600 s');
  const repeat = positive(values.repeat, 'repeat', 1);
  if (!Number.isInteger(repeat) || repeat > 10)
    throw new Error('--repeat must be a whole number from 1 to 10');
  if (repeat > 1 && values.soak) throw new Error('--repeat does not apply to --soak');
  return {
    quick: values.quick,
    durationS,
    // Long enough for the JIT: the fixed-rate phases come first and would otherwise meet cold code.
    warmupS: values.quick ? 1.5 : 3,
    rate: Math.min(positive(values.rate, 'rate', values.soak ? 1000 : 500), 20_000),
    settleMs: values.quick ? 500 : 2_000,
    soak: values.soak,
    sampleEveryS: Math.min(positive(values['sample-every'], 'sample-every', 5), 60),
    gatewayNodeArgs: values['gateway-node-args']
      ? values['gateway-node-args'].split(/\s+/).filter(Boolean)
      : [],
    connections: Math.min(positive(values.connections, 'connections', 50), 1_000),
    streamChunks: Math.min(positive(values['stream-chunks'], 'stream-chunks', 10), 1_000),
    chunkDelayMs: values['chunk-delay'] === '0' ? 0 : positive(values['chunk-delay'], 'chunk-delay', 1),
    gateway: !values['no-gateway'],
    repeat,
  };
}

async function soak(settings, log) {
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-soak-'));
  const upstream = await forkReady('upstream.js', {
    BENCH_STREAM_CHUNKS: String(settings.streamChunks),
    BENCH_CHUNK_DELAY_MS: String(settings.chunkDelayMs),
  });
  let report;
  try {
    log(`[gateway] starting (upstream ${upstream.url})`);
    const gateway = await startGateway({
      upstreamUrl: upstream.url,
      tmpDir,
      nodeArgs: settings.gatewayNodeArgs,
    });
    track(gateway.child);
    const problem = await probe({ url: gateway.url, headers: gateway.headers });
    if (problem) throw new Error(`gateway: ${problem}`);
    report = await runSoak(gateway, { ...settings, warmupS: 5 }, log);
    await gateway.stop();
  } finally {
    await stopAll();
    fs.rmSync(tmpDir, { recursive: true, force: true });
  }
  const outDir = path.join(__dirname, 'results');
  fs.mkdirSync(outDir, { recursive: true });
  const file = path.join(outDir, 'soak.json');
  fs.writeFileSync(
    file,
    `${JSON.stringify({ date: new Date().toISOString(), machine: { cpus: os.cpus().length, node: process.version }, ...report }, null, 2)}\n`,
  );
  log(`\nwrote ${path.relative(process.cwd(), file)}`);
}

async function main() {
  const settings = readSettings();
  const log = (message) => console.log(message);
  log(`bench: ${os.cpus().length} cores, node ${process.version}; every process runs on this machine`);
  if (settings.soak) return soak(settings, log);
  const outDir = path.join(__dirname, 'results');
  fs.mkdirSync(outDir, { recursive: true });
  const file = path.join(outDir, 'latest.json');
  if (settings.repeat === 1) {
    const report = await runOnce(settings, log);
    fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  } else {
    // Each run starts every process afresh, so one run's heap or log backlog cannot reach the next.
    const reports = [];
    for (let run = 1; run <= settings.repeat; run++) {
      log(`\n=== run ${run} of ${settings.repeat} ===`);
      reports.push(await runOnce(settings, log));
    }
    const summary = summarise(reports, TARGETS);
    log(`\n${summaryLines(summary).join('\n')}`);
    fs.writeFileSync(file, `${JSON.stringify({ summary, runs: reports }, null, 2)}\n`);
  }
  log(`\nwrote ${path.relative(process.cwd(), file)}`);
}

/** One run: fresh upstream, floor and gateway processes, every phase, the table; returns the report. */
async function runOnce(settings, log) {
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-bench-'));

  const upstream = await forkReady('upstream.js', {
    BENCH_STREAM_CHUNKS: String(settings.streamChunks),
    BENCH_CHUNK_DELAY_MS: String(settings.chunkDelayMs),
  });
  const floor = await forkReady('floor-proxy.js', { UPSTREAM_URL: upstream.url });
  log(`upstream ${upstream.url} (pid ${upstream.child.pid}), floor ${floor.url} (pid ${floor.child.pid})`);

  let results = {};
  let gatewayUnavailable;
  try {
    const targets = [
      {
        name: 'direct',
        url: upstream.url,
        pid: upstream.child.pid,
        headers: { authorization: 'Bearer sk-bench' },
      },
      { name: 'floor', url: floor.url, pid: floor.child.pid, headers: { authorization: 'Bearer sk-bench' } },
    ];
    for (const target of targets) {
      const problem = await probe(target);
      if (problem) throw new Error(`${target.name}: ${problem}`);
    }

    let gateway;
    if (!settings.gateway) {
      gatewayUnavailable = 'skipped with --no-gateway';
    } else {
      log('[gateway] starting');
      try {
        gateway = await startGateway({
          upstreamUrl: upstream.url,
          tmpDir,
          nodeArgs: settings.gatewayNodeArgs,
        });
        track(gateway.child);
        const problem = await probe({ url: gateway.url, headers: gateway.headers });
        if (problem) gatewayUnavailable = problem;
      } catch (error) {
        gatewayUnavailable = error.message;
      }
    }
    if (gateway && !gatewayUnavailable) {
      targets.push({ name: 'gateway', url: gateway.url, pid: gateway.pid, headers: gateway.headers });
    }
    log(`measuring ${targets.map((target) => target.name).join(', ')}`);
    results = await measureAll(targets, settings, log);
    if (gateway) await gateway.stop();
  } finally {
    await stopAll();
    fs.rmSync(tmpDir, { recursive: true, force: true });
  }

  const report = buildReport(settings, results, gatewayUnavailable);
  printTable(report);
  return report;
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(`bench failed: ${error.stack ?? error.message}`);
    killAll('SIGKILL');
    process.exit(1);
  },
);
