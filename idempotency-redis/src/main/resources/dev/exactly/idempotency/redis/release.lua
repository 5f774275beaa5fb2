-- release: delete a PROCESSING record owned by ARGV[1], so that a retry runs again.
--
-- KEYS[1]  the record of one scope (layout 2 of RecordValue): prefix{scope hash}:r
-- KEYS[2]  the scope's waiter marker, prefix{scope hash}:w: present while some process waits for the scope
-- ARGV[1]  the owner presented (the fence), as the value holds it at byte 55: owner_len:owner
--
-- Returns 1 when deleted (and, if a waiter marker exists, the scope hash from KEYS[1] published on the
-- change channel, KEYS[1]'s prefix .. 'changes', in the same step), 0 when the record is absent,
-- finished, of another layout or owned by someone else.
local current = redis.call('GET', KEYS[1])
if not current then
  return 0
end
local version, status = string.byte(current, 1, 2)
if version ~= 50 or status ~= 80 or string.find(current, ARGV[1], 55, true) ~= 55 then
  return 0
end
redis.call('DEL', KEYS[1])
if redis.call('EXISTS', KEYS[2]) == 1 then
  local key = KEYS[1] -- prefix, '{', 64 hex digits, '}:r'
  redis.call('PUBLISH', string.sub(key, 1, #key - 68) .. 'changes', string.sub(key, #key - 66, #key - 3))
end
return 1
