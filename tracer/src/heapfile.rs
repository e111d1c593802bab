//! Opening snapshot files, with errors that say what to do, and naming the
//! temporary files that outputs are written under.

use std::path::{Path, PathBuf};

use stealmark_heap::{Snapshot, SnapshotError};

use crate::error::{CliError, CliResult};

/// Maps and validates the snapshot at `path`.
pub fn open(path: &Path) -> CliResult<Snapshot> {
    Snapshot::open(path).map_err(|e| match e {
        SnapshotError::Io { source, .. } => CliError::io("open", path, source),
        invalid => CliError::snapshot(path, invalid),
    })
}

/// A temporary file beside `path`: its name plus `suffix`. Outputs are
/// written under such a name and renamed on success, so a failed command
/// leaves no truncated file behind.
pub fn partial_path(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}
