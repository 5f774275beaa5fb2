-- mark: note in a PROCESSING record that somebody waits for it (status P -> W), so that the step that
-- ends it (complete, release) publishes the change. Nothing else changes (SETRANGE keeps the value's
-- other bytes and the TTL); a takeover and a renewal keep the mark.
--
-- KEYS[1]  the record of one scope (layout 2 of RecordValue)
-- ARGV[1]  the owner the waiter saw, as the value holds it at byte 55: owner_len:owner
--
-- Returns 1 when the record is still processing under that owner (marked now or before), 0 when it is
-- absent, finished, of another layout or owned by someone else: it changed since the waiter read it,
-- possibly without publishing, so the waiter re-reads.
local current = redis.call('GET', KEYS[1])
if not current then
  return 0
end
local version, status = string.byte(current, 1, 2)
if version ~= 50 or (status ~= 80 and status ~= 87)
    or string.sub(current, 55, 54 + #ARGV[1]) ~= ARGV[1] then
  return 0
end
if status == 80 then
  redis.call('SETRANGE', KEYS[1], 1, 'W')
end
return 1
