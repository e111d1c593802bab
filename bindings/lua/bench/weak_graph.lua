-- A large table graph with weak caches and ephemeron tables: objects are
-- linked in a graph, memoized in a weak-value cache, annotated through an
-- ephemeron table, and most of them dropped again.
-- Usage: weak_graph.lua [nodes] [rounds]
local n = tonumber(arg and arg[1]) or 50000
local rounds = tonumber(arg and arg[2]) or 4

local cache = setmetatable({}, { __mode = "v" })
local notes = setmetatable({}, { __mode = "k" })
local both = setmetatable({}, { __mode = "kv" })
local keep = {}

local seed = 42
local function rand(m)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % m + 1
end

for r = 1, rounds do
  local nodes = {}
  for i = 1, n do
    local node = { id = i, round = r, edges = {} }
    nodes[i] = node
    cache["n" .. i] = node
    notes[node] = { seen = r, back = node }  -- the value refers to its key
    if i % 7 == 0 then both[node] = nodes[rand(i)] end
  end
  for i = 1, n do
    local e = nodes[i].edges
    for k = 1, 3 do e[k] = nodes[rand(n)] end
  end
  keep[r % 3] = nodes[rand(n)]  -- a few survive, with what they reach
  nodes = nil
  collectgarbage()
  local cached, noted, paired = 0, 0, 0
  for _ in pairs(cache) do cached = cached + 1 end
  for _ in pairs(notes) do noted = noted + 1 end
  for _ in pairs(both) do paired = paired + 1 end
  print(string.format("round %d: cache %d, notes %d, pairs %d", r, cached, noted, paired))
end
