-- complete: PROCESSING owned by ARGV[1] -> COMPLETED or FAILED with its response, in one step.
--
-- KEYS[1]  the record of one scope (layout: RecordValue)
-- KEYS[2]  the scope's waiter marker: present while some process waits for the scope
-- ARGV[1]  the owner token presented (the fence)
-- ARGV[2]  C (COMPLETED) or F (FAILED)
-- ARGV[3]  response status code
-- ARGV[4]  response headers, encoded by the store
-- ARGV[5]  response body, exact bytes
-- ARGV[6]  the change channel
-- ARGV[7]  the message: the scope hash
--
-- Returns 1 when applied, 0 when the record is absent, finished or owned by someone else (a stale
-- owner never overwrites). On success the record is kept for its retention from now (TTL and
-- expires), the lease is dropped, and, only if a waiter marker exists, the change is published in the
-- same step (nobody waits for almost every key: no message to send, nor for every instance to receive).
local key = KEYS[1]
local current = redis.call('GET', key)
if not current then
  return 0
end
local created, retention, ol, fl, pos =
    string.match(current, '^1P:(%d+):%d+:%d+:(%d+):(%d+):(%d+):()')
if not created or string.sub(current, pos, pos + ol - 1) ~= ARGV[1] then
  return 0
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

redis.call('SET', key,
  '1' .. ARGV[2] .. ':' .. created .. ':0:' .. string.format('%.0f', now + tonumber(retention)) .. ':'
      .. retention .. ':' .. ol .. ':' .. fl .. ':' .. string.sub(current, pos, pos + ol + fl - 1)
      .. ARGV[3] .. ':' .. #ARGV[4] .. ':' .. ARGV[4] .. ARGV[5],
  'PX', retention)
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('PUBLISH', ARGV[6], ARGV[7])
end
return 1
