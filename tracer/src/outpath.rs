//! Checks of output paths, made before a command starts its work: a run
//! that takes minutes must not end with "cannot write" because of a typo in
//! `--plot`. Snapshot outputs (`gen -o`, `import -o`) are checked further:
//! they must not be the input, and replace only an earlier snapshot unless
//! `--force` is given.

use std::fs::{self, OpenOptions};
use std::path::{Component, Path};

use crate::error::{CliError, CliResult};
use crate::files;
use crate::heapfile;
use crate::partial::partial_path;

/// Checks that the file `path`, given to `flag` (`--plot`, `-o`), can be
/// written: it names a file, not a directory, and its directory exists and
/// lets a file be created there (an existing file must also be writable).
pub fn check_writable(flag: &str, path: &Path) -> CliResult {
    let shown = path.display();
    if path.is_dir() {
        return Err(CliError::advised(
            format!("{flag} {shown} is a directory"),
            format!(
                "give a file name inside it, such as {}",
                path.join(example_name(flag)).display()
            ),
        ));
    }
    if path.file_name().is_none()
        || matches!(path.components().next_back(), Some(Component::ParentDir))
    {
        return Err(CliError::usage(format!(
            "{flag} {shown} is not a file name"
        )));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match fs::metadata(dir) {
        Err(_) => {
            return Err(CliError::advised(
                format!(
                    "cannot write {flag} {shown}: the directory {} does not exist",
                    dir.display()
                ),
                format!(
                    "create it (`mkdir -p {}`) or choose another path",
                    dir.display()
                ),
            ))
        }
        Ok(m) if !m.is_dir() => {
            return Err(CliError::advised(
                format!(
                    "cannot write {flag} {shown}: {} is not a directory",
                    dir.display()
                ),
                "choose another path",
            ))
        }
        Ok(_) => {}
    }
    if let Err(e) = tempfile::Builder::new()
        .prefix(".stealmark-write-check")
        .tempfile_in(dir)
    {
        return Err(CliError::advised(
            format!(
                "cannot write {flag} {shown}: cannot create a file in {}: {e}",
                dir.display()
            ),
            "check the directory's permissions, or choose another path",
        ));
    }
    if path.exists() {
        if let Err(e) = OpenOptions::new().write(true).open(path) {
            return Err(CliError::advised(
                format!("cannot write {flag} {shown}: {e}"),
                "check the file's permissions, or choose another path",
            ));
        }
    }
    Ok(())
}

/// A file name for the hint of a directory given as `flag`'s file.
fn example_name(flag: &str) -> &'static str {
    match flag {
        "--plot" => "plot.svg",
        "--trace-out" => "trace.json",
        _ => "heap.smk",
    }
}

/// Checks the snapshot output `-o path` of `gen` or `import` before any
/// work: it can be written ([`check_writable`]); it is not `input` or the
/// temporary file beside it, through any path (hard links, symbolic
/// links, `./x` and `x` alike: compared by device and inode); and an
/// existing file is replaced only if it is a stealmark snapshot, or if
/// `force` is set.
pub fn check_snapshot_output(path: &Path, input: Option<&Path>, force: bool) -> CliResult {
    check_writable("-o", path)?;
    if let Some(input) = input {
        for written in [path.to_path_buf(), partial_path(path, ".partial")] {
            if files::same_file(input, &written) {
                return Err(CliError::advised(
                    format!(
                        "-o {} is the input file {}: writing it would destroy the input",
                        written.display(),
                        input.display()
                    ),
                    format!(
                        "write the snapshot to another file, such as {}",
                        input.with_extension("smk").display()
                    ),
                ));
            }
        }
    }
    if force || !path.exists() {
        return Ok(());
    }
    match heapfile::is_snapshot(path) {
        Ok(true) => Ok(()),
        Ok(false) => {
            let what = heapfile::sniff(path)
                .map(|s| format!(" ({})", s.looks()))
                .unwrap_or_default();
            Err(CliError::advised(
                format!(
                    "{} exists and is not a stealmark snapshot{what}; it was left as it is",
                    path.display()
                ),
                "choose another file with -o, or add --force to replace it",
            ))
        }
        Err(e) => Err(CliError::advised(
            format!(
                "{} exists and cannot be read to check that it is a snapshot: {e}",
                path.display()
            ),
            "choose another file with -o, or add --force to replace it",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writable_paths_pass_and_bad_ones_say_why() {
        let dir = tempfile::tempdir().unwrap();
        check_writable("--plot", &dir.path().join("p.svg")).unwrap();
        let line = check_writable("--plot", &dir.path().join("no/p.svg"))
            .unwrap_err()
            .one_line("bench");
        assert!(line.contains("does not exist"), "{line}");
        assert!(!line.contains("stealmark gen"), "{line}");
        let line = check_writable("--plot", dir.path())
            .unwrap_err()
            .one_line("bench");
        assert!(line.contains("is a directory"), "{line}");
        let file = dir.path().join("f");
        fs::write(&file, b"x").unwrap();
        let line = check_writable("--plot", &file.join("p.svg"))
            .unwrap_err()
            .one_line("bench");
        assert!(line.contains("is not a directory"), "{line}");
        assert!(check_writable("-o", Path::new("..")).is_err());
    }

    #[test]
    fn the_write_check_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        check_writable("-o", &dir.path().join("x.smk")).unwrap();
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
