--[[
  The head delivery of a claimed webhook queue (a task's deliveries to one config), with that config. A queue found
  empty (its task was deleted, or its last delivery settled by another worker) leaves the ready set in the same step,
  so that a delivery queued meanwhile is never left without its due mark.

    KEYS[1] pushOutbox   KEYS[2] pushConfigs   KEYS[3] pushReady
    ARGV[1] task id   ARGV[2] config id

  Returns: {delivery JSON, config JSON or nil (the config was deleted meanwhile)}; nil when the queue is empty
]]
local settled = tonumber(redis.call('HGET', KEYS[1], 'd:' .. ARGV[2]) or 0)
local head = redis.call('HGET', KEYS[1], (settled + 1) .. ':' .. ARGV[2])
if not head then
  redis.call('ZREM', KEYS[3], ARGV[1] .. ' ' .. ARGV[2])
  return false
end
return {head, redis.call('HGET', KEYS[2], ARGV[2])}
