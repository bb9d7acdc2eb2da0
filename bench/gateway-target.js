'use strict';
/**
 * How the benchmark starts the gateway under test. Edit this file (not run.js) when the command,
 * the environment or the readiness check changes.
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
/** The built server; BENCH_GATEWAY_ENTRY points at another build (an A/B comparison with a baseline). */
const ENTRY = process.env.BENCH_GATEWAY_ENTRY
  ? path.resolve(process.env.BENCH_GATEWAY_ENTRY)
  : path.join(ROOT, 'dist/apps/server/src/main.js');
/** The bootstrap admin key the gateway takes on its first start with an empty database. */
const ADMIN_KEY = 'sb-bench-admin-key-0123456789abcdef';
const READY_TIMEOUT_MS = 30_000;

/**
 * The node flags of `npm start` (package.json `scripts.start`, `node <flags> <entry>`), so the
 * gateway under test runs as it runs in production; `nodeArgs` come after them and win.
 */
function startFlags() {
  const start = require(path.join(ROOT, 'package.json')).scripts.start.trim().split(/\s+/);
  if (start[0] !== 'node')
    throw new Error(`package.json scripts.start does not run node: ${start.join(' ')}`);
  return start.slice(1, -1);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

async function waitForHealth(url, child, deadline) {
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`gateway exited early (code ${child.exitCode ?? child.signalCode})`);
    }
    try {
      const response = await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(1_000) });
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // Not listening yet; poll again until the deadline.
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`GET /v1/health did not answer 2xx within ${READY_TIMEOUT_MS} ms`);
}

async function createWorkspaceKey(url) {
  const response = await fetch(`${url}/v1/api-keys/workspace/service`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': ADMIN_KEY },
    body: JSON.stringify({ name: 'bench', workspace_id: 'default', scopes: ['completions.write'] }),
    signal: AbortSignal.timeout(5_000),
  });
  const body = await response.json();
  if (!response.ok)
    throw new Error(`Could not create a workspace key: ${response.status} ${JSON.stringify(body)}`);
  return body.key;
}

/**
 * Starts the gateway and resolves once it is healthy; rejects (after killing it) when it cannot start.
 * @param {{ upstreamUrl: string, tmpDir: string, nodeArgs?: string[] }} options `nodeArgs`: extra
 *   node flags for the gateway process (e.g. `--max-old-space-size=256`), after those of `npm start`;
 *   none by default, so the gateway runs exactly as `npm start` runs it.
 */
async function startGateway({ upstreamUrl, tmpDir, nodeArgs = [] }) {
  if (!fs.existsSync(ENTRY)) {
    throw new Error(`${path.relative(ROOT, ENTRY)} not found (run \`npm run build\` first)`);
  }
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const stderr = [];
  const child = spawn(process.execPath, [...startFlags(), ...nodeArgs, ENTRY], {
    // Run from the temp folder so anything the server writes under ./data stays out of the repo.
    cwd: tmpDir,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${path.join(tmpDir, 'gateway.db')}`,
      GATEWAY_ADMIN_KEY: ADMIN_KEY,
      GATEWAY_JOBS: 'false',
    },
    // BENCH_GATEWAY_STDOUT=<file> keeps the gateway's stdout (with --trace-gc, say) for diagnosis.
    stdio: [
      'ignore',
      process.env.BENCH_GATEWAY_STDOUT ? fs.openSync(process.env.BENCH_GATEWAY_STDOUT, 'w') : 'ignore',
      'pipe',
    ],
  });
  child.stderr.on('data', (chunk) => {
    stderr.push(chunk);
    // Only the tail matters for the report; keep memory bounded.
    if (stderr.length > 200) stderr.shift();
  });
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    });
  try {
    await waitForHealth(url, child, Date.now() + READY_TIMEOUT_MS);
  } catch (error) {
    await stop();
    // The first error line names the cause (a missing module, a bad setting); the tail says where.
    const lines = Buffer.concat(stderr).toString('utf8').trim().split('\n');
    const cause = lines.find((line) => /Error\b/.test(line));
    const tail = [...new Set([cause, ...lines.slice(-3)].filter(Boolean))].join('\n');
    throw new Error(`${error.message}${tail ? `\n${tail}` : ''}`);
  }
  // Admin keys administer and cannot send traffic (the capability matrix): make a workspace key.
  let workspaceKey;
  try {
    workspaceKey = await createWorkspaceKey(url);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    pid: child.pid,
    child,
    stop,
    /** Headers every benchmark request to the gateway carries. */
    headers: {
      'x-gateway-api-key': workspaceKey,
      'x-gateway-provider': 'openai',
      authorization: 'Bearer sk-bench',
      'x-gateway-custom-host': `${upstreamUrl}/v1`,
    },
  };
}

module.exports = { startGateway, ADMIN_KEY, tmpRoot: os.tmpdir() };
