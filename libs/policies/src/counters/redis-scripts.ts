/**
 * Lua scripts of the Redis counter store. Each runs atomically on the Redis server, which is
 * what makes a reservation exact across replicas: the reads and the writes of one reservation
 * see no other in between. Amounts are integers (see BUDGET_SCALE), so HINCRBY suffices and
 * nothing drifts. The clock is Redis's own TIME, one clock for every replica, unless the caller
 * passes one (tests of the sliding window).
 *
 * Rate window: a hash, field = slot index, value = count. Budget: a hash with `u` (settled),
 * `r` (reserved) and `a:<reservation id>` (each reservation's amount), and a sorted set of
 * reservation ids scored by expiry.
 */
const PRELUDE = `
local SLOTS = 60
local function clock(given)
  local now = tonumber(given)
  if now > 0 then return now end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function fits(used, amount, limit)
  if amount > 0 then return used + amount <= limit end
  return used < limit
end
local function expire(h, z, now)
  local gone = redis.call('ZRANGEBYSCORE', z, '-inf', now)
  if #gone == 0 then return end
  for _, id in ipairs(gone) do
    local amount = redis.call('HGET', h, 'a:' .. id)
    if amount then
      redis.call('HINCRBY', h, 'r', -tonumber(amount))
      redis.call('HDEL', h, 'a:' .. id)
    end
  end
  redis.call('ZREMRANGEBYSCORE', z, '-inf', now)
end
local function drop(h, z, id)
  if redis.call('ZREM', z, id) == 1 then
    local amount = redis.call('HGET', h, 'a:' .. id)
    if amount then
      redis.call('HINCRBY', h, 'r', -tonumber(amount))
      redis.call('HDEL', h, 'a:' .. id)
    end
  end
end
`;

/**
 * KEYS: the rate windows, then a (hash, set) pair per budget.
 * ARGV: now (0 = Redis TIME), reservation id, reservation TTL ms, budget key TTL ms, rate count,
 * budget count; per rate: slot ms, limit, amount; per budget: limit, amount, seed.
 * Returns {1, now, [used, resetMs] per rate, [used, reserved] per budget} or
 * {0, now, rate failures as [index, used, retryAfterMs], '|', budget failures as [index, used, reserved]}.
 */
export const RESERVE_SCRIPT = `${PRELUDE}
local now = clock(ARGV[1])
local id = ARGV[2]
local reservationTtl = tonumber(ARGV[3])
local budgetTtl = tonumber(ARGV[4])
local rateCount = tonumber(ARGV[5])
local budgetCount = tonumber(ARGV[6])
local a = 7
local rates = {}
local rateFailures = {}
for i = 1, rateCount do
  local key = KEYS[i]
  local slotMs = tonumber(ARGV[a]); local limit = tonumber(ARGV[a + 1]); local amount = tonumber(ARGV[a + 2])
  a = a + 3
  local current = math.floor(now / slotMs)
  local oldestCounted = current - SLOTS
  local flat = redis.call('HGETALL', key)
  local total = 0
  local counted = {}
  for j = 1, #flat, 2 do
    local slot = tonumber(flat[j])
    if slot < oldestCounted then
      redis.call('HDEL', key, flat[j])
    else
      local count = tonumber(flat[j + 1])
      total = total + count
      counted[#counted + 1] = { slot, count }
    end
  end
  table.sort(counted, function(x, y) return x[1] < y[1] end)
  rates[i] = { key = key, slotMs = slotMs, amount = amount, total = total, current = current, counted = counted }
  if not fits(total, amount, limit) then
    local retry = slotMs * SLOTS
    if amount <= limit then
      local freed = 0
      for _, entry in ipairs(counted) do
        freed = freed + entry[2]
        if fits(total - freed, amount, limit) then
          retry = math.max(1, (entry[1] + SLOTS + 1) * slotMs - now)
          break
        end
      end
    end
    rateFailures[#rateFailures + 1] = { i - 1, total, retry }
  end
end
local budgets = {}
local budgetFailures = {}
for i = 1, budgetCount do
  local h = KEYS[rateCount + 2 * i - 1]
  local z = KEYS[rateCount + 2 * i]
  local limit = tonumber(ARGV[a]); local amount = tonumber(ARGV[a + 1]); local seed = ARGV[a + 2]
  a = a + 3
  if redis.call('HSETNX', h, 'u', seed) == 1 then redis.call('PEXPIRE', h, budgetTtl) end
  local used = tonumber(redis.call('HGET', h, 'u'))
  local reserved = tonumber(redis.call('HGET', h, 'r') or '0')
  if not fits(used + reserved, amount, limit) then
    expire(h, z, now)
    reserved = tonumber(redis.call('HGET', h, 'r') or '0')
  end
  budgets[i] = { h = h, z = z, amount = amount, used = used, reserved = reserved }
  if not fits(used + reserved, amount, limit) then
    budgetFailures[#budgetFailures + 1] = { i - 1, used, reserved }
  end
end
if #rateFailures > 0 or #budgetFailures > 0 then
  local out = { 0, now }
  for _, f in ipairs(rateFailures) do out[#out + 1] = f[1]; out[#out + 1] = f[2]; out[#out + 1] = f[3] end
  out[#out + 1] = '|'
  for _, f in ipairs(budgetFailures) do out[#out + 1] = f[1]; out[#out + 1] = f[2]; out[#out + 1] = f[3] end
  return out
end
local out = { 1, now }
for i = 1, rateCount do
  local r = rates[i]
  local oldest = r.current
  if #r.counted > 0 then oldest = r.counted[1][1] end
  if r.amount ~= 0 then
    redis.call('HINCRBY', r.key, r.current, r.amount)
    redis.call('PEXPIRE', r.key, (SLOTS + 2) * r.slotMs)
  end
  out[#out + 1] = r.total + r.amount
  out[#out + 1] = math.max(0, (oldest + SLOTS + 1) * r.slotMs - now)
end
for i = 1, budgetCount do
  local b = budgets[i]
  if b.amount > 0 then
    redis.call('HINCRBY', b.h, 'r', b.amount)
    redis.call('HSET', b.h, 'a:' .. id, b.amount)
    redis.call('ZADD', b.z, now + reservationTtl, id)
    redis.call('PEXPIRE', b.h, budgetTtl)
    redis.call('PEXPIRE', b.z, budgetTtl)
  end
  out[#out + 1] = b.used
  out[#out + 1] = b.reserved + math.max(b.amount, 0)
end
return out
`;

