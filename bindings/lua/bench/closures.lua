-- Allocates and drops many closures and coroutines: counters built from
-- upvalues, generators run as coroutines, most of them left unfinished.
-- Usage: closures.lua [count]
local count = tonumber(arg and arg[1]) or 100000

local function counter(start)
  local n = start
  return function(step) n = n + step return n end
end

local function generator(limit)
  return coroutine.wrap(function()
    for i = 1, limit do coroutine.yield(i) end
  end)
end

local sum, kept = 0, {}
for i = 1, count do
  local c = counter(i)
  sum = sum + c(1) + c(2)
  local g = generator(i % 10 + 2)
  sum = sum + g() + g()  -- left unfinished: the coroutine dies suspended
  if i % 1000 == 0 then kept[#kept + 1] = c end
end
for _, c in ipairs(kept) do sum = sum + c(0) end
print("sum " .. sum .. ", kept " .. #kept)
