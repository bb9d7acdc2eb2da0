'use strict';
/**
 * The floor: the least a Node gateway can do. A node:http server that forwards the request to the
 * upstream through an undici Pool and streams the answer back chunk by chunk, with no features at
 * all. What it adds over calling the upstream directly is the cost any Node gateway pays; the
 * benchmark reports the gateway against it. Runs in its own process; `UPSTREAM_URL` says where to.
 */
const http = require('node:http');
const { Pool } = require('undici');

/** Headers that describe one hop, not the message; a proxy must not forward them. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

function forwardHeaders(source) {
  const out = {};
  for (const [name, value] of Object.entries(source)) {
    if (!HOP_BY_HOP.has(name) && value !== undefined) out[name] = value;
  }
  return out;
}

/**
 * @param {{ upstreamUrl: string, connections?: number }} options
 * @returns {{ server: http.Server, pool: Pool }}
 */
function createFloorProxy(options) {
  const pool = new Pool(options.upstreamUrl, {
    connections: options.connections ?? 256,
    pipelining: 1,
    keepAliveTimeout: 30_000,
  });

  const server = http.createServer(async (req, res) => {
    const abort = new AbortController();
    // A client that hangs up aborts the upstream call, as the gateway must.
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    try {
      // pool.stream writes each upstream chunk straight into the response as it arrives: the
      // cheapest forwarding undici offers, and nothing is buffered whole.
      await pool.stream(
        {
          method: req.method,
          path: req.url,
          headers: forwardHeaders(req.headers),
          body: req.method === 'GET' || req.method === 'HEAD' ? undefined : req,
          signal: abort.signal,
        },
        ({ statusCode, headers }) => {
          res.writeHead(statusCode, forwardHeaders(headers));
          return res;
        },
      );
    } catch (error) {
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `floor proxy: ${error.message}`, type: 'bad_gateway' } }));
      } else {
        res.destroy();
      }
    }
  });
  server.keepAliveTimeout = 30_000;
  return { server, pool };
}

if (require.main === module) {
  const upstreamUrl = process.env.UPSTREAM_URL;
  if (!upstreamUrl) {
    console.error('floor-proxy: UPSTREAM_URL is required');
    process.exit(2);
  }
  const { server } = createFloorProxy({ upstreamUrl });
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    const { port } = server.address();
    if (process.send) process.send({ type: 'ready', port });
    else console.log(`floor proxy listening on http://127.0.0.1:${port} -> ${upstreamUrl}`);
  });
  process.on('disconnect', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0));
  process.on('SIGINT', () => process.exit(0));
}

module.exports = { createFloorProxy };
