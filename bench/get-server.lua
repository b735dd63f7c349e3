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

-- Give each thread its own random sequence.
local n = 0
function setup(thread)
  n = n + 1
  thread:set("seed", os.time() * 100 + n)
end

function init(args)
  math.randomseed(seed or os.time())
end

function request()
  if #tokens > 0 then
    headers["Authorization"] = "Bearer " .. tokens[math.random(1, #tokens)]
  end
  return wrk.format("GET", "/v1/servers/" .. math.random(first, last), headers)
end
