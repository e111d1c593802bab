//! The checks `stealmark import` makes before it reads: the input can be
//! opened (once: a stream cannot be opened twice) and is not plainly of the
//! other format, and the output is neither the input stream nor a FIFO or
//! device.

use std::fs;
use std::path::Path;

use stealmark_import::InputFile;

use super::format_name;
use crate::error::{CliError, CliResult};
use crate::heapfile::Sniffed;
use crate::partial::partial_path;

/// The name of standard input on the command line.
pub(super) const STDIN: &str = "-";

/// Opens the input: standard input for `-`, else the path (a stream if it
/// is not a regular file).
pub(super) fn open_input(path: &Path) -> CliResult<InputFile> {
    let shown = path.display();
    if path.is_dir() {
        return Err(CliError::advised(
            format!("{shown} is a directory, not a heap dump"),
            "give the path of the dump file",
        ));
    }
    let opened = if path.as_os_str() == STDIN {
        InputFile::stdin()
    } else {
        InputFile::open(path)
    };
    opened.map_err(|e| {
        CliError::advised(
            format!("cannot open {shown}: {e}"),
            "check the path of the heap dump and its permissions",
        )
    })
}

/// Refuses an output that is the input stream's path (a FIFO), compared
/// by device and inode without opening either.
pub(super) fn check_stream_output(input: &Path, output: &Path) -> CliResult {
    let Ok(fifo) = fs::metadata(input) else {
        return Ok(());
    };
    for written in [output.to_path_buf(), partial_path(output, ".partial")] {
        if fs::metadata(&written).is_ok_and(|m| same_node(&m, &fifo)) {
            return Err(CliError::advised(
                format!(
                    "-o {} is the input {}: writing it would replace the input",
                    written.display(),
                    input.display()
                ),
                "write the snapshot to a regular file elsewhere, such as -o heap.smk",
            ));
        }
    }
    Ok(())
}

/// Refuses an output that exists and is neither a file nor a directory (a
/// FIFO, a device): the snapshot would replace it, and checking that it can
/// be written would open it (and wait, for a FIFO).
pub(super) fn check_special_output(output: &Path) -> CliResult {
    match fs::metadata(output) {
        Ok(m) if !m.is_file() && !m.is_dir() => Err(CliError::advised(
            format!(
                "-o {} is not a regular file (a FIFO or a device): a snapshot is written \
                 beside it and renamed over it",
                output.display()
            ),
            "write the snapshot to a regular file, such as -o heap.smk",
        )),
        _ => Ok(()),
    }
}

/// Whether two metadata describe the same file.
#[cfg(unix)]
fn same_node(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

/// Whether two metadata describe the same file (never known here).
#[cfg(not(unix))]
fn same_node(_: &fs::Metadata, _: &fs::Metadata) -> bool {
    false
}

/// Refuses an input whose first bytes show it is plainly not what `import
/// v8` (or `hprof`) reads, saying what to run instead. Looking does not
/// consume the bytes of a stream.
pub(super) fn check_input(file: &InputFile, input: &Path, v8: bool) -> CliResult {
    let shown = input.display();
    // A compressed dump is recognised by its decompressed bytes. An input
    // that cannot be read is reported by the importer, with the byte
    // offset.
    let Ok(head) = file.peek(64) else {
        return Ok(());
    };
    let out = input.with_extension("smk");
    let hint = match (Sniffed::of(&head), v8) {
        (Some(Sniffed::Hprof), true) => {
            format!("stealmark import hprof {shown} -o {}", out.display())
        }
        (Some(Sniffed::V8), false) => format!("stealmark import v8 {shown} -o {}", out.display()),
        (Some(Sniffed::Snapshot), _) => {
            return Err(CliError::advised(
                format!("{shown} is already a stealmark snapshot: there is nothing to import"),
                format!("use it as it is, e.g. `stealmark info {shown}`"),
            ))
        }
        _ => return Ok(()),
    };
    let looks = Sniffed::of(&head).map_or("", Sniffed::looks);
    Err(CliError::advised(
        format!(
            "{shown} is not what `stealmark import {}` reads: {looks}",
            format_name(v8)
        ),
        format!("import it with `{hint}`"),
    ))
}
