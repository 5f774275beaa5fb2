-- One phase of the payments benchmark, run by wrk (https://github.com/wg/wrk, LuaJIT): every request is
-- POST /v1/charges with a fresh Idempotency-Key and a charge for one of the run's customers, and every
-- answer is checked.
--
-- Arguments (after --):
--   1  tag: unique to this phase; a key is tag-<thread>-<n>
--   2  the API key (Authorization: Bearer)
--   3  customers: the charge of request n of thread t goes to customer cus_<(n * threads + t) mod customers>
--   4  amount in minor units (usd)
--   5  threads (wrk -t; a thread's own Lua state does not see the table setup() fills)
--
-- An answer passes if its status is 201, it is not marked as a replay, and its body is a succeeded
-- charge with an id (ch_...), the amount sent and one of the run's customers (wrk does not say which
-- request an answer belongs to; the books are checked against the answers afterwards). Any other answer (any non-2xx
-- included) fails. done() prints one line "EXACTLY k=v ..." and up to a few "EXACTLY-ERROR <text>"
-- lines for the harness to parse.

local threads = {}

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  prefix = args[1] .. "-" .. id .. "-"
  auth = "Bearer " .. args[2]
  customers = tonumber(args[3])
  amount = args[4]
  thread_count = tonumber(args[5])
  counter = 0
  checked = 0
  failed = 0
  samples = ""
  sampled = 0
  headers = { ["Content-Type"] = "application/json", ["Authorization"] = auth }
end

function request()
  counter = counter + 1
  local customer = "cus_" .. ((counter * thread_count + id) % customers)
  headers["Idempotency-Key"] = prefix .. counter
  return wrk.format("POST", nil, headers,
    '{"amount":' .. amount .. ',"currency":"usd","customer":"' .. customer .. '","source":"tok_visa"}')
end

local function fail(text)
  failed = failed + 1
  if sampled < 3 then
    sampled = sampled + 1
    samples = samples .. text:gsub("[\r\n]", " "):sub(1, 300) .. "\n"
  end
end

function response(status, headers, body)
  checked = checked + 1
  if status ~= 201 then
    return fail("status " .. status .. ": " .. body)
  end
  if headers["Idempotent-Replayed"] then
    return fail("a fresh key answered as a replay: " .. body)
  end
  if not body:match('^{"id":"ch_[%w_-]+"') then
    return fail("no charge id in " .. body)
  end
  if not body:find('"status":"succeeded"', 1, true) then
    return fail("charge not succeeded: " .. body)
  end
  if not body:find('"amount":' .. amount .. ',', 1, true) then
    return fail("wrong amount: " .. body)
  end
  local customer = body:match('"customer":"([^"]*)"')
  if not customer or not customer:match("^cus_%d+$") or tonumber(customer:sub(5)) >= customers then
    return fail("answer for an unknown customer: " .. body)
  end
end

function done(summary, latency, requests)
  local all_checked, all_failed, all_samples = 0, 0, ""
  for _, thread in ipairs(threads) do
    all_checked = all_checked + thread:get("checked")
    all_failed = all_failed + thread:get("failed")
    all_samples = all_samples .. thread:get("samples")
  end
  local e = summary.errors
  io.write(string.format(
    "EXACTLY responses=%d checked=%d failed=%d connect=%d read=%d write=%d timeout=%d status=%d duration_us=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d\n",
    summary.requests, all_checked, all_failed, e.connect, e.read, e.write, e.timeout, e.status,
    summary.duration, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
  for line in all_samples:gmatch("[^\n]+") do
    io.write("EXACTLY-ERROR ", line, "\n")
  end
end
