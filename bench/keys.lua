-- wrk script of bench/gateway.sh: each request carries the next API key
-- of the file KEYS_FILE (one a line, visited in turn), on the URL's path.
local keys = {}
for line in io.lines(os.getenv("KEYS_FILE")) do
  keys[#keys + 1] = line
end
local i = 0

request = function()
  i = i % #keys + 1
  return wrk.format(nil, nil, { ["X-API-Key"] = keys[i] })
end
