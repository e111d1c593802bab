//! What HotSpot's Parallel GC does with soft and weak references that only
//! an unreachable finalizable object reaches: the behaviour the runtime
//! contract's step 4 follows (`docs/design.md`, "Runtime contract"). The
//! program prints, from the finalizer, whether each referent survived.

// Shared with the importer tests, which use the rest of it.
#[allow(dead_code)]
use crate::import_common;

use std::process::Command;

use import_common::{have, run, tempdir};

const PROGRAM: &str = include_str!("import_common/ResurrectedReferents.java");

/// Runs the program under Parallel GC with `-XX:SoftRefLRUPolicyMSPerMB=ms`.
fn outcome(dir: &std::path::Path, ms: u64) -> String {
    run(Command::new("java")
        .arg("-XX:+UseParallelGC")
        .arg(format!("-XX:SoftRefLRUPolicyMSPerMB={ms}"))
        .arg("-Xmx64m")
        .arg("-cp")
        .arg(dir)
        .arg("ResurrectedReferents"))
    .trim()
    .to_owned()
}

#[test]
fn parallel_gc_gives_resurrected_soft_references_the_policy() {
    let test = "parallel_gc_gives_resurrected_soft_references_the_policy";
    if !have("java", test) || !have("javac", test) {
        return;
    }
    let dir = tempdir();
    let src = dir.path().join("ResurrectedReferents.java");
    std::fs::write(&src, PROGRAM).unwrap();
    run(Command::new("javac")
        .arg("-nowarn")
        .arg("-d")
        .arg(dir.path())
        .arg(&src));
    // Soft references kept: the soft referent survives, the weak one not.
    assert_eq!(outcome(dir.path(), 100_000_000), "soft kept, weak cleared");
    // Soft references cleared: neither survives.
    assert_eq!(outcome(dir.path(), 0), "soft cleared, weak cleared");
}
