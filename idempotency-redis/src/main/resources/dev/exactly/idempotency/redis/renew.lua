-- renew: extend the lease of a PROCESSING record owned by ARGV[1] to ARGV[2] ms from now.
--
-- KEYS[1]  the record hash of one scope
-- ARGV[1]  the owner token presented (the fence)
-- ARGV[2]  lease, whole milliseconds
--
-- Returns 1 when applied, 0 when the record is absent, finished or owned by someone else. The record
-- is never dropped while its lease runs: when the new lease ends after the record's expiry, the expiry
-- (field and TTL) moves to the lease end.
local key = KEYS[1]
local current = redis.call('HMGET', key, 'status', 'owner', 'expires_ms')
if current[1] ~= 'PROCESSING' or current[2] ~= ARGV[1] then
  return 0
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local lease_end = now + tonumber(ARGV[2])

redis.call('HSET', key, 'lease_ms', string.format('%.0f', lease_end))
if lease_end > tonumber(current[3]) then
  redis.call('HSET', key, 'expires_ms', string.format('%.0f', lease_end))
  redis.call('PEXPIRE', key, ARGV[2])
end
return 1
