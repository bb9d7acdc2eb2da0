'use strict';
/**
 * Response-cache benchmark: how long a cache hit takes compared with the upstream call it saves.
 *
 *   npm run build && node bench/cache-bench.js [--requests 50] [--latency 200] [--stream-chunks 10]
 *
 * An upstream with a fixed answer time (`--latency` ms before the first byte; streams then send
 * `--stream-chunks` chunks 5 ms apart) stands in for a provider. For each of `--requests`
 * distinct prompts the gateway is called twice with a config that turns the simple cache on:
 * the first call is a MISS (it goes upstream), the second a HIT. The run prints the median and
 * p95 of both, for JSON and for streams, and whether a hit takes under a tenth of the miss.
 * Everything listens on 127.0.0.1; the gateway runs from dist/ (see bench/gateway-target.js).
 */
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const { request } = require('undici');
const { startGateway, tmpRoot } = require('./gateway-target');

function option(name, fallback) {
  const index = process.argv.indexOf(`--${name}`);
  if (index === -1) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} needs a non-negative number`);
  return value;
}

const REQUESTS = Math.min(option('requests', 50), 10_000);
const LATENCY_MS = option('latency', 200);
const STREAM_CHUNKS = option('stream-chunks', 10);
const CHUNK_DELAY_MS = 5;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function completion(content) {
  return JSON.stringify({
    id: 'chatcmpl-cache-bench',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-4o-mini',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  });
}

function chunk(delta, finish) {
  return `data: ${JSON.stringify({
    id: 'chatcmpl-cache-bench',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  })}\n\n`;
}

/** A slow provider: every answer waits LATENCY_MS before its first byte. */
function startUpstream() {
  let calls = 0;
  const server = http.createServer((req, res) => {
    const parts = [];
    req.on('data', (part) => parts.push(part));
    req.on('end', async () => {
      calls += 1;
      let body = {};
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8'));
      } catch {
        // Not JSON: answer anyway.
      }
      await sleep(LATENCY_MS);
      if (body.stream === true) {
        res.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache',
        });
        res.write(chunk({ role: 'assistant', content: '' }, null));
        for (let i = 0; i < STREAM_CHUNKS; i += 1) {
          await sleep(CHUNK_DELAY_MS);
          res.write(chunk({ content: `token${i} ` }, null));
        }
        res.write(chunk({}, 'stop'));
        res.end('data: [DONE]\n\n');
        return;
      }
      const payload = completion(`answer ${calls}`);
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(payload),
      });
      res.end(payload);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${server.address().port}`, calls: () => calls }),
    );
  });
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function call(gateway, headers, body) {
  const started = performance.now();
  const response = await request(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.body.text();
  const elapsed = performance.now() - started;
  return {
    status: response.statusCode,
    elapsed,
    cacheStatus: response.headers['x-gateway-cache-status'] ?? null,
    text,
  };
}

async function measure(gateway, headers, stream) {
  const misses = [];
  const hits = [];
  const statuses = new Map();
  const note = (status) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
  for (let i = 0; i < REQUESTS; i += 1) {
    const body = {
      model: 'gpt-4o-mini',
      messages: [
        { role: 'user', content: `cache bench ${stream ? 'stream' : 'json'} prompt ${i} ${Date.now()}` },
      ],
      ...(stream ? { stream: true } : {}),
    };
    const first = await call(gateway, headers, body);
    const second = await call(gateway, headers, body);
    if (first.status !== 200 || second.status !== 200)
      throw new Error(`the gateway answered ${first.status}/${second.status}: ${first.text.slice(0, 300)}`);
    if (first.text !== second.text) note('different bodies');
    note(`${first.cacheStatus}→${second.cacheStatus}`);
    misses.push(first.elapsed);
    hits.push(second.elapsed);
  }
  return {
    missP50: percentile(misses, 50),
    missP95: percentile(misses, 95),
    hitP50: percentile(hits, 50),
    hitP95: percentile(hits, 95),
    statuses: Object.fromEntries(statuses),
  };
}

async function main() {
  const upstream = await startUpstream();
  const tmpDir = fs.mkdtempSync(path.join(tmpRoot, 'switchboard-cache-bench-'));
  let gateway;
  try {
    gateway = await startGateway({ upstreamUrl: upstream.url, tmpDir });
    const config = {
      provider: 'openai',
      api_key: 'sk-bench',
      custom_host: `${upstream.url}/v1`,
      cache: { mode: 'simple', max_age: 600 },
    };
    const headers = {
      'x-gateway-api-key': gateway.headers['x-gateway-api-key'],
      'x-gateway-config': JSON.stringify(config),
    };
    console.log(`cache benchmark: ${REQUESTS} prompts x 2 calls, upstream answers after ${LATENCY_MS} ms`);
    const rows = [];
    for (const stream of [false, true]) {
      const result = await measure(gateway, headers, stream);
      const ratio = result.hitP50 / result.missP50;
      rows.push({
        kind: stream ? 'stream' : 'json',
        'miss p50 ms': result.missP50.toFixed(2),
        'miss p95 ms': result.missP95.toFixed(2),
        'hit p50 ms': result.hitP50.toFixed(2),
        'hit p95 ms': result.hitP95.toFixed(2),
        'hit / miss': ratio.toFixed(4),
        'cache status (first→second)': JSON.stringify(result.statuses),
      });
    }
    console.table(rows);
    const wired = rows.every((row) => row['cache status (first→second)'].includes('MISS→HIT'));
    if (!wired) {
      console.log(
        'The gateway did not answer MISS then HIT: the cache is not in its request path yet, so the figures above are two upstream calls each.',
      );
    } else {
      const ok = rows.every((row) => Number(row['hit / miss']) < 0.1);
      console.log(
        ok
          ? 'A cache hit takes under a tenth of the upstream call it saves.'
          : 'A cache hit takes a tenth or more of the upstream call: investigate.',
      );
    }
    console.log(`upstream calls: ${upstream.calls()} for ${REQUESTS * 4} gateway requests`);
  } finally {
    await gateway?.stop();
    upstream.server.close();
    fs.rmSync(tmpDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(`cache benchmark failed: ${error.message}`);
  process.exitCode = 1;
});
