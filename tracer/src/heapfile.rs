//! Opening snapshot files, with errors that say what to do: a directory, a
//! foreign heap dump (V8, HPROF, gzip) and a damaged snapshot each get their
//! own message.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use stealmark_heap::snapshot::format::MAGIC;
use stealmark_heap::{Snapshot, SnapshotError};

use crate::error::{CliError, CliResult};

/// Maps and validates the snapshot at `path`.
pub fn open(path: &Path) -> CliResult<Snapshot> {
    if path.is_dir() {
        return Err(CliError::advised(
            format!("{} is a directory, not a snapshot file", path.display()),
            "give the path of a snapshot file, such as one `stealmark gen ... -o heap.smk` wrote",
        ));
    }
    Snapshot::open(path).map_err(|e| match e {
        SnapshotError::Io { source, .. } => CliError::io("open", path, source),
        invalid => sniff(path)
            .and_then(|format| format.not_a_snapshot(path))
            .unwrap_or_else(|| CliError::snapshot(path, invalid)),
    })
}

/// What a file is, judged by its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sniffed {
    /// A stealmark snapshot (its magic).
    Snapshot,
    /// JSON, as a V8 `.heapsnapshot` is (`{"snapshot"`, or any `{`).
    V8,
    /// A Java heap dump (`JAVA PROFILE 1.0.`).
    Hprof,
    /// Gzip-compressed data (`1f 8b`): a compressed dump, probably.
    Gzip,
}

/// The HPROF header's first bytes, shared by every version.
const HPROF_MAGIC: &[u8] = b"JAVA PROFILE 1.0.";
/// The first two bytes of a gzip member.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

impl Sniffed {
    /// Recognises `head`, the first bytes of a file.
    pub fn of(head: &[u8]) -> Option<Sniffed> {
        let text = head.trim_ascii_start();
        if head.starts_with(&MAGIC) {
            Some(Sniffed::Snapshot)
        } else if head.starts_with(HPROF_MAGIC) {
            Some(Sniffed::Hprof)
        } else if head.starts_with(&GZIP_MAGIC) {
            Some(Sniffed::Gzip)
        } else if text.starts_with(b"{") {
            Some(Sniffed::V8)
        } else {
            None
        }
    }

    /// What the file looks like, in messages.
    pub fn looks(self) -> &'static str {
        match self {
            Sniffed::Snapshot => "it looks like a stealmark snapshot",
            Sniffed::V8 => "it looks like a V8 heap snapshot (JSON)",
            Sniffed::Hprof => "it looks like a Java HPROF heap dump",
            Sniffed::Gzip => "it is gzip-compressed",
        }
    }

    /// The error for a file of this format given where a snapshot was
    /// expected, with the command that converts it; `None` for a
    /// snapshot (a damaged one: the loader's diagnosis says more).
    fn not_a_snapshot(self, path: &Path) -> Option<CliError> {
        let out = path.with_extension("smk");
        let import = |format: &str| {
            format!(
                "stealmark import {format} {} -o {}",
                path.display(),
                out.display()
            )
        };
        let hint = match self {
            Sniffed::Snapshot => return None,
            Sniffed::V8 => format!("convert it with `{}`", import("v8")),
            Sniffed::Hprof => format!("convert it with `{}`", import("hprof")),
            Sniffed::Gzip => format!(
                "if it is a compressed heap dump, convert it with `{}` or `{}`",
                import("v8"),
                import("hprof")
            ),
        };
        Some(CliError::advised(
            format!(
                "{} is not a stealmark snapshot: {}",
                path.display(),
                self.looks()
            ),
            hint,
        ))
    }
}

/// Recognises the file at `path` by its first bytes; `None` if it cannot
/// be read or is none of the formats of [`Sniffed`].
pub fn sniff(path: &Path) -> Option<Sniffed> {
    let mut head = Vec::with_capacity(64);
    File::open(path)
        .and_then(|f| f.take(64).read_to_end(&mut head))
        .ok()?;
    Sniffed::of(&head)
}

/// Whether the file at `path` starts with the snapshot magic.
pub fn is_snapshot(path: &Path) -> io::Result<bool> {
    let mut head = [0u8; MAGIC.len()];
    let mut file = File::open(path)?;
    match file.read_exact(&mut head) {
        Ok(()) => Ok(head == MAGIC),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_recognised_by_their_first_bytes() {
        assert_eq!(Sniffed::of(&MAGIC), Some(Sniffed::Snapshot));
        assert_eq!(Sniffed::of(br#"{"snapshot":{"meta""#), Some(Sniffed::V8));
        assert_eq!(Sniffed::of(b"\n  {\"nodes\""), Some(Sniffed::V8));
        assert_eq!(Sniffed::of(b"JAVA PROFILE 1.0.2\0"), Some(Sniffed::Hprof));
        assert_eq!(Sniffed::of(&[0x1f, 0x8b, 8, 0]), Some(Sniffed::Gzip));
        assert_eq!(Sniffed::of(b"hello"), None);
        assert_eq!(Sniffed::of(b""), None);
    }

    #[test]
    fn the_advice_names_the_import_command() {
        let line = Sniffed::Hprof
            .not_a_snapshot(Path::new("dump.hprof"))
            .expect("an HPROF dump is not a snapshot")
            .one_line("info");
        assert!(line.contains("looks like a Java HPROF heap dump"), "{line}");
        assert!(Sniffed::Snapshot
            .not_a_snapshot(Path::new("h.smk"))
            .is_none());
        assert!(
            line.contains("stealmark import hprof dump.hprof -o dump.smk"),
            "{line}"
        );
    }
}
