-- One phase of the HTTP benchmark, run by wrk (https://github.com/wg/wrk, LuaJIT): every request is a
-- POST with an Idempotency-Key and a small JSON body naming the key, and every answer is checked.
--
-- Arguments (after --):
--   1  mode: "fresh" (each request a key never sent before), "replay" (keys completed beforehand) or
--      "mixed" (every tenth request of a thread a replay, the others fresh keys; a replay carries
--      X-Bench-Replay: 1, which only the raw floor reads: it is told what a guard must find out)
--   2  tag: unique to this phase; a fresh key is tag-<thread>-<n>, after a random prefix in random order
--   3  marked: "1" if replays must carry Idempotent-Replayed: true (a guard, or a raw replay read);
--      "0" if no answer may carry it (the unguarded endpoint runs every request)
--   4  keys file (replay and mixed modes): one "key<TAB>first answer's body" per line
--   5  key order: "random" (each fresh key starts with eight random hex digits and a dot, so that keys fall
--      anywhere in a sorted index, as clients' random keys do) or "ordered" (consecutive keys adjacent)
--
-- An answer passes if its status is 201, its body names the request's key space ("reference"), a fresh
-- key's answer is not marked as a replay, and a replay's answer is marked (or not) as required and, when
-- marked, is byte for byte the body the key's first execution answered. done() prints one line
-- "EXACTLY k=v ..." (fresh: the answers to fresh keys that passed) and up to a few "EXACTLY-ERROR <text>"
-- lines for the harness to parse.

local threads = {}

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  mode = args[1]
  marked = args[3] == "1"
  prefix = args[2] .. "-" .. id .. "-"
  scatter = args[5] == "random"
  if not scatter and args[5] ~= "ordered" then
    error("key order must be random or ordered, not " .. tostring(args[5]))
  end
  counter = 0
  checked = 0
  failed = 0
  fresh = 0
  samples = ""
  sampled = 0
  keys = {}
  bodies = {}
  if mode == "replay" or mode == "mixed" then
    for line in io.lines(args[4]) do
      local key, body = line:match("^([^\t]+)\t(.*)$")
      keys[#keys + 1] = key
      bodies[key] = body
    end
    if #keys == 0 then
      error("no replay keys in " .. args[4])
    end
  elseif mode ~= "fresh" then
    error("mode must be fresh, replay or mixed, not " .. tostring(mode))
  end
  -- a seed of its own per thread and phase: the prefixes of one phase do not repeat the phase's before
  local seed = id * 7919
  for i = 1, #args[2] do
    seed = (seed * 31 + args[2]:byte(i)) % 2147483647
  end
  math.randomseed(seed)
  headers = { ["Content-Type"] = "application/json" }
end

function request()
  local key
  counter = counter + 1
  if mode == "fresh" or (mode == "mixed" and counter % 10 ~= 0) then
    if scatter then
      key = string.format("%04x%04x.", math.random(0, 65535), math.random(0, 65535)) .. prefix .. counter
    else
      key = prefix .. counter
    end
    headers["X-Bench-Replay"] = nil
  else
    key = keys[math.random(#keys)]
    if mode == "mixed" then
      headers["X-Bench-Replay"] = "1"
    end
  end
  headers["Idempotency-Key"] = key
  return wrk.format("POST", nil, headers, '{"amount":1999,"currency":"EUR","reference":"' .. key .. '"}')
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
  local ref = body:match('"reference":"([^"]*)"')
  if not ref then
    return fail("no reference in " .. body)
  end
  local replayed = headers["Idempotent-Replayed"]
  local ordered = ref:match("^%x+%.(.*)$") or ref
  if mode == "fresh" or (mode == "mixed" and ordered:sub(1, #prefix) == prefix) then
    if ordered:sub(1, #prefix) ~= prefix then
      return fail("answer for " .. ref .. " on a connection that sent keys " .. prefix .. "*")
    end
    if replayed then
      return fail("fresh key " .. ref .. " answered as a replay")
    end
    fresh = fresh + 1
  else
    local first = bodies[ref]
    if not first then
      return fail("answer for " .. ref .. ", not a replay key")
    end
    if marked then
      if replayed ~= "true" then
        return fail("replay of " .. ref .. " not marked Idempotent-Replayed: true")
      end
      if body ~= first then
        return fail("replay of " .. ref .. " differs from the first answer: " .. body .. " vs " .. first)
      end
    elseif replayed then
      return fail("unguarded answer for " .. ref .. " marked as a replay")
    end
  end
end

function done(summary, latency, requests)
  local all_checked, all_failed, all_fresh, all_samples = 0, 0, 0, ""
  for _, thread in ipairs(threads) do
    all_checked = all_checked + thread:get("checked")
    all_failed = all_failed + thread:get("failed")
    all_fresh = all_fresh + thread:get("fresh")
    all_samples = all_samples .. thread:get("samples")
  end
  local e = summary.errors
  io.write(string.format(
    "EXACTLY responses=%d checked=%d failed=%d fresh=%d connect=%d read=%d write=%d timeout=%d status=%d duration_us=%d p50_us=%d p99_us=%d max_us=%d\n",
    summary.requests, all_checked, all_failed, all_fresh, e.connect, e.read, e.write, e.timeout, e.status,
    summary.duration, latency:percentile(50), latency:percentile(99), latency.max))
  for line in all_samples:gmatch("[^\n]+") do
    io.write("EXACTLY-ERROR ", line, "\n")
  end
end
