//! The files a command line names, and the check, made before any work,
//! that no output is one of the inputs and that no two outputs are one
//! file: `mark heap.smk --plot heap.smk` would replace the snapshot with a
//! plot, and `--plot out.svg --trace-out out.svg` would keep only the last
//! one written.
//!
//! Files are compared by identity, not by name: an existing file by device
//! and inode (so hard links, symbolic links, `./x` and `x` all match), a
//! file still to be created by its canonical directory and its name (after
//! following a dangling symbolic link to where it points). Character
//! devices (`/dev/null`, a terminal) are never the same file as anything:
//! writing one destroys no file.

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::error::{CliError, CliResult};

/// Symbolic links followed at most while resolving a file to be created
/// (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// One file of the command line: the flag that names it (`--plot`, `-o`,
/// `FILE` for a positional argument) and its path as given.
#[derive(Clone, Copy, Debug)]
pub struct Named<'a> {
    /// The flag, or the positional argument's name.
    pub flag: &'static str,
    /// The path as given.
    pub path: &'a Path,
}

/// The inputs and outputs of one command line.
#[derive(Debug, Default)]
pub struct Files<'a> {
    inputs: Vec<Named<'a>>,
    outputs: Vec<Named<'a>>,
}

impl<'a> Files<'a> {
    /// No files.
    pub fn new() -> Files<'a> {
        Files::default()
    }

    /// Adds the input `path`, named by `flag`.
    pub fn input(mut self, flag: &'static str, path: &'a Path) -> Files<'a> {
        self.inputs.push(Named { flag, path });
        self
    }

    /// Adds the output `path` named by `flag`, if it was given.
    pub fn output(mut self, flag: &'static str, path: Option<&'a Path>) -> Files<'a> {
        if let Some(path) = path {
            self.outputs.push(Named { flag, path });
        }
        self
    }

    /// Checks that no output is an input and that no two outputs are one
    /// file; the error names both flags and the path.
    pub fn check(&self) -> CliResult {
        let inputs: Vec<_> = self.inputs.iter().map(|n| (n, identity(n.path))).collect();
        let mut earlier: Vec<(&Named<'_>, Option<Identity>)> = Vec::new();
        for output in &self.outputs {
            let id = identity(output.path);
            if let Some(id) = &id {
                if let Some((input, _)) = inputs.iter().find(|(_, i)| i.as_ref() == Some(id)) {
                    return Err(CliError::SameFile {
                        flag: output.flag,
                        path: output.path.to_path_buf(),
                        other: input.flag,
                        other_path: input.path.to_path_buf(),
                        other_is_input: true,
                    });
                }
                if let Some((first, _)) = earlier.iter().find(|(_, e)| e.as_ref() == Some(id)) {
                    return Err(CliError::SameFile {
                        flag: output.flag,
                        path: output.path.to_path_buf(),
                        other: first.flag,
                        other_path: first.path.to_path_buf(),
                        other_is_input: false,
                    });
                }
            }
            earlier.push((output, id));
        }
        Ok(())
    }
}

/// What makes two paths one file.
#[derive(Debug, PartialEq, Eq)]
enum Identity {
    /// An existing file: its device and inode.
    Existing { dev: u64, ino: u64 },
    /// A file still to be created: its canonical directory and its name.
    New(PathBuf),
}

/// The identity of `path`, or `None` for a character device or a path
/// whose file cannot be told apart from others (no directory, no name:
/// the writability checks reject those).
fn identity(path: &Path) -> Option<Identity> {
    if let Ok(m) = fs::metadata(path) {
        if m.file_type().is_char_device() {
            return None;
        }
        return Some(Identity::Existing {
            dev: m.dev(),
            ino: m.ino(),
        });
    }
    let mut path = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        match fs::read_link(&path) {
            // A dangling link: the file is created where it points.
            Ok(target) => path = dir.join(target),
            Err(_) => {
                let name = path.file_name()?;
                return Some(Identity::New(fs::canonicalize(&dir).ok()?.join(name)));
            }
        }
    }
    None
}

/// Whether `a` and `b` are one file (by [`Files::check`]'s rules).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (identity(a), identity(b)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_one_file_is_that_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("heap.smk");
        fs::write(&file, b"x").unwrap();
        let hard = dir.path().join("hard.smk");
        fs::hard_link(&file, &hard).unwrap();
        let soft = dir.path().join("soft.smk");
        std::os::unix::fs::symlink(&file, &soft).unwrap();
        let dotted = dir.path().join(".").join("heap.smk");
        for other in [&file, &hard, &soft, &dotted] {
            assert!(same_file(&file, other), "{}", other.display());
        }
        assert!(!same_file(&file, &dir.path().join("other.smk")));
    }

    #[test]
    fn new_files_compare_by_directory_and_name() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("out.svg");
        let sub = dir.path().join("sub");
        fs::create_dir(&sub).unwrap();
        assert!(same_file(&new, &sub.join("..").join("out.svg")));
        assert!(!same_file(&new, &dir.path().join("out.json")));
        let dangling = dir.path().join("link.svg");
        std::os::unix::fs::symlink("out.svg", &dangling).unwrap();
        assert!(same_file(&new, &dangling));
        assert!(!new.exists(), "nothing was created");
    }

    #[test]
    fn character_devices_are_never_the_same_file() {
        let null = Path::new("/dev/null");
        assert!(!same_file(null, null));
        Files::new()
            .output("--plot", Some(null))
            .output("--trace-out", Some(null))
            .check()
            .unwrap();
    }

    #[test]
    fn an_output_that_is_an_input_or_another_output_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("heap.smk");
        fs::write(&input, b"x").unwrap();
        let err = Files::new()
            .input("FILE", &input)
            .output("--trace-out", Some(&dir.path().join("t.json")))
            .output("--plot", Some(&input))
            .check()
            .unwrap_err();
        assert_eq!(err.exit_code(), crate::error::EXIT_USAGE);
        let line = err.one_line("mark");
        assert!(line.contains("--plot") && line.contains("FILE"), "{line}");
        let out = dir.path().join("out.svg");
        let err = Files::new()
            .input("FILE", &input)
            .output("--plot", Some(&out))
            .output("--trace-out", Some(&dir.path().join(".").join("out.svg")))
            .check()
            .unwrap_err();
        let line = err.one_line("mark");
        assert!(
            line.contains("--trace-out") && line.contains("--plot"),
            "{line}"
        );
        Files::new()
            .input("FILE", &input)
            .output("--plot", Some(&out))
            .output("--trace-out", Some(&dir.path().join("t.json")))
            .check()
            .unwrap();
    }
}
