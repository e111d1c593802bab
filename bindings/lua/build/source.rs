//! Finds the Lua 5.4.9 sources shipped by the `lua-src` crate.
//!
//! The crate compiles its own copy and does not say where its sources lie,
//! so the build script asks Cargo: `cargo metadata --offline` names the
//! manifest of every resolved package, `lua-src` among them (it is this
//! package's build dependency, so it is resolved and downloaded already).

use std::env;
use std::path::PathBuf;
use std::process::Command;

/// The Lua version whose sources are used, as `lua-src` names its folder.
const LUA_DIR: &str = "lua-5.4.9";

/// The folder that holds `lgc.c` and the other sources of Lua 5.4.9.
///
/// `STEALMARK_LUA_SRC` overrides the search (a folder with Lua 5.4.9's
/// sources). Any failure names what was missing.
pub fn lua_source_dir() -> Result<PathBuf, String> {
    println!("cargo:rerun-if-env-changed=STEALMARK_LUA_SRC");
    if let Some(dir) = env::var_os("STEALMARK_LUA_SRC") {
        return checked(PathBuf::from(dir));
    }
    let cargo = env::var("CARGO").map_err(|_| "CARGO is not set".to_string())?;
    let manifest =
        env::var("CARGO_MANIFEST_DIR").map_err(|_| "CARGO_MANIFEST_DIR is not set".to_string())?;
    let output = Command::new(&cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--offline",
            "--manifest-path",
        ])
        .arg(PathBuf::from(&manifest).join("Cargo.toml"))
        .output()
        .map_err(|e| format!("cannot run `{cargo} metadata`: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "`{cargo} metadata --offline` failed: {}",
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
        .find(|p| p["name"] == "lua-src" && p["version"] == "551.1.0")
        .and_then(|p| p["manifest_path"].as_str())
        .ok_or("`cargo metadata` does not list lua-src 551.1.0")?;
    let root = PathBuf::from(manifest_path)
        .parent()
        .map(|p| p.join(LUA_DIR))
        .ok_or_else(|| format!("lua-src's manifest path {manifest_path} has no folder"))?;
    checked(root)
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
