//! `stealmark-lua-stock`: Lua 5.4.9 built from the same sources and with the
//! same flags as `stealmark-lua`, with Lua's own collector unchanged.

#[path = "../launch.rs"]
mod launch;

fn main() {
    launch::run()
}
