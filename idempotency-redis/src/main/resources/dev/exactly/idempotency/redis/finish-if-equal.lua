-- finish-if-equal: the finished value written only while the record is, byte for byte, the processing value
-- its owner holds; what SET ... IFEQ does on a server that has it (Valkey 8.1, Redis 8.4), for one that has not.
-- The common completion of a claim this process made: nobody waits for such a record (a waiter sets its
-- marker, then claims again, and a claim that finds the record in flight under a marker touches it, see
-- touch.lua), so it looks for no marker and publishes nothing. When the record is anything else (touched,
-- renewed, taken over, finished, gone) it writes nothing and the caller sends finish.lua, which decides by
-- the owner and publishes while a marker exists.
--
-- KEYS[1]  the record of one scope: prefix{scope hash}:r
-- ARGV[1]  the finished value, whole (see finish.lua)
-- ARGV[2]  the processing value the owner holds (what its claim wrote, or its takeover returned)
-- ARGV[3]  the retention in whole milliseconds, no leading zeros: the TTL from now
--
-- Returns 1 when written, else 0.
if redis.call('GET', KEYS[1]) == ARGV[2] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
  return 1
end
return 0
