-- release: delete a PROCESSING record owned by ARGV[1], so that a retry runs again.
--
-- KEYS[1]  the record of one scope (layout: RecordValue)
-- KEYS[2]  the scope's waiter marker: present while some process waits for the scope
-- ARGV[1]  the owner token presented (the fence)
-- ARGV[2]  the change channel
-- ARGV[3]  the message: the scope hash
--
-- Returns 1 when deleted (and, if a waiter marker exists, the change published in the same step), 0
-- when the record is absent, finished or owned by someone else.
local key = KEYS[1]
local current = redis.call('GET', key)
if not current then
  return 0
end
local ol, pos = string.match(current, '^1P:%d+:%d+:%d+:%d+:(%d+):%d+:()')
if not ol or string.sub(current, pos, pos + ol - 1) ~= ARGV[1] then
  return 0
end
redis.call('DEL', key)
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('PUBLISH', ARGV[2], ARGV[3])
end
return 1
