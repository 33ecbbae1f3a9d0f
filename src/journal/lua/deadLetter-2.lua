--[[
  Moves a queue entry to the dead-letter stream: appended there with its reason, acknowledged and deleted here.

    KEYS[1] queue   KEYS[2] dead
    ARGV[1] consumer group   ARGV[2] queue entry id   ARGV[3] run id   ARGV[4] task id   ARGV[5] reason
    ARGV[6] dead-letter stream max length (approximate)

  Returns: the dead-letter entry id
]]
local id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[6], '*', 'run', ARGV[3], 'task', ARGV[4], 'reason',
  ARGV[5], 'entry', ARGV[2])
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
return id
