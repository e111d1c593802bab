-- Binary trees: allocates and drops complete binary trees of tables.
-- Usage: binary_trees.lua [depth]
local depth = tonumber(arg and arg[1]) or 14

local function make(d)
  if d == 0 then return {} end
  return { make(d - 1), make(d - 1) }
end

local function check(t)
  if t[1] == nil then return 1 end
  return 1 + check(t[1]) + check(t[2])
end

local long_lived = make(depth)
local total = 0
for d = 4, depth, 2 do
  local iterations = 1 << (depth - d + 4)
  local sum = 0
  for _ = 1, iterations do sum = sum + check(make(d)) end
  total = total + sum
  print(string.format("%d trees of depth %d: %d nodes", iterations, d, sum))
end
print("long lived: " .. check(long_lived) .. " nodes, total " .. total)
