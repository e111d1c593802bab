//! Helpers shared by the importer tests: finding the runtimes, counting an
//! imported heap, and corrupting inputs.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use stealmark_heap::{mark_sequential, HeapGraph, SlotKind};

/// Whether `program --version` runs. If not: in CI (`CI=true`) the test
/// fails, saying which program is missing; elsewhere it prints a clear skip
/// notice and the caller returns.
pub fn have(program: &str, test: &str) -> bool {
    let ok = Command::new(program)
        .arg(if program == "java" {
            "-version"
        } else {
            "--version"
        })
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        assert!(
            !in_ci(),
            "{test}: `{program}` is not installed, and CI (CI=true) must run these tests; \
             install it (see .ci/run)"
        );
        // Straight to the process's stderr: the test harness captures
        // `eprintln!` of passing tests, and a skip must be seen.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED {test}: `{program}` is not installed (CI installs it; see .ci/run)"
        );
    }
    ok
}

/// Whether the tests run in CI (`CI=true`, as CI services set it), where a
/// missing tool must fail the test rather than skip it.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true"))
}

/// Runs a command, panicking with its output if it fails.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// Counts of a heap: objects, non-null slots, weak slots, roots, and the
/// objects reachable from the roots through strong slots (the oracle).
#[derive(Debug, PartialEq, Eq)]
pub struct Counts {
    pub objects: u64,
    pub references: u64,
    pub weak: u64,
    pub roots: u64,
    pub reachable: u64,
}

/// Counts an imported heap.
pub fn count<H: HeapGraph>(heap: &H) -> Counts {
    let view = heap.view();
    let (mut references, mut weak) = (0, 0);
    for obj in view.objects() {
        for (_, kind) in view.slots(obj).flatten() {
            references += 1;
            weak += u64::from(kind == SlotKind::Weak);
        }
    }
    Counts {
        objects: view.object_count(),
        references,
        weak,
        roots: heap.roots().len() as u64,
        reachable: mark_sequential(&view, heap.roots()).objects,
    }
}

/// Feeds `parse` every prefix of `input` at `step`-byte intervals and
/// `flips` seeded single-byte corruptions: each must fail (prefixes) or do
/// anything but panic (corruptions), with an offset inside the input.
pub fn corrupt<E: std::fmt::Debug>(
    input: &[u8],
    step: usize,
    flips: usize,
    mut parse: impl FnMut(&[u8]) -> Result<(), (E, Option<u64>)>,
) {
    let len = input.len();
    let mut cut = 0;
    while cut < len {
        match parse(&input[..cut]) {
            Ok(()) => panic!("a prefix of {cut} of {len} bytes imported"),
            Err((e, off)) => {
                if let Some(off) = off {
                    assert!(
                        off <= cut as u64,
                        "error offset {off} beyond the {cut}-byte prefix: {e:?}"
                    );
                }
            }
        }
        cut += step.max(1);
    }
    // A small xorshift: corruptions are reproducible.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut buf = input.to_vec();
    for _ in 0..flips {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let at = (state % len as u64) as usize;
        let old = buf[at];
        buf[at] = (state >> 32) as u8;
        if let Err((e, Some(off))) = parse(&buf) {
            assert!(
                off <= len as u64,
                "error offset {off} beyond the input: {e:?}"
            );
        }
        buf[at] = old;
    }
}

/// A fresh temporary directory.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temporary directory")
}

/// Reads a file whole (tests only: the importers never do).
pub fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Asserts that two imported heaps are the same: arena words, format,
/// roots, finalizable objects, type names and kinds.
pub fn assert_same_heap(a: &stealmark_heap::Heap, b: &stealmark_heap::Heap) {
    let (va, vb) = (a.view(), b.view());
    assert_eq!(va.format(), vb.format(), "formats differ");
    assert_eq!(va.to_words(), vb.to_words(), "arenas differ");
    let pos = |v: &stealmark_heap::HeapView<'_>, refs: &[stealmark_model::ObjRef]| {
        refs.iter().map(|&r| v.pos(r)).collect::<Vec<_>>()
    };
    assert_eq!(pos(&va, a.roots()), pos(&vb, b.roots()), "roots differ");
    assert_eq!(
        pos(&va, a.finalizable()),
        pos(&vb, b.finalizable()),
        "finalizable objects differ"
    );
    assert_eq!(a.type_names(), b.type_names(), "type names differ");
    for t in 0..a.type_count() as u32 {
        assert_eq!(va.type_kind(t), vb.type_kind(t), "type {t}'s kinds differ");
    }
}
