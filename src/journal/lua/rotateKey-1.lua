--[[
  Gives a client a new API key: the record's keyhash becomes the new key's. With a grace period the key it replaces
  stays the record's oldkeyhash (its mapping lapses at the end of the grace); without one it is forgotten. A key that
  an earlier rotation kept is given up either way: at most two keys work at once. The caller maps the new key to the
  client before this step, and afterwards sets the lapse of the replaced key's mapping or deletes it, and deletes the
  mapping of the key given up.

    KEYS[1] client (HASH: the client's record: keyhash, oldkeyhash, revoked)
    ARGV[1] the new key's hash   ARGV[2] "1" to keep the replaced key for a grace period, "" to forget it

  Returns: {the replaced key's hash, the hash of the key an earlier rotation kept, or ""}; -1 no such client; -2 the
           client is revoked (nothing written either way)
]]
local record = redis.call('HMGET', KEYS[1], 'keyhash', 'oldkeyhash', 'revoked')
if not record[1] then
  return -1
end
if record[3] == '1' then
  return -2
end

-- all checks passed: writes only from here on
if ARGV[2] == '1' then
  redis.call('HSET', KEYS[1], 'keyhash', ARGV[1], 'oldkeyhash', record[1])
else
  redis.call('HSET', KEYS[1], 'keyhash', ARGV[1])
  redis.call('HDEL', KEYS[1], 'oldkeyhash')
end
return {record[1], record[2] or ''}
