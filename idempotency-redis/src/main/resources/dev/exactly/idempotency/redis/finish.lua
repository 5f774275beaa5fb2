-- finish: PROCESSING owned by ARGV[1] -> COMPLETED or FAILED, the whole finished value sent by its owner.
-- The completion of a claim this process made (complete.lua is the one for any other): the owner still
-- holds the processing value it wrote (or that its takeover returned), so it sends the finished value
-- whole and the script copies no part of the stored one.
--
-- KEYS[1]  the record of one scope (layout 2 of RecordValue): prefix{scope hash}:r
-- KEYS[2]  the scope's waiter marker, prefix{scope hash}:w: present while some process waits for the scope
-- ARGV[1]  the owner presented (the fence), as the value holds it at byte 55: owner_len:owner
-- ARGV[2]  the finished value: 2, C or F, the finish time, two zero fields, then the processing value's
--          retention, owner, fingerprint and creation time as the owner wrote them, then
--          response_status:headers_len:headers body
-- ARGV[3]  the retention in whole milliseconds, no leading zeros: the TTL from now
--
-- Returns 1 when applied, 0 when the record is absent, finished, of another layout or owned by someone
-- else (a stale owner never overwrites). The fence is one comparison at a fixed offset. Whatever the
-- owner holds of the processing value is what the record holds while the owner matches: no other
-- writer changes a record's bytes from the retention on without taking it over, which changes the
-- owner. On success, and only if a waiter marker exists, the scope hash (from KEYS[1]) is published on
-- the change channel (KEYS[1]'s prefix .. 'changes') in the same step.
-- The owner sends this only after its SET ... IFEQ (or finish-if-equal.lua where the server has no IFEQ)
-- found the record other than the value it holds: the common completion, of a record nobody waits for,
-- never comes here.
local current = redis.call('GET', KEYS[1])
if not current then
  return 0
end
local version, status = string.byte(current, 1, 2)
if version ~= 50 or status ~= 80 or string.find(current, ARGV[1], 55, true) ~= 55 then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
if redis.call('EXISTS', KEYS[2]) == 1 then
  local key = KEYS[1] -- prefix, '{', 64 hex digits, '}:r'
  redis.call('PUBLISH', string.sub(key, 1, #key - 68) .. 'changes', string.sub(key, #key - 66, #key - 3))
end
return 1
