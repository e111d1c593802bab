-- Full collections of a heap of every kind of object Lua sweeps from
-- 'allgc' (tables, strings, closures, suspended coroutines with open
-- upvalues, weak and ephemeron entries, objects with finalizers), with
-- the collector stopped between them: a third of what lives dies after
-- each, and new objects come in. Then two full collections that find an
-- incremental sweep under way, and one after a sweep whose start freed
-- split points. Prints per collection what lives, what the weak tables
-- hold, the finalizers run and the memory in use.
-- Usage: sweep.lua [objects per batch]; MODE="generational" (a global set
-- before, with -e) runs it in generational mode, without the steps.
local N = tonumber(arg and arg[1]) or 20000
collectgarbage(MODE or "incremental")
collectgarbage("stop")
local finalized = 0
local weak = setmetatable({}, { __mode = "v" })
local eph = setmetatable({}, { __mode = "k" })
local live = {}
local function make(i)
  local t = { i, "s" .. i }
  local f = function() return t[1] end
  local co = coroutine.create(function(x)
    local y = x
    coroutine.yield(function() return y end)
  end)
  local _, g = coroutine.resume(co, i)
  return t, f, co, g
end
local function fill(from, to)
  for i = from, to do
    local t, f, co, g = make(i)
    weak[i] = t
    eph[t] = { i }
    if i % 3 ~= 0 then live[#live + 1] = t end
    if i % 4 == 0 then live[#live + 1] = f end
    if i % 5 == 0 then live[#live + 1] = co end
    if i % 6 == 0 then live[#live + 1] = g end
    if i % 97 == 0 then
      setmetatable({}, { __gc = function() finalized = finalized + 1 end })
    end
  end
end
local function report(round, extra)
  local sum, n, w, e = 0, 0, 0, 0
  for _, v in ipairs(live) do
    local tv = type(v)
    if tv == "table" then sum = sum + v[1] + #v[2]
    elseif tv == "function" then sum = sum + v()
    else sum = sum + (coroutine.status(v) == "suspended" and 1 or 0) end
    n = n + 1
  end
  for _ in pairs(weak) do w = w + 1 end
  for _ in pairs(eph) do e = e + 1 end
  print(round, n, sum, w, e, finalized, collectgarbage("count"), extra or 0)
end
fill(1, N)
for round = 1, 4 do
  collectgarbage()
  report(round)
  local kept = {}
  for i, v in ipairs(live) do
    if i % 3 ~= 0 then kept[#kept + 1] = v end
  end
  live = kept
  fill(N * round + 1, N * round + N // 2)
end
-- Objects made old by a full collection, which records split points among
-- them; nine in ten then die, steps sweep until a third of those are freed
-- (passing some of the points), and a full collection sweeps the rest of
-- the list.
for round = 5, 6 do
  local held = {}
  for i = 1, 6 * N do held[i] = { i } end
  collectgarbage()
  local before = collectgarbage("count")
  for i = 1, #held do
    if i % 10 ~= 0 then held[i] = false end
  end
  -- (a generational step is a young collection, which frees no old object)
  while MODE ~= "generational" and
        collectgarbage("count") >= before - 6 * N * 0.9 * 0.3 * 56 / 1024 do
    collectgarbage("step", 0)
  end
  collectgarbage()
  local kept = 0
  for i = 10, #held, 10 do kept = kept + held[i][1] end
  report(round, kept)
end
-- Objects made old by a full collection, which records split points among
-- them at the list's head; all of them die, so the next sweep frees them,
-- points included, before its first survivor (sweeptolive, at entersweep),
-- and a full collection then sweeps the rest of the list.
do
  local gone = {}
  for i = 1, 6 * N do gone[i] = { i } end
  collectgarbage()
  local before = collectgarbage("count")
  gone = nil
  while MODE ~= "generational" and
        collectgarbage("count") >= before - 6 * N * 0.5 * 56 / 1024 do
    collectgarbage("step", 0)
  end
  collectgarbage()
  report(7)
end
