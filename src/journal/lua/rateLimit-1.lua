--[[
  Takes one request from a client's token bucket, shared by every gateway: the bucket refills at `rate` tokens per
  second up to `burst`, on Redis's clock. A refusal writes nothing.

    KEYS[1] bucket   HASH  t = tokens left (may be fractional), ms = Redis time (ms) of the last take

    ARGV[1] rate (tokens per second, > 0)   ARGV[2] burst (bucket size, >= 1)   ARGV[3] cost (tokens, >= 1)

  Returns: 0 taken; N > 0 refused, N = milliseconds until `cost` tokens are there
]]
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 't', 'ms')
local tokens = tonumber(state[1])
local last = tonumber(state[2])
if not tokens or not last then
  tokens = burst
  last = nowMs
end
tokens = math.min(burst, tokens + math.max(0, nowMs - last) * rate / 1000)
if tokens < cost then
  return math.max(1, math.ceil((cost - tokens) * 1000 / rate))
end

-- all checks passed: writes only from here on
redis.call('HSET', KEYS[1], 't', tostring(tokens - cost), 'ms', nowMs)
-- a full bucket needs no key: it lapses once it would have refilled
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return 0
