//! Large weak tables written while an engine cycle runs: strong, weak-value,
//! ephemeron and all-weak tables of 6,000 entries each (scanned in chunks
//! that cut entries between key and value), built by the mutator between
//! the cycle's steps, so that rehashes move entries after the tables'
//! first scans. Every configuration prints what stock Lua prints, under the
//! cross-check.

use std::process::Command;

const HOOKED: &str = env!("CARGO_BIN_EXE_stealmark-lua");
const STOCK: &str = env!("CARGO_BIN_EXE_stealmark-lua-stock");

/// Builds the tables in mode `mode`, then collects three times, printing
/// each table's entry count and a checksum of its keys and values.
fn program(mode: &str) -> String {
    format!(
        r#"
collectgarbage("{mode}")
local held = {{}}
local function build(weakmode, arraysize)
  local t = setmetatable({{}}, weakmode and {{ __mode = weakmode }} or nil)
  for i = 1, arraysize do t[i] = {{ i }} end
  for i = 1, 3000 do
    local k, v = {{ i }}, {{ i }}
    if i % 3 == 0 then held[#held + 1] = k end
    if i % 5 == 0 then held[#held + 1] = v end
    t[k] = v
    t["s" .. i] = {{ i }}
  end
  return t
end
local tables = {{}}
for _, weakmode in ipairs({{ false, "v", "k", "kv" }}) do
  for _, arraysize in ipairs({{ 1, 3 }}) do
    tables[#tables + 1] = {{ build(weakmode, arraysize), tostring(weakmode), arraysize }}
  end
end
for round = 1, 3 do
  collectgarbage()
  for _, e in ipairs(tables) do
    local n, sum = 0, 0
    for k, v in pairs(e[1]) do
      n = n + 1
      sum = sum + v[1] + (type(k) == "table" and k[1] or 0)
    end
    print(round, e[2], e[3], n, sum)
  end
end
"#
    )
}

fn run(bin: &str, chunk: &str, env: &[(&str, &str)]) -> String {
    let out = Command::new(bin)
        .args(["-e", chunk])
        .envs(env.iter().copied())
        .output()
        .expect("the interpreter starts");
    assert!(
        out.status.success(),
        "{bin} with {env:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("the output is UTF-8")
}

/// An entry that lives must survive, and one that dies must go, whatever
/// the mutator did to its table after the table's first scan: the first
/// scan's records of a rewritten table name slots that a rehash moved.
#[test]
fn weak_tables_rewritten_during_a_cycle_clear_as_stock_lua_does() {
    for mode in ["generational", "incremental"] {
        let chunk = program(mode);
        let expected = run(STOCK, &chunk, &[]);
        assert_eq!(expected.lines().count(), 24, "stock Lua: {expected}");
        for workers in ["1", "2", "2", "2"] {
            let env = [
                ("STEALMARK_LUA_WORKERS", workers),
                ("STEALMARK_LUA_CHECK", "1"),
            ];
            assert_eq!(
                run(HOOKED, &chunk, &env),
                expected,
                "{mode} mode, {workers} workers"
            );
        }
    }
}
