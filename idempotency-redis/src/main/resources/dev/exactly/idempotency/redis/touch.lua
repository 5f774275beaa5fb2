-- touch: the re-read of a scope by a process that waits for it (its waiter marker set before), which
-- makes a processing record unlike any value its owner holds.
-- An owner completes the claim it holds without looking for a waiter while the record is, byte for byte, the
-- value its claim wrote: with SET ... IFEQ on a server with compare-and-set, else in finish.lua, and neither
-- publishes then. A waiter changes those bytes here (the expiry shown, 16..28, one millisecond earlier;
-- nothing any decision reads: not the lease end, the lease mark, the retention, the owner, the fingerprint,
-- nor the TTL), so that the owner's completion finds another value and goes to finish.lua's owner check,
-- which publishes while the marker exists.
-- Each touch lowers the expiry shown again: no sequence of touches gives back a value an owner holds.
--
-- KEYS[1]  the record of one scope: prefix{scope hash}:r
--
-- Returns nil when there is no record (the waiter claims again), the record as it is when it is finished
-- or of layout 1 (no owner holds a layout-1 value to compare with), else the processing record as touched.
local current = redis.call('GET', KEYS[1])
if not current then
  return false
end
if string.byte(current, 1) ~= 50 or string.byte(current, 2) ~= 80 then
  return current
end
local touched = string.sub(current, 1, 15) .. string.format('%013.0f', tonumber(string.sub(current, 16, 28)) - 1)
    .. string.sub(current, 29)
redis.call('SET', KEYS[1], touched, 'KEEPTTL')
return touched
