-- release: delete a PROCESSING record owned by ARGV[1], so that a retry runs again.
--
-- KEYS[1]  the record hash of one scope
-- ARGV[1]  the owner token presented (the fence)
-- ARGV[2]  the change channel
-- ARGV[3]  the message: the scope hash
--
-- Returns 1 when deleted (and the change published in the same step), 0 when the record is absent,
-- finished or owned by someone else.
local key = KEYS[1]
local current = redis.call('HMGET', key, 'status', 'owner')
if current[1] ~= 'PROCESSING' or current[2] ~= ARGV[1] then
  return 0
end
redis.call('DEL', key)
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
