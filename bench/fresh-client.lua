-- wrk script of `npm run bench` (bench/wrk.ts): every request gets a fresh X-Forwarded-For from
-- 10.0.0.0/8, so the service's rate limiter (keyed on it, TRUST_PROXY=true) does its full work
-- per request but never answers 429. Arguments after `--`: a requests file (one request a line:
-- path, then tab-separated "name: value" headers; cycled in order), the first address number,
-- and "statuses" to count the answers by status (slower: wrk then hands each answer to Lua).
-- A path may hold {lim} and {off}: a distinct page per request (limit 100-199, offset 0-999,
-- 100,000 combinations), so a read cache never hits.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

local requests = {}

function init(args)
  for line in io.lines(args[1]) do
    if line ~= "" then
      local fields = {}
      for field in string.gmatch(line, "[^\t]+") do table.insert(fields, field) end
      local r = { path = table.remove(fields, 1), headers = {} }
      r.template = string.find(r.path, "{", 1, true) ~= nil
      for _, h in ipairs(fields) do
        local name, value = string.match(h, "^([^:]+):%s*(.*)$")
        r.headers[name] = value
      end
      table.insert(requests, r)
    end
  end
  n = tonumber(args[2]) or 0
  counts = {}
  statuses = ""
  if args[3] == "statuses" then
    response = function(status)
      counts[status] = (counts[status] or 0) + 1
    end
  end
end

function request()
  local r = requests[(n % #requests) + 1]
  r.headers["X-Forwarded-For"] = string.format("10.%d.%d.%d", math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256)
  local path = r.path
  if r.template then
    path = string.gsub(path, "{off}", tostring(n % 1000))
    path = string.gsub(path, "{lim}", tostring(100 + math.floor(n / 1000) % 100))
  end
  n = n + 1
  if next(counts) ~= nil then
    local parts = {}
    for status, count in pairs(counts) do table.insert(parts, status .. ":" .. count) end
    statuses = table.concat(parts, ",")
  end
  return wrk.format("GET", path, r.headers)
end

function done(summary, latency, _)
  local ip, byStatus = 0, {}
  for _, t in ipairs(threads) do
    ip = math.max(ip, t:get("n"))
    table.insert(byStatus, t:get("statuses"))
  end
  local e = summary.errors
  io.write(string.format(
    '\n{"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"socketErrors":%d,"non2xx3xx":%d,"timeouts":%d,"ipNext":%d,"statuses":"%s"}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write, e.status, e.timeout, ip, table.concat(byStatus, ",")))
end
