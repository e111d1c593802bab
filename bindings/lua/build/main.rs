//! Builds two Lua 5.4.9 interpreters from the `lua-src` crate's sources:
//! `stealmark-lua`, whose `lgc.c` is patched to mark through stealmark, and
//! `stealmark-lua-stock`, the same sources and flags without the hooks
//! (both time their collector's pauses the same way, `csrc/smlua_time.c`).
//!
//! The C objects of each are handed to the linker of its own binary only
//! (`cargo:rustc-link-arg-bin`): both define the same Lua symbols.

mod patch;
mod source;

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

/// Lua's sources that are not part of the library (lua-src ships none of
/// them today; they are skipped should it ever).
const NOT_LIBRARY: &[&str] = &["lua.c", "luac.c", "onelua.c", "ltests.c"];

fn main() {
    if let Err(message) = run() {
        eprintln!("stealmark-lua build: {message}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let src = source::lua_source_dir()?;
    let out = PathBuf::from(env::var("OUT_DIR").map_err(|_| "OUT_DIR is not set")?);
    let here = PathBuf::from(env::var("CARGO_MANIFEST_DIR").map_err(|_| "no manifest dir")?);
    let csrc = here.join("csrc");
    let capi_include = here.join("../../capi/include");
    println!("cargo:rerun-if-changed=build");
    println!("cargo:rerun-if-changed=csrc");
    println!("cargo:rerun-if-changed=../../capi/include/stealmark.h");

    let library = library_files(&src)?;

    let lgc = fs::read_to_string(src.join("lgc.c"))
        .map_err(|e| format!("cannot read {}: {e}", src.join("lgc.c").display()))?;

    let stock_lgc = write_lgc(&out.join("stock-lgc"), &patch::patch_stock_lgc(&lgc)?)?;
    let stock = compile(
        "stock",
        &out,
        &src,
        &csrc,
        &capi_include,
        &library,
        &stock_lgc,
    )?;
    link_bin("stealmark-lua-stock", &stock);

    let patched = write_lgc(&out.join("patched"), &patch::patch_lgc(&lgc)?)?;
    let hooked = compile(
        "hooked",
        &out,
        &src,
        &csrc,
        &capi_include,
        &library,
        &patched,
    )?;
    link_bin("stealmark-lua", &hooked);
    Ok(())
}

/// Writes `text` as `dir/lgc.c`; its path.
fn write_lgc(dir: &Path, text: &str) -> Result<PathBuf, String> {
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join("lgc.c");
    fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// The `.c` files of Lua's library in `src`, sorted.
fn library_files(src: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for entry in fs::read_dir(src).map_err(|e| format!("cannot list {}: {e}", src.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(".c") && !NOT_LIBRARY.contains(&name) {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Compiles Lua's library (with `lgc` in place of `lgc.c`) and the
/// interpreter's main into objects under `OUT_DIR/<name>`; the stock
/// interpreter's are compiled with `SMLUA_STOCK` defined.
fn compile(
    name: &str,
    out: &Path,
    src: &Path,
    csrc: &Path,
    capi_include: &Path,
    library: &[PathBuf],
    lgc: &Path,
) -> Result<Vec<PathBuf>, String> {
    let mut build = cc::Build::new();
    // The same flags as lua-src's own build of Lua 5.4 on Linux, optimised
    // in every profile so that the two interpreters compare fairly.
    build
        .define("LUA_USE_LINUX", None)
        .define("LUA_COMPAT_5_3", None)
        .flag_if_supported("-fno-common")
        .opt_level(2)
        .warnings(false)
        .include(src)
        .include(csrc)
        .include(capi_include)
        .out_dir(out.join(name));
    if name == "stock" {
        build.define("SMLUA_STOCK", None);
    }
    if sanitize_thread() {
        // Under ThreadSanitizer (rustc's runtime), Lua's longjmp-based
        // errors crash in the runtime's longjmp interceptor; compiled as
        // C++, Lua throws and catches exceptions instead (ldo.c's
        // LUAI_THROW). The C++ standard library is linked (`link_bin`).
        build
            .cpp(true)
            .cpp_link_stdlib(None)
            .std("c++2b")
            .flag("-fsanitize=thread");
    }
    for file in library {
        if file.file_name().is_some_and(|n| n == "lgc.c") {
            build.file(lgc);
        } else {
            build.file(file);
        }
    }
    build.file(csrc.join("smlua_main.c"));
    build
        .try_compile_intermediates()
        .map_err(|e| format!("compiling the {name} Lua: {e}"))
}

/// Links `objects` (and the C libraries Lua needs) into the binary `bin`.
fn link_bin(bin: &str, objects: &[PathBuf]) {
    for object in objects {
        println!("cargo:rustc-link-arg-bin={bin}={}", object.display());
    }
    if sanitize_thread() {
        println!("cargo:rustc-link-arg-bin={bin}=-lstdc++");
    }
    println!("cargo:rustc-link-arg-bin={bin}=-lm");
    println!("cargo:rustc-link-arg-bin={bin}=-ldl");
}

/// Whether the crate is built with `-Zsanitizer=thread`: Lua is then
/// compiled as C++ with `-fsanitize=thread` (`bindings/lua/run-tsan.sh`).
fn sanitize_thread() -> bool {
    env::var("CARGO_CFG_SANITIZE").is_ok_and(|s| s.split(',').any(|s| s == "thread"))
}
