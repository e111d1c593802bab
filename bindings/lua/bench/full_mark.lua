-- A heap of at least 3 million Lua objects, then full collections of it:
-- the mark of one full collection of a large heap. Half the objects are
-- tables (each holding a number, a string and the previous table), half
-- distinct strings; all stay reachable from one array.
-- Usage: full_mark.lua [tables] [collections]
local n = tonumber(arg and arg[1]) or 1500000
local collections = tonumber(arg and arg[2]) or 3

local all = {}
local prev = false
for i = 1, n do
  local t = { i, "s" .. i, prev }
  all[i] = t
  prev = t
end
for _ = 1, collections do collectgarbage() end
local sum = 0
for i = 1, n, 1000 do sum = sum + all[i][1] + #all[i][2] end
print(string.format("%d tables, %d strings, checksum %d", n, n, sum))
