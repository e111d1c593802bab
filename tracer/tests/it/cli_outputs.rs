//! Outputs are checked against the inputs and against each other, by file
//! identity, before any work: no command replaces its input or writes two
//! outputs into one file.

use crate::common;

use std::path::{Path, PathBuf};

use common::{fails_with, gen, stealmark};

/// `path` as a `&str` for an argument list.
fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Every spelling of `file` in `dir`: itself, `dir/./name`, a hard link
/// and a symbolic link to it.
fn spellings(dir: &Path, file: &Path) -> Vec<PathBuf> {
    let hard = dir.join("hard-link");
    std::fs::hard_link(file, &hard).unwrap();
    let soft = dir.join("soft-link");
    std::os::unix::fs::symlink(file, &soft).unwrap();
    vec![
        file.to_path_buf(),
        dir.join(".").join(file.file_name().unwrap()),
        hard,
        soft,
    ]
}

#[test]
fn no_output_of_mark_or_bench_replaces_the_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let heap = gen(dir.path(), "binary-tree", 1000);
    let before = std::fs::read(&heap).unwrap();
    for victim in spellings(dir.path(), &heap) {
        let v = s(&victim);
        let runs = ["--runs", "1", "--warmup", "0"];
        for (args, flag) in [
            (vec!["mark", s(&heap), "--plot", v], "--plot"),
            (vec!["mark", s(&heap), "--trace-out", v], "--trace-out"),
            (
                vec!["mark", s(&heap), "--sequential", "--plot", v],
                "--plot",
            ),
            (vec!["bench", s(&heap), "--plot", v], "--plot"),
            (
                vec!["bench", s(&heap), "--mode", "stw", "--plot", v],
                "--plot",
            ),
        ] {
            let mut args = args;
            if args[0] == "mark" {
                args.extend(runs);
            }
            let err = fails_with(&args, 2);
            assert!(
                err.contains(&format!("{flag} {v} is the input FILE")),
                "{args:?}: {err}"
            );
            assert!(err.contains(&format!("give {flag} another path")), "{err}");
            assert_eq!(std::fs::read(&heap).unwrap(), before, "{args:?}");
        }
    }
}

#[test]
fn two_outputs_into_one_file_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let heap = gen(dir.path(), "binary-tree", 1000);
    let out = dir.path().join("out.svg");
    // A file still to be created, spelled two ways, and then existing
    // (hard link, symbolic link).
    let dotted = dir.path().join(".").join("out.svg");
    let err = fails_with(
        &[
            "mark",
            s(&heap),
            "--plot",
            s(&out),
            "--trace-out",
            s(&dotted),
        ],
        2,
    );
    assert!(
        err.contains(&format!(
            "--plot {} and --trace-out {} are one file",
            out.display(),
            dotted.display()
        )) || err.contains(&format!(
            "--trace-out {} and --plot {} are one file",
            dotted.display(),
            out.display()
        )),
        "{err}"
    );
    assert!(!out.exists(), "no work was done");
    std::fs::write(&out, b"kept").unwrap();
    for other in spellings(dir.path(), &out) {
        fails_with(
            &[
                "mark",
                s(&heap),
                "--trace-out",
                s(&other),
                "--plot",
                s(&out),
            ],
            2,
        );
        assert_eq!(std::fs::read(&out).unwrap(), b"kept");
    }
}

#[test]
fn distinct_outputs_and_character_devices_pass() {
    let dir = tempfile::tempdir().unwrap();
    let heap = gen(dir.path(), "binary-tree", 1000);
    let (plot, trace) = (dir.path().join("p.svg"), dir.path().join("t.json"));
    stealmark()
        .args(["mark", s(&heap), "--runs", "1", "--warmup", "0"])
        .args(["--plot", s(&plot), "--trace-out", s(&trace)])
        .assert()
        .success();
    assert!(plot.exists() && trace.exists());
    stealmark()
        .args(["mark", s(&heap), "--runs", "1", "--warmup", "0"])
        .args(["--plot", "/dev/null", "--trace-out", "/dev/null"])
        .assert()
        .success();
}
