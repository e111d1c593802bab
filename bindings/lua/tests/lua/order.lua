-- Lua's clearing order, checked the same way on stock Lua and on
-- stealmark-lua: weak values go before finalizers run, weak keys after
-- resurrection, weak tables first reached while resurrecting are cleared,
-- strings in weak entries live as long as their entry.
local mode = ...
if mode == "incremental" then collectgarbage("incremental") else collectgarbage("generational") end

-- 1. A weak value whose object is resurrected is already gone when its
--    finalizer runs; a weak key of the same object keeps its entry.
local values = setmetatable({}, { __mode = "v" })
local keys = setmetatable({}, { __mode = "k" })
local seen_value, seen_key
do
  local obj = setmetatable({}, { __gc = function(o)
    seen_value = values[1]
    seen_key = keys[o]
  end })
  values[1] = obj
  keys[obj] = "note"
end
collectgarbage()
assert(seen_value == nil, "a weak value of a resurrected object survived into its finalizer")
assert(seen_key == "note", "a resurrected weak key lost its entry before its finalizer ran")
collectgarbage()
assert(next(keys) == nil, "a dead key outlived the cycle after its finalizer")

-- 2. An ephemeron chain: each value is the next key; only the head is held.
local eph = setmetatable({}, { __mode = "k" })
local head = {}
do
  local k = head
  for _ = 1, 1000 do local nk = {} eph[k] = nk k = nk end
end
collectgarbage()
local n = 0
for _ in pairs(eph) do n = n + 1 end
assert(n == 1000, "an ephemeron chain held from its head lost entries: " .. n)
head = nil
collectgarbage()
assert(next(eph) == nil, "an unreachable ephemeron chain survived")

-- 3. A weak-value table reached only by a resurrected object is cleared.
local reached
do
  local inner = setmetatable({ {} , "kept" }, { __mode = "v" })
  setmetatable({}, { __gc = function() reached = inner end })
end
collectgarbage()
assert(reached ~= nil, "the finalizer did not run")
assert(reached[1] == nil and reached[2] == "kept",
       "a weak-value table first reached while resurrecting was not cleared")
reached = nil

-- 4. Strings: a string key of an all-weak table dies with its value, a
--    string value of a weak-value table stays.
local kv = setmetatable({}, { __mode = "kv" })
local sv = setmetatable({}, { __mode = "v" })
do
  kv[string.rep("k", 100)] = {}
  sv[1] = string.rep("s", 100)
end
collectgarbage()
assert(next(kv) == nil, "an all-weak entry with a dead value survived")
assert(sv[1] == string.rep("s", 100), "a string value was cleared from a weak table")

-- 5. Finalizers run in reverse order of registration.
local order = {}
do
  for i = 1, 5 do setmetatable({}, { __gc = function() order[#order + 1] = i end }) end
end
collectgarbage()
assert(table.concat(order, ",") == "5,4,3,2,1", "finalizer order " .. table.concat(order, ","))

-- 6. The same with many objects, each holding a chain of tables (work for
--    every worker while they are resurrected), some of them kept alive:
--    the engine reports the objects to finalize in no definite order, and
--    the binding moves them in registration order.
--    The collector is stopped while they are made: collections in between
--    would reorder Lua's lists (generational mode keeps them by age).
order = {}
local kept = {}
collectgarbage("stop")
do
  for i = 1, 3000 do
    local chain = {}
    for j = 1, 20 do chain = { chain, j } end
    local o = setmetatable({ chain }, { __gc = function() order[#order + 1] = i end })
    if i % 3 == 0 then kept[#kept + 1] = o end
  end
end
collectgarbage("restart")
collectgarbage()
assert(#order == 2000, "finalized " .. #order .. " objects, expected 2000")
local previous = math.huge
for _, i in ipairs(order) do
  assert(i % 3 ~= 0, "a kept object was finalized")
  assert(i < previous, "finalizers ran out of reverse registration order")
  previous = i
end
assert(#kept == 1000)

print("order OK")
