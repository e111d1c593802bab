//! `stealmark-lua`: Lua 5.4.9 whose every collection marks through the
//! stealmark engine (see the crate's README).

#[path = "../launch.rs"]
mod launch;

/// The engine's C functions that Lua's collector calls. Naming them here
/// makes the linker take them from the engine's library before it reads the
/// C objects that call them (those come last on its command line).
fn engine_functions() -> [usize; 8] {
    [
        stealmark_capi::sm_config_init as *const () as usize,
        stealmark_capi::sm_marker_new as *const () as usize,
        stealmark_capi::sm_collect as *const () as usize,
        stealmark_capi::sm_report_stats as *const () as usize,
        stealmark_capi::sm_report_cleared as *const () as usize,
        stealmark_capi::sm_report_to_finalize as *const () as usize,
        stealmark_capi::sm_last_error as *const () as usize,
        stealmark_capi::sm_status_name as *const () as usize,
    ]
}

fn main() {
    std::hint::black_box(engine_functions());
    launch::run()
}
