//! Opening snapshot files, with errors that say what to do.

use std::path::Path;

use stealmark_heap::{Snapshot, SnapshotError};

use crate::error::{CliError, CliResult};

/// Maps and validates the snapshot at `path`.
pub fn open(path: &Path) -> CliResult<Snapshot> {
    Snapshot::open(path).map_err(|e| match e {
        SnapshotError::Io { source, .. } => CliError::io("open", path, source),
        invalid => CliError::snapshot(path, invalid),
    })
}