/**
 * KEYS: the rate windows, then a (hash, set) pair per budget.
 * ARGV: now, reservation id, budget key TTL ms, rate count, budget count; per rate: slot, slot ms,
 * delta; per budget: actual, seed. Returns each budget's settled usage.
 */
export const SETTLE_SCRIPT = `${PRELUDE}
local now = clock(ARGV[1])
local id = ARGV[2]
local budgetTtl = tonumber(ARGV[3])
local rateCount = tonumber(ARGV[4])
local budgetCount = tonumber(ARGV[5])
local a = 6
for i = 1, rateCount do
  local key = KEYS[i]
  local slot = tonumber(ARGV[a]); local slotMs = tonumber(ARGV[a + 1]); local delta = tonumber(ARGV[a + 2])
  a = a + 3
  if delta ~= 0 and slot >= math.floor(now / slotMs) - SLOTS then
    local count = tonumber(redis.call('HGET', key, ARGV[a - 3]) or '0')
    local next = math.max(0, count + delta)
    redis.call('HSET', key, ARGV[a - 3], next)
    redis.call('PEXPIRE', key, (SLOTS + 2) * slotMs)
  end
end
local out = {}
for i = 1, budgetCount do
  local h = KEYS[rateCount + 2 * i - 1]
  local z = KEYS[rateCount + 2 * i]
  local actual = tonumber(ARGV[a]); local seed = ARGV[a + 1]
  a = a + 2
  redis.call('HSETNX', h, 'u', seed)
  drop(h, z, id)
  out[i] = redis.call('HINCRBY', h, 'u', actual)
  redis.call('PEXPIRE', h, budgetTtl)
end
return out
`;

/**
 * KEYS: the rate windows, then a (hash, set) pair per budget.
 * ARGV: now, reservation id, rate count, budget count; per rate: slot, slot ms, amount.
 */
export const RELEASE_SCRIPT = `${PRELUDE}
local now = clock(ARGV[1])
local id = ARGV[2]
local rateCount = tonumber(ARGV[3])
local budgetCount = tonumber(ARGV[4])
local a = 5
for i = 1, rateCount do
  local key = KEYS[i]
  local slot = tonumber(ARGV[a]); local slotMs = tonumber(ARGV[a + 1]); local amount = tonumber(ARGV[a + 2])
  a = a + 3
  if amount ~= 0 and slot >= math.floor(now / slotMs) - SLOTS then
    local count = redis.call('HGET', key, ARGV[a - 3])
    if count then redis.call('HSET', key, ARGV[a - 3], math.max(0, tonumber(count) - amount)) end
  end
end
for i = 1, budgetCount do
  drop(KEYS[rateCount + 2 * i - 1], KEYS[rateCount + 2 * i], id)
end
return 1
`;
