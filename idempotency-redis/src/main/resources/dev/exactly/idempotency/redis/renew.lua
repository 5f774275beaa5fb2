-- renew: extend the lease of a PROCESSING record owned by ARGV[1] to ARGV[2] ms from now.
--
-- KEYS[1]  the record of one scope (layout 2 of RecordValue)
-- ARGV[1]  the owner presented (the fence), as the value holds it at byte 55: owner_len:owner
-- ARGV[2]  lease, whole milliseconds
--
-- Returns 1 when applied, 0 when the record is absent, finished, of another layout or owned by someone
-- else. The record is never dropped while its lease runs: when the new lease outlasts the key's TTL,
-- the TTL (and the expiry field) becomes the lease and the lease mark 0; otherwise the TTL is kept and
-- the lease mark is the remaining TTL minus the lease. The lease end shown is the server's TIME + lease.
local key = KEYS[1]
local current = redis.call('GET', key)
if not current or string.byte(current, 1) ~= 50 or string.byte(current, 2) ~= 80
    or string.sub(current, 55, 54 + #ARGV[1]) ~= ARGV[1] then
  return 0
end
local lease = tonumber(ARGV[2])
local pttl = redis.call('PTTL', key)
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local lease_end = string.format('%013.0f', now + lease)

if lease >= pttl then
  redis.call('SET', key, '2P' .. lease_end .. lease_end .. '0000000000000' .. string.sub(current, 42), 'PX', lease)
else
  redis.call('SET', key, '2P' .. lease_end .. string.sub(current, 16, 28) .. string.format('%013.0f', pttl - lease)
      .. string.sub(current, 42), 'KEEPTTL')
end
return 1
