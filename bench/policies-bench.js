'use strict';
/**
 * Micro-benchmark of the policy check on the request path: what `PolicyEnforcer.check` (and the
 * `settle` after the call) add to a request with five active policies that all apply (three rate
 * limits and two budgets), warm: policies and counter rows already in memory.
 *
 *   node bench/policies-bench.js                      # in-process counters
 *   REDIS_URL=redis://127.0.0.1:6379 node bench/policies-bench.js   # also through Redis
 *   node bench/policies-bench.js --iterations 50000
 *
 * The whole application is started (embedded SQLite in a temp folder) and the policies are made
 * over its HTTP API, so the enforcer measured is the one the gateway gets. Timings are taken one
 * call at a time with process.hrtime.bigint(); the figure the issue bounds is the p50 of `check`
 * with five policies, minus nothing: it is all added by policies (a request that no policy
 * applies to is measured too, for reference). Target: p50 <= 0.2 ms.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { randomUUID } = require('node:crypto');

const ROOT = path.resolve(__dirname, '..');
const args = process.argv.slice(2);
const argument = (name, fallback) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? Number(args[index + 1]) : fallback;
};
const ITERATIONS = argument('iterations', 20_000);
const WARMUP = Math.min(5_000, Math.ceil(ITERATIONS / 4));
const TARGET_P50_MS = 0.2;

// The entities read DATABASE_URL when they load: set it before anything of the app is required.
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-policies-bench-'));
process.env.DATABASE_URL = `sqlite:${path.join(dataDir, 'gateway.db')}`;
process.env.TS_NODE_PROJECT = path.join(ROOT, 'tsconfig.json');
require('ts-node').register({ transpileOnly: true, project: process.env.TS_NODE_PROJECT });
require('tsconfig-paths').register({
  baseUrl: ROOT,
  paths: require(path.join(ROOT, 'tsconfig.json')).compilerOptions.paths,
});
require('reflect-metadata');

const { loadConfig } = require(path.join(ROOT, 'libs/config/src'));
const { createApp } = require(path.join(ROOT, 'apps/server/src/create-app'));
const { PolicyEnforcer } = require(path.join(ROOT, 'libs/policies/src'));
const { DataSource } = require('typeorm');

const ADMIN_KEY = `sb-bench-admin-${'b'.repeat(40)}`;

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99) };
}

const ms = (value) => value.toFixed(4);

async function measure(label, enforcer, makeContext, withSettle) {
  const checks = [];
  const rounds = [];
  for (let index = 0; index < WARMUP + ITERATIONS; index++) {
    const context = makeContext(index);
    const started = process.hrtime.bigint();
    const reservation = await enforcer.check(context);
    const checked = process.hrtime.bigint();
    if (withSettle) await enforcer.settle(reservation, { tokens: 100, cost: 0.0001 });
    else await enforcer.release(reservation);
    const done = process.hrtime.bigint();
    if (index >= WARMUP) {
      checks.push(Number(checked - started) / 1e6);
      rounds.push(Number(done - started) / 1e6);
    }
  }
  const check = summary(checks);
  const round = summary(rounds);
  console.log(
    `${label.padEnd(44)} check p50 ${ms(check.p50)}  p90 ${ms(check.p90)}  p99 ${ms(check.p99)} ms | ` +
      `check+${withSettle ? 'settle' : 'release'} p50 ${ms(round.p50)}  p99 ${ms(round.p99)} ms`,
  );
  return check;
}

async function run(redisUrl) {
  const env = {
    DATABASE_URL: process.env.DATABASE_URL,
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_ADMIN_KEY: ADMIN_KEY,
    GATEWAY_ENCRYPTION_KEY: '5b'.repeat(32),
    GATEWAY_JOBS: 'false',
    LOG_LEVEL: 'silent',
  };
  if (redisUrl) {
    env.REDIS_URL = redisUrl;
    process.env.GATEWAY_POLICY_REDIS_PREFIX = `sbbench:${process.pid}:`;
  }
  const app = await createApp(loadConfig(env));
  await app.getHttpAdapter().getInstance().ready();
  const call = async (method, url, body) => {
    const response = await app.inject({
      method,
      url,
      headers: { 'x-gateway-api-key': ADMIN_KEY },
      ...(body ? { payload: body } : {}),
    });
    if (response.statusCode !== 200)
      throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
    return response.json();
  };
  try {
    const workspace = await call('POST', '/v1/admin/workspaces', { name: `Bench ${randomUUID()}` });
    const quiet = await call('POST', '/v1/admin/workspaces', { name: `Quiet ${randomUUID()}` });
    const [{ id: organisationId }] = await app.get(DataSource).query('SELECT id FROM organisations');
    const inW = [{ key: 'workspace_id', value: workspace.id }];
    const huge = 1e12;
    await call('POST', '/v1/policies/rate-limits', {
      conditions: inW,
      group_by: [{ key: 'api_key' }],
      type: 'requests',
      unit: 'rpm',
      value: huge,
      workspace_id: workspace.id,
    });
    await call('POST', '/v1/policies/rate-limits', {
      conditions: inW,
      group_by: [{ key: 'workspace_id' }],
      type: 'tokens',
      unit: 'rph',
      value: huge,
      workspace_id: workspace.id,
    });
    await call('POST', '/v1/policies/rate-limits', {
      conditions: [...inW, { key: 'metadata.env', value: 'prod' }],
      group_by: [{ key: 'metadata.team' }],
      type: 'requests',
      unit: 'rpd',
      value: huge,
      workspace_id: workspace.id,
    });
    await call('POST', '/v1/policies/usage-limits', {
      conditions: inW,
      group_by: [{ key: 'api_key' }],
      type: 'cost',
      credit_limit: 1e7,
      periodic_reset: 'monthly',
      workspace_id: workspace.id,
    });
    await call('POST', '/v1/policies/usage-limits', {
      conditions: inW,
      group_by: [{ key: 'workspace_id' }],
      type: 'tokens',
      credit_limit: 1e7,
      workspace_id: workspace.id,
    });

    const enforcer = app.get(PolicyEnforcer);
    // A few API keys and teams, as real traffic has: warm entries for each after the warm-up.
    const keys = Array.from({ length: 8 }, () => randomUUID());
    const teams = ['search', 'ads', 'infra', 'ml'];
    const context = (workspaceId) => (index) => ({
      organisationId,
      workspaceId,
      apiKeyId: keys[index % keys.length],
      userId: null,
      metadata: { env: 'prod', team: teams[index % teams.length] },
    });
    const first = await enforcer.check(context(workspace.id)(0));
    if (Object.keys(first.headers).length === 0) throw new Error('the policies did not apply');
    await enforcer.release(first);

    const store = redisUrl ? 'Redis' : 'in-process';
    console.log(`\n${store} counters, ${ITERATIONS} iterations after ${WARMUP} warm-up, one call at a time`);
    await measure('no policy applies (reference)', enforcer, context(quiet.id), false);
    const five = await measure(
      '5 active policies (3 rate limits, 2 budgets)',
      enforcer,
      context(workspace.id),
      true,
    );
    return five;
  } finally {
    await app.close();
    if (redisUrl) {
      // The bench's counters go with it (budget counters would otherwise live for 40 days).
      const Redis = require('ioredis');
      const redis = new Redis(redisUrl);
      const stale = await redis.keys(`${process.env.GATEWAY_POLICY_REDIS_PREFIX}*`);
      if (stale.length > 0) await redis.del(...stale);
      await redis.quit();
    }
    delete process.env.GATEWAY_POLICY_REDIS_PREFIX;
  }
}

async function main() {
  console.log(`Node ${process.version} on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}`);
  const local = await run(null);
  const verdict = local.p50 <= TARGET_P50_MS ? 'meets' : 'MISSES';
  console.log(
    `\nPolicy check with five active policies (in-process): p50 ${ms(local.p50)} ms — ${verdict} the target of ${TARGET_P50_MS} ms`,
  );
  if (process.env.REDIS_URL) {
    const shared = await run(process.env.REDIS_URL);
    console.log(
      `With Redis (one Lua round trip per check on loopback): p50 ${ms(shared.p50)} ms, p99 ${ms(shared.p99)} ms`,
    );
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
  process.exitCode = local.p50 <= TARGET_P50_MS ? 0 : 1;
}

main().catch((error) => {
  console.error(error);
  fs.rmSync(dataDir, { recursive: true, force: true });
  process.exit(1);
});
