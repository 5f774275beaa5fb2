-- complete: PROCESSING owned by ARGV[1] -> COMPLETED or FAILED with its response, in one step.
--
-- KEYS[1]  the record of one scope (layout 2 of RecordValue)
-- KEYS[2]  the scope's waiter marker: present while some process waits for the scope
-- ARGV[1]  the owner presented (the fence), as the value holds it at byte 55: owner_len:owner
-- ARGV[2]  the finished value's front: 2, C or F, the finish time, two zero fields (41 bytes)
-- ARGV[3]  the finished part: response_status:headers_len:headers body
-- ARGV[4]  the change channel
-- ARGV[5]  the message: the scope hash
--
-- Returns 1 when applied, 0 when the record is absent, finished, of another layout or owned by someone
-- else (a stale owner never overwrites). The fence is one substring comparison at a fixed offset. On
-- success the value is the front, the processing value's retention, owner, fingerprint and creation
-- time as they were, and the finished part; the TTL is the retention from now; and, only if a waiter
-- marker exists, the change is published in the same step.
local current = redis.call('GET', KEYS[1])
if not current or string.byte(current, 1) ~= 50 or string.byte(current, 2) ~= 80
    or string.sub(current, 55, 54 + #ARGV[1]) ~= ARGV[1] then
  return 0
end
-- the retention (bytes 42-54, zero-padded, at least 1) goes to PX as text from its first significant
-- digit: Redis takes no leading zeros, and a Lua number would be printed back to text with printf
redis.call('SET', KEYS[1], ARGV[2] .. string.sub(current, 42) .. ARGV[3],
  'PX', string.sub(current, string.find(current, '[1-9]', 42), 54))
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('PUBLISH', ARGV[4], ARGV[5])
end
return 1
