-- complete: PROCESSING owned by ARGV[1] -> COMPLETED or FAILED with its response, in one step.
--
-- KEYS[1]  the record of one scope (layout 2 of RecordValue): prefix{scope hash}:r
-- KEYS[2]  the scope's waiter marker, prefix{scope hash}:w: present while some process waits for the scope
-- ARGV[1]  the owner presented (the fence), as the value holds it at byte 55: owner_len:owner
-- ARGV[2]  the finished value's front: 2, C or F, the finish time, two zero fields (41 bytes)
-- ARGV[3]  the finished part: response_status:headers_len:headers body
--
-- Returns 1 when applied, 0 when the record is absent, finished, of another layout or owned by someone
-- else (a stale owner never overwrites). The fence is one comparison at a fixed offset (a plain find
-- anchored at byte 55: no substring is made). On success the value is the front, the processing
-- value's retention, owner, fingerprint and creation time as they were, and the finished part; the TTL
-- is the retention from now; and, only if a waiter marker exists, the scope hash (from KEYS[1]) is
-- published on the change channel (KEYS[1]'s prefix .. 'changes') in the same step.
local current = redis.call('GET', KEYS[1])
if not current then
  return 0
end
local version, status = string.byte(current, 1, 2)
if version ~= 50 or status ~= 80 or string.find(current, ARGV[1], 55, true) ~= 55 then
  return 0
end
-- the retention (bytes 42-54, zero-padded, at least 1) goes to PX as text from its first significant
-- digit: Redis takes no leading zeros, and a Lua number would be printed back to text with printf
redis.call('SET', KEYS[1], ARGV[2] .. string.sub(current, 42) .. ARGV[3],
  'PX', string.sub(current, string.find(current, '[1-9]', 42), 54))
if redis.call('EXISTS', KEYS[2]) == 1 then
  local key = KEYS[1] -- prefix, '{', 64 hex digits, '}:r'
  redis.call('PUBLISH', string.sub(key, 1, #key - 68) .. 'changes', string.sub(key, #key - 66, #key - 3))
end
return 1
