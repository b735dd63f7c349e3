-- wrk script for bench/scale.sh: every request is an order, POST /v1/servers (plan 1,
-- location 1, image 1), with the bearer token in Authorization. done() prints how the
-- answers went: "orders: created N other N 5xx N".
local token = os.getenv("TOKEN") or ""
local headers = { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" }
local body = '{"plan_id": 1, "location_id": 1, "image_id": 1}'
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  created, other, fivexx = 0, 0, 0
end

function request()
  return wrk.format("POST", "/v1/servers", headers, body)
end

function response(status, hdrs, resp)
  if status == 201 then
    created = created + 1
  elseif status >= 500 then
    fivexx = fivexx + 1
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local c, o, f = 0, 0, 0
  for _, t in ipairs(threads) do
    c = c + t:get("created")
    o = o + t:get("other")
    f = f + t:get("fivexx")
  end
  io.write(string.format("orders: created %d other %d 5xx %d\n", c, o, f))
end
