'use strict';
/**
 * A fast mock OpenAI upstream for load tests. JSON answers are serialized once at start so the
 * upstream costs as little CPU as possible; streams write N SSE chunks with a small delay between
 * them. Runs in its own process (child_process.fork) so it does not share the load generator's
 * event loop; the parent learns the port from a `{ type: 'ready', port }` message.
 */
const http = require('node:http');

const CHAT_COMPLETION = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-4o-mini',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'Hello! I am a benchmark upstream.', refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 },
    system_fingerprint: 'fp_bench',
  }),
);

const JSON_HEADERS = { 'content-type': 'application/json', 'content-length': String(CHAT_COMPLETION.length) };
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };
/** Bodies above this are refused: the benchmark never sends them, a bug might. */
const MAX_BODY_BYTES = 1024 * 1024;

function streamChunks(count) {
  const chunk = (delta, finish) =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-bench',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    })}\n\n`;
  const out = [chunk({ role: 'assistant', content: '' }, null)];
  for (let i = 0; i < count; i++) out.push(chunk({ content: `token${i} ` }, null));
  out.push(chunk({}, 'stop'));
  out.push('data: [DONE]\n\n');
  return out.map((text) => Buffer.from(text));
}

/**
 * @param {{ streamChunks?: number, chunkDelayMs?: number }} options
 * @returns {http.Server}
 */
function createUpstream(options = {}) {
  const chunks = streamChunks(options.streamChunks ?? 10);
  const chunkDelayMs = options.chunkDelayMs ?? 1;

  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && (req.url === '/health' || req.url === '/v1/health')) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      return;
    }
    if (req.method !== 'POST' || !req.url.startsWith('/v1/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"not found","type":"invalid_request_error","param":null,"code":null}}');
      return;
    }
    const parts = [];
    let size = 0;
    req.on('data', (part) => {
      size += part.length;
      if (size <= MAX_BODY_BYTES) parts.push(part);
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) {
        res.writeHead(413).end();
        return;
      }
      // A substring test instead of JSON.parse keeps the upstream cheap; bench bodies are compact JSON.
      const stream = Buffer.concat(parts).includes('"stream":true');
      if (!stream) {
        res.writeHead(200, JSON_HEADERS);
        res.end(CHAT_COMPLETION);
        return;
      }
      res.writeHead(200, SSE_HEADERS);
      let index = 0;
      let timer;
      const writeNext = () => {
        if (res.destroyed) return;
        res.write(chunks[index++]);
        if (index >= chunks.length) {
          res.end();
          return;
        }
        timer = chunkDelayMs > 0 ? setTimeout(writeNext, chunkDelayMs) : setImmediate(writeNext);
      };
      res.on('close', () => {
        clearTimeout(timer);
        clearImmediate(timer);
      });
      // The first chunk goes out with the headers: time to first byte is the upstream's best case.
      writeNext();
    });
  });
  server.keepAliveTimeout = 30_000;
  return server;
}

if (require.main === module) {
  const server = createUpstream({
    streamChunks: Number(process.env.BENCH_STREAM_CHUNKS ?? 10),
    chunkDelayMs: Number(process.env.BENCH_CHUNK_DELAY_MS ?? 1),
  });
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    const { port } = server.address();
    if (process.send) process.send({ type: 'ready', port });
    else console.log(`upstream listening on http://127.0.0.1:${port}`);
  });
  // The parent going away (crash, SIGKILL) must not leave this process behind.
  process.on('disconnect', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0));
  process.on('SIGINT', () => process.exit(0));
}

module.exports = { createUpstream };
