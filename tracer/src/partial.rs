//! Outputs written under a temporary name beside their final one
//! (`FILE.partial`) and renamed when complete, so that a failed or
//! interrupted command never leaves a truncated file under the name asked
//! for; and their removal when the command is interrupted (Ctrl-C, SIGTERM,
//! SIGHUP), when no destructor runs.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once, PoisonError};

/// The temporary files that exist now, removed if a signal ends the
/// process.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The exit code after an interruption: 128 + SIGINT, as shells report it.
const EXIT_INTERRUPTED: i32 = 130;

/// A temporary file beside `path`: its name plus `suffix`.
pub fn partial_path(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// A temporary output file, removed when dropped (a failure) or when a
/// signal ends the process, unless [`PartialFile::commit`] renamed it.
#[derive(Debug)]
pub struct PartialFile {
    path: PathBuf,
}

impl PartialFile {
    /// Claims the temporary file `path` + `suffix` beside `path` (the
    /// caller creates it) and makes sure that an interruption removes it.
    pub fn beside(path: &Path, suffix: &str) -> PartialFile {
        let partial = partial_path(path, suffix);
        remove_on_signal();
        pending().push(partial.clone());
        PartialFile { path: partial }
    }

    /// The temporary file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the complete file to `target`; on failure the temporary
    /// file is removed.
    pub fn commit(self, target: &Path) -> io::Result<()> {
        fs::rename(&self.path, target)
    }
}

impl Drop for PartialFile {
    fn drop(&mut self) {
        // After a successful commit there is nothing to remove.
        let _ = fs::remove_file(&self.path);
        pending().retain(|p| *p != self.path);
    }
}

fn pending() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PENDING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Installs, once, the handler that removes every pending temporary file
/// and exits with code 130 on Ctrl-C, SIGTERM or SIGHUP. If the handler
/// cannot be installed the signals keep their default action (the process
/// ends and the `.partial` file stays).
fn remove_on_signal() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            let files = std::mem::take(&mut *pending());
            for file in &files {
                let _ = fs::remove_file(file);
            }
            let removed: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
            let note = if removed.is_empty() {
                String::new()
            } else {
                format!("; removed {}", removed.join(", "))
            };
            eprintln!("error: interrupted{note}");
            std::process::exit(EXIT_INTERRUPTED);
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_file_sits_beside_the_output() {
        assert_eq!(
            partial_path(Path::new("/a/b/heap.smk"), ".partial"),
            Path::new("/a/b/heap.smk.partial")
        );
    }

    #[test]
    fn dropped_uncommitted_file_is_removed_and_committed_one_kept() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.smk");
        let partial = PartialFile::beside(&out, ".partial");
        fs::write(partial.path(), b"half").unwrap();
        let temp = partial.path().to_path_buf();
        drop(partial);
        assert!(!temp.exists());
        assert!(!pending().contains(&temp));

        let partial = PartialFile::beside(&out, ".partial");
        fs::write(partial.path(), b"whole").unwrap();
        partial.commit(&out).unwrap();
        assert_eq!(fs::read(&out).unwrap(), b"whole");
        assert!(!temp.exists());
        assert!(!pending().contains(&temp));
    }
}
