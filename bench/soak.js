'use strict';
/**
 * Memory soak: the gateway under a steady open-loop load for minutes (default 5), its RSS read
 * from /proc every few seconds. Prints each sample with the latency of its window, then the first,
 * peak and last RSS and whether memory is steady: V8 grows and collects its heap in a sawtooth, so
 * steady means the second half's peak stays within STEADY_PEAK_GROWTH of the first half's (the
 * least-squares slope of the second half is printed too). At the end it also checks
 * that every request the gateway answered has its log record (`GET /v1/logs`, by the soak's trace id).
 *
 * Run through run.js: `node bench/run.js --soak [--duration 300] [--rate 1000] [--sample-every 5]`.
 */
const fs = require('node:fs');
const { Pool } = require('undici');
const { ADMIN_KEY } = require('./gateway-target');

const ROUTE = '/v1/chat/completions';
const MESSAGES = [
  { role: 'system', content: 'You are a helpful assistant.' },
  { role: 'user', content: 'Hello, how are you today?' },
];
const JSON_BODY = JSON.stringify({ model: 'gpt-4o-mini', messages: MESSAGES, temperature: 0.7 });
const STREAM_BODY = JSON.stringify({ model: 'gpt-4o-mini', messages: MESSAGES, stream: true });
/** One request in this many is a stream. */
const STREAM_EVERY = 5;
/** The second half's peak may exceed the first half's by at most this fraction. */
const STEADY_PEAK_GROWTH = 0.05;
const MAX_IN_FLIGHT = 512;
const RSS_TARGET_MB = 200;

