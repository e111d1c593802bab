//! Finds the Lua 5.4.9 sources shipped by the `lua-src` crate.
//!
//! The crate compiles its own copy and does not say where its sources lie,
//! so the build script asks Cargo. Asking about this workspace would need
//! the manifest of every package it resolves, on every platform, which a
//! fresh machine has not downloaded (a build downloads only what it
//! compiles). So the script asks about a one-dependency probe package that
//! it writes into `OUT_DIR`: `cargo metadata --offline --filter-platform
//! <host>` on it needs only `lua-src` and its own dependencies, which are
//! this package's build dependencies and so downloaded already.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Lua version whose sources are used, as `lua-src` names its folder.
const LUA_DIR: &str = "lua-5.4.9";

/// The `lua-src` release whose sources are used (the build dependency's
/// exact version in `Cargo.toml`).
const LUA_SRC_VERSION: &str = "551.1.0";

/// The folder that holds `lgc.c` and the other sources of Lua 5.4.9.
///
/// `STEALMARK_LUA_SRC` overrides the search (a folder with Lua 5.4.9's
/// sources). Any failure names what was missing.
pub fn lua_source_dir() -> Result<PathBuf, String> {
    println!("cargo:rerun-if-env-changed=STEALMARK_LUA_SRC");
    if let Some(dir) = env::var_os("STEALMARK_LUA_SRC") {
        return checked(PathBuf::from(dir));
    }
    let var = |name: &str| env::var(name).map_err(|_| format!("{name} is not set"));
    let cargo = var("CARGO")?;
    let manifest_dir = PathBuf::from(var("CARGO_MANIFEST_DIR")?);
    let probe = write_probe(&PathBuf::from(var("OUT_DIR")?).join("lua-src-probe"))?;
    // Run from this package's folder, so that the configuration Cargo
    // reads (a vendored or mirrored registry) is the build's own.
    let output = Command::new(&cargo)
        .current_dir(&manifest_dir)
        .args(["metadata", "--format-version", "1", "--offline"])
        .args(["--filter-platform", &var("HOST")?, "--manifest-path"])
        .arg(&probe)
        .output()
        .map_err(|e| format!("cannot run `{cargo} metadata`: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "`{cargo} metadata --offline` on {} failed: {}",
            probe.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let meta: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("`cargo metadata` printed no JSON: {e}"))?;
    let packages = meta["packages"]
        .as_array()
        .ok_or("`cargo metadata` listed no packages")?;
    let manifest_path = packages
        .iter()
        .find(|p| p["name"] == "lua-src" && p["version"] == LUA_SRC_VERSION)
        .and_then(|p| p["manifest_path"].as_str())
        .ok_or_else(|| format!("`cargo metadata` does not list lua-src {LUA_SRC_VERSION}"))?;
    let root = Path::new(manifest_path)
        .parent()
        .map(|p| p.join(LUA_DIR))
        .ok_or_else(|| format!("lua-src's manifest path {manifest_path} has no folder"))?;
    checked(root)
}

/// Writes, in `dir`, a package of its own workspace whose one dependency is
/// `lua-src` at the exact version used; returns its manifest's path.
fn write_probe(dir: &Path) -> Result<PathBuf, String> {
    let manifest = dir.join("Cargo.toml");
    let write = |path: &Path, text: &str| {
        fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    write(
        &manifest,
        &format!(
            "[package]\nname = \"lua-src-probe\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
             publish = false\n\n[lib]\npath = \"lib.rs\"\n\n\
             [dependencies]\nlua-src = \"={LUA_SRC_VERSION}\"\n\n[workspace]\n"
        ),
    )?;
    write(&dir.join("lib.rs"), "")?;
    Ok(manifest)
}

/// `dir` if it holds Lua's collector and interpreter sources.
fn checked(dir: PathBuf) -> Result<PathBuf, String> {
    for file in ["lgc.c", "lua.h", "lauxlib.c"] {
        if !dir.join(file).is_file() {
            return Err(format!(
                "{} has no {file}: not the sources of Lua 5.4.9",
                dir.display()
            ));
        }
    }
    Ok(dir)
}
