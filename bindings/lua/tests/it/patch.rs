//! The build script's patching of `lgc.c`: every anchor must be found
//! exactly once, or the build fails naming the patch.

#[path = "../../build/patch.rs"]
mod lgc_patch;

/// A text holding every anchor of `patches` once (and each range patch's
/// end).
fn anchors_of(patches: &[&[lgc_patch::Patch]]) -> String {
    let mut text = String::new();
    for p in patches.iter().flat_map(|ps| ps.iter()) {
        text.push_str(p.anchor);
        text.push_str("\n/* between */\n");
        if let Some(until) = p.until {
            text.push_str(until);
        }
    }
    text
}

/// A text holding every anchor of `stealmark-lua`'s patches once.
fn all_anchors() -> String {
    anchors_of(&[lgc_patch::TIMING, lgc_patch::PATCHES])
}

#[test]
fn every_patch_applies_once_and_the_appendix_follows() {
    let out = lgc_patch::patch_lgc(&all_anchors()).expect("all anchors present");
    for p in lgc_patch::TIMING.iter().chain(lgc_patch::PATCHES) {
        assert!(out.contains(p.with), "{} not applied", p.name);
    }
    assert!(out.ends_with(lgc_patch::APPENDIX));
    assert!(!out.contains("youngcollection(L, g);"));
    assert!(!out.contains("void luaC_step (lua_State *L) {"));
}

#[test]
fn the_stock_lgc_gets_the_timing_only() {
    let text = anchors_of(&[lgc_patch::TIMING, lgc_patch::STOCK_TIMING]);
    let out = lgc_patch::patch_stock_lgc(&text).expect("all anchors present");
    for p in lgc_patch::TIMING.iter().chain(lgc_patch::STOCK_TIMING) {
        assert!(out.contains(p.with), "{} not applied", p.name);
    }
    assert!(out.ends_with(lgc_patch::STOCK_APPENDIX));
    assert!(!out.contains("smlua_gc.c") && !out.contains("smlua_atomic"));
    let err = lgc_patch::patch_stock_lgc(&text.replacen(lgc_patch::TIMING[0].anchor, "", 1))
        .expect_err("an anchor is missing");
    assert!(err.contains(lgc_patch::TIMING[0].name), "{err}");
}

#[test]
fn a_missing_anchor_fails_naming_the_patch() {
    for p in lgc_patch::TIMING.iter().chain(lgc_patch::PATCHES) {
        let text = all_anchors().replacen(p.anchor, "", 1);
        let err = lgc_patch::patch_lgc(&text).expect_err("an anchor is missing");
        assert!(err.contains(p.name) && err.contains("0 times"), "{err}");
    }
}

#[test]
fn a_doubled_anchor_fails() {
    let text = all_anchors() + lgc_patch::PATCHES[0].anchor;
    let err = lgc_patch::patch_lgc(&text).expect_err("an anchor occurs twice");
    assert!(err.contains("2 times"), "{err}");
}

#[test]
fn a_missing_end_anchor_fails() {
    let p = lgc_patch::PATCHES
        .iter()
        .find(|p| p.until.is_some())
        .expect("a range patch");
    let text = all_anchors().replacen(p.until.unwrap_or_default(), "", 1);
    let err = lgc_patch::patch_lgc(&text).expect_err("the end anchor is missing");
    assert!(err.contains("end anchor") && err.contains(p.name), "{err}");
}
