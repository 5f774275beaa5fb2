-- release: delete a PROCESSING record owned by ARGV[1], so that a retry runs again.
--
-- KEYS[1]  the record of one scope (layout 2 of RecordValue)
-- KEYS[2]  the scope's waiter marker: present while some process waits for the scope
-- ARGV[1]  the owner presented (the fence), as the value holds it at byte 55: owner_len:owner
-- ARGV[2]  the change channel
-- ARGV[3]  the message: the scope hash
--
-- Returns 1 when deleted (and, if a waiter marker exists, the change published in the same step), 0
-- when the record is absent, finished, of another layout or owned by someone else.
local current = redis.call('GET', KEYS[1])
if not current or string.byte(current, 1) ~= 50 or string.byte(current, 2) ~= 80
    or string.sub(current, 55, 54 + #ARGV[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('PUBLISH', ARGV[2], ARGV[3])
end
return 1
