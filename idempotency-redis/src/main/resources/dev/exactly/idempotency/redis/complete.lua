-- complete: PROCESSING owned by ARGV[1] -> COMPLETED or FAILED with its response, in one step.
--
-- KEYS[1]  the record hash of one scope
-- ARGV[1]  the owner token presented (the fence)
-- ARGV[2]  COMPLETED or FAILED
-- ARGV[3]  response status code
-- ARGV[4]  response headers, encoded by the store
-- ARGV[5]  response body, exact bytes
-- ARGV[6]  the change channel
-- ARGV[7]  the message: the scope hash
--
-- Returns 1 when applied, 0 when the record is absent, finished or owned by someone else (a stale
-- owner never overwrites). On success the record is kept for its retention from now (TTL and
-- expires_ms), the lease field is dropped, and the change is published in the same step.
local key = KEYS[1]
local current = redis.call('HMGET', key, 'status', 'owner', 'retention_ms')
if current[1] ~= 'PROCESSING' or current[2] ~= ARGV[1] then
  return 0
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

redis.call('HSET', key,
  'status', ARGV[2],
  'expires_ms', string.format('%.0f', now + tonumber(current[3])),
  'response_status', ARGV[3],
  'response_headers', ARGV[4],
  'response_body', ARGV[5])
redis.call('HDEL', key, 'lease_ms')
redis.call('PEXPIRE', key, current[3])
redis.call('PUBLISH', ARGV[6], ARGV[7])
return 1
