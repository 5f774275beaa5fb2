-- claim: one atomic step from "nothing or an abandoned claim" to "PROCESSING, owned by the caller".
-- On Redis 7.0 and later a claim is first a plain SET key value NX PX ttl GET (a new key: claimed; a
-- finished one: a replay; a live lease or another fingerprint: in flight); this script runs only when a
-- processing record may have been abandoned (takeover), or for every claim on an older Redis.
--
-- KEYS[1]  the record of one scope: one string, laid out as RecordValue describes
--          (2S + four 13-digit fields: lease end, expiry, lease mark, retention; then
--          owner_len:owner fingerprint_len:fingerprint created:)
-- ARGV[1]  the request's fingerprint, "algorithm:value"
-- ARGV[2]  the new owner as the value holds it: owner_len:owner
-- ARGV[3]  lease, whole milliseconds
-- ARGV[4]  retention, whole milliseconds
-- ARGV[5]  the value of a new claim, built by the caller (its times from its estimate of this server's
--          clock, its lease mark max(lease, retention) - lease)
--
-- Returns {outcome, value}, outcome one of
--   claimed    the key was absent: ARGV[5] written with a TTL of max(lease, retention); value is empty
--   takeover   PROCESSING, lease over, same fingerprint: now owned by ARGV[2] with a fresh lease; value
--              is the record after the step
--   in_flight  PROCESSING with a live lease, or with a different fingerprint: left untouched; value is it
--   finished   COMPLETED or FAILED: left untouched; value is the record
-- Whether a lease is over is decided on the server's count alone: a record's lease mark says at which
-- remaining TTL (PTTL) the lease ends, so no client's clock takes part. Records of layout 1 (earlier
-- versions) hold server times: their lease ends by TIME.
local key = KEYS[1]
local current = redis.call('GET', key)
local lease = tonumber(ARGV[3])
local retention = tonumber(ARGV[4])
local ttl = math.max(lease, retention)

if not current then
  redis.call('SET', key, ARGV[5], 'PX', ttl)
  return {'claimed', ''}
end

local version, status = string.byte(current, 1, 2)
if status ~= 80 then -- 80 = 'P': finished
  return {'finished', current}
end

local function server_now()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

local function f13(n)
  return string.format('%013.0f', n)
end

local function front(now)
  return '2P' .. f13(now + lease) .. f13(now + ttl) .. f13(ttl - lease) .. f13(retention) .. ARGV[2]
end

if version == 49 then -- '1': layout 1
  local created, lease_end, ol, fl, pos =
      string.match(current, '^1P:(%d+):(%d+):%d+:%d+:(%d+):(%d+):()')
  local now = server_now()
  if tonumber(lease_end) > now
      or string.sub(current, pos + ol, pos + ol + fl - 1) ~= ARGV[1] then
    return {'in_flight', current}
  end
  local taken = front(now) .. fl .. ':' .. ARGV[1] .. created .. ':'
  redis.call('SET', key, taken, 'PX', ttl)
  return {'takeover', taken}
end

if redis.call('PTTL', key) > tonumber(string.sub(current, 29, 41)) then
  return {'in_flight', current}
end
local ol, opos = string.match(current, '^(%d+):()', 55)
local rest = opos + tonumber(ol)
local fl, fpos = string.match(current, '^(%d+):()', rest)
if string.sub(current, fpos, fpos + tonumber(fl) - 1) ~= ARGV[1] then
  return {'in_flight', current}
end
local taken = front(server_now()) .. string.sub(current, rest)
redis.call('SET', key, taken, 'PX', ttl)
return {'takeover', taken}
