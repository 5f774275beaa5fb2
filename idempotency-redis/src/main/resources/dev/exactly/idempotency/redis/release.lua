-- release: delete a PROCESSING record owned by ARGV[1], so that a retry runs again.
--
-- KEYS[1]  the record of one scope (layout 2 of RecordValue): prefix{scope hash}:r
-- ARGV[1]  the owner presented (the fence), as the value holds it at byte 55: owner_len:owner
--
-- Returns 1 when deleted (and, only if the record was marked as waited for, status W instead of P, the
-- scope hash published on the change channel, prefix .. 'changes', in the same step), 0 when the
-- record is absent, finished, of another layout or owned by someone else.
local current = redis.call('GET', KEYS[1])
if not current then
  return 0
end
local version, status = string.byte(current, 1, 2)
if version ~= 50 or (status ~= 80 and status ~= 87)
    or string.sub(current, 55, 54 + #ARGV[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
if status == 87 then -- 'W': somebody waits
  local prefix, hash = string.match(KEYS[1], '^(.*){(.*)}')
  redis.call('PUBLISH', prefix .. 'changes', hash)
end
return 1
