-- wrk script for bench/get-server.sh: every request is GET /v1/servers/{id} with an id
-- drawn at random from [FIRST_ID, LAST_ID] and the bearer token in Authorization.
-- The same script drives Berth and the bare baseline, so both get the same requests.
--
--   FIRST_ID=1 LAST_ID=10000 TOKEN=berth_... wrk -t2 -c32 -d10s --latency -s get-server.lua URL

local first = tonumber(os.getenv("FIRST_ID") or "1")
local last = tonumber(os.getenv("LAST_ID") or "10000")
local token = os.getenv("TOKEN") or ""
-- TOKENS (comma-separated), when set: each request takes one of them at random, as
-- many clients would (bench/scale.sh).
local tokens = {}
for t in string.gmatch(os.getenv("TOKENS") or "", "[^,]+") do
  table.insert(tokens, t)
end

local headers = { ["Accept"] = "application/json" }
if token ~= "" then
  headers["Authorization"] = "Bearer " .. token
end

-- SEQUENTIAL=1: the threads take the ids in turn instead, first to last and over
-- again (THREADS: how many there are), so that a run of (LAST_ID - FIRST_ID + 1)
-- requests reads every server once: get-server.sh's warm-up of the read cache.
local sequential = os.getenv("SEQUENTIAL") == "1"
local nthreads = tonumber(os.getenv("THREADS") or "1")
local count = 0

-- Give each thread its own random sequence, and its place in turn.
local n = 0
function setup(thread)
  n = n + 1
  thread:set("seed", os.time() * 100 + n)
  thread:set("tid", n - 1)
end

function init(args)
  math.randomseed(seed or os.time())
end

function request()
  if #tokens > 0 then
    headers["Authorization"] = "Bearer " .. tokens[math.random(1, #tokens)]
  end
  local id
  if sequential then
    id = first + (count * nthreads + tid) % (last - first + 1)
    count = count + 1
  else
    id = math.random(first, last)
  end
  return wrk.format("GET", "/v1/servers/" .. id, headers)
end