function readRssMb(pid) {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

function percentile(sorted, q) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** Least-squares slope of (seconds, MB) points, in MB per minute. */
function slopeMbPerMin(points) {
  if (points.length < 2) return 0;
  const n = points.length;
  const meanX = points.reduce((sum, p) => sum + p.t, 0) / n;
  const meanY = points.reduce((sum, p) => sum + p.rssMb, 0) / n;
  let numerator = 0;
  let denominator = 0;
  for (const p of points) {
    numerator += (p.t - meanX) * (p.rssMb - meanY);
    denominator += (p.t - meanX) ** 2;
  }
  return denominator === 0 ? 0 : (numerator / denominator) * 60;
}

const fixed = (value, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : '-');

/**
 * @param {{ url: string, pid: number, headers: Record<string, string> }} gateway
 * @param {{ durationS: number, rate: number, sampleEveryS: number, warmupS: number }} settings
 */
async function runSoak(gateway, settings, log) {
  const traceId = `bench-soak-${Date.now().toString(36)}`;
  const headers = { 'content-type': 'application/json', ...gateway.headers, 'x-gateway-trace-id': traceId };
  const pool = new Pool(gateway.url, { connections: 128, pipelining: 1, keepAliveTimeout: 30_000 });
  const interval = 1000 / settings.rate;
  let sent = 0;
  let answered = 0;
  let failed = 0;
  let skipped = 0;
  /** Sends skipped during the warm-up (a cold gateway); the rest fell in the measured window. */
  let skippedInWarmup = 0;
  let inFlight = 0;
  let firstError;
  let window = [];

  const one = async (stream) => {
    const sentAt = performance.now();
    try {
      const response = await pool.request({
        path: ROUTE,
        method: 'POST',
        headers,
        body: stream ? STREAM_BODY : JSON_BODY,
      });
      for await (const _chunk of response.body) {
        // Drain: the time to the last byte is what the window reports.
      }
      answered++;
      // The window's latency figures are for JSON calls; a stream's length is the upstream's pacing.
      if (response.statusCode >= 200 && response.statusCode < 300) {
        if (!stream) window.push(performance.now() - sentAt);
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

  const samples = [];
  const start = performance.now();
  const warmupEnd = start + settings.warmupS * 1000;
  const end = warmupEnd + settings.durationS * 1000;
  let nextSample = warmupEnd;
  log(
    `  warm-up ${settings.warmupS} s, then ${settings.durationS} s at ${settings.rate} req/s (1 in ${STREAM_EVERY} streamed), RSS every ${settings.sampleEveryS} s`,
  );
  log('      t s   RSS MB   JSON p50 ms   JSON p99 ms   req/s');
  let windowStart = performance.now();
  let windowSent = 0;
  while (performance.now() < end) {
    const now = performance.now();
    const due = Math.floor((now - start) / interval) + 1;
    while (sent < due) {
      sent++;
      windowSent++;
      if (inFlight >= MAX_IN_FLIGHT) {
        skipped++;
        if (now < warmupEnd) skippedInWarmup++;
        continue;
      }
      inFlight++;
      void one(sent % STREAM_EVERY === 0);
    }
    if (now >= nextSample) {
      const rssMb = readRssMb(gateway.pid);
      const latencies = Float64Array.from(window).sort();
      const windowS = (now - windowStart) / 1000;
      if (now >= warmupEnd && rssMb !== null) {
        const t = Math.round((now - warmupEnd) / 1000);
        samples.push({ t, rssMb });
        log(
          `  ${String(t).padStart(7)}  ${fixed(rssMb).padStart(7)}  ${fixed(percentile(latencies, 0.5), 2).padStart(12)}  ${fixed(percentile(latencies, 0.99), 2).padStart(12)}  ${fixed(windowSent / windowS, 0).padStart(6)}`,
        );
      }
      window = [];
      windowStart = now;
      windowSent = 0;
      nextSample += settings.sampleEveryS * 1000;
    }
    const wait = start + sent * interval - performance.now();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait)));
  }
  const drainDeadline = performance.now() + 15_000;
  while (inFlight > 0 && performance.now() < drainDeadline)
    await new Promise((resolve) => setTimeout(resolve, 10));
  // Read once the load has stopped; reported apart, as it is not a figure under load.
  const afterLoadMb = readRssMb(gateway.pid);
  await pool.destroy();

  const logged = await countLogs(gateway.url, traceId);
  const firstHalf = samples.filter((sample) => sample.t < settings.durationS / 2);
  const secondHalf = samples.filter((sample) => sample.t >= settings.durationS / 2);
  const slope = slopeMbPerMin(secondHalf);
  const peakOf = (list) => Math.max(...list.map((sample) => sample.rssMb));
  const rss = samples.map((sample) => sample.rssMb);
  const report = {
    settings,
    requests: { sent, answered, failed, skipped, skippedInWarmup, firstError },
    logRecords: logged,
    rss: {
      samples,
      firstMb: Number(fixed(rss[0])),
      peakMb: Number(fixed(Math.max(...rss))),
      lastMb: Number(fixed(rss[rss.length - 1])),
      afterLoadMb: afterLoadMb === null ? null : Number(fixed(afterLoadMb)),
      firstHalfPeakMb: Number(fixed(peakOf(firstHalf))),
      secondHalfPeakMb: Number(fixed(peakOf(secondHalf))),
      secondHalfSlopeMbPerMin: Number(fixed(slope, 2)),
    },
    steady: peakOf(secondHalf) <= peakOf(firstHalf) * (1 + STEADY_PEAK_GROWTH),
    withinTarget: Math.max(...rss) <= RSS_TARGET_MB,
  };
  log(
    `\nRSS first ${report.rss.firstMb} MB, peak ${report.rss.peakMb} MB, last ${report.rss.lastMb} MB (${report.rss.afterLoadMb} MB once the load stopped); peak of the first half ${report.rss.firstHalfPeakMb} MB, of the second ${report.rss.secondHalfPeakMb} MB (second-half slope ${report.rss.secondHalfSlopeMbPerMin} MB/min)`,
  );
  log(
    `  ${report.steady ? 'PASS' : 'FAIL'}  steady (second-half peak within ${STEADY_PEAK_GROWTH * 100}% of the first half's)`,
  );
  log(`  ${report.withinTarget ? 'PASS' : 'FAIL'}  peak RSS <= ${RSS_TARGET_MB} MB`);
  log(
    `  requests: ${sent} sent, ${answered} answered, ${failed} failed, ${skipped} skipped (overloaded; ${skippedInWarmup} of them in the warm-up)${firstError ? `; first error: ${firstError}` : ''}`,
  );
  if (logged !== null) {
    log(
      `  ${logged === answered ? 'PASS' : 'FAIL'}  log records: ${logged} for ${answered} answered requests`,
    );
  }
  return report;
}

/** Log records carrying the soak's trace id, read through the logs API with the admin key. */
async function countLogs(url, traceId) {
  // Give the writer time to flush the last batch.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  try {
    const response = await fetch(`${url}/v1/logs?trace_id=${traceId}&page_size=1`, {
      headers: { 'x-gateway-api-key': ADMIN_KEY },
      signal: AbortSignal.timeout(30_000),
    });
    const body = await response.json();
    return response.ok && typeof body.total === 'number' ? body.total : null;
  } catch {
    return null;
  }
}

module.exports = { runSoak, slopeMbPerMin };
