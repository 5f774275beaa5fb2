-- renew: extend the lease of a PROCESSING record owned by ARGV[1] to ARGV[2] ms from now.
--
-- KEYS[1]  the record of one scope (layout: RecordValue)
-- ARGV[1]  the owner token presented (the fence)
-- ARGV[2]  lease, whole milliseconds
--
-- Returns 1 when applied, 0 when the record is absent, finished or owned by someone else. The record
-- is never dropped while its lease runs: when the new lease ends after the record's expiry, the expiry
-- (field and TTL) moves to the lease end; otherwise the TTL is kept.
local key = KEYS[1]
local current = redis.call('GET', key)
if not current then
  return 0
end
local created, expires, rest, ol, pos =
    string.match(current, '^1P:(%d+):%d+:(%d+):(%d+:(%d+):%d+:().*)$')
if not created or string.sub(current, pos, pos + ol - 1) ~= ARGV[1] then
  return 0
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local lease_end = string.format('%.0f', now + tonumber(ARGV[2]))

if tonumber(lease_end) > tonumber(expires) then
  redis.call('SET', key, '1P:' .. created .. ':' .. lease_end .. ':' .. lease_end .. ':' .. rest, 'PX', ARGV[2])
else
  redis.call('SET', key, '1P:' .. created .. ':' .. lease_end .. ':' .. expires .. ':' .. rest, 'KEEPTTL')
end
return 1
