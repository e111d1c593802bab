//! The streaming snapshot writer.

use std::fmt;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use super::format::{
    Header, SectionEntry, ENTRY_LEN, HEADER_LEN, KIND_ARENA, KIND_ROOTS, KIND_TYPE_NAMES,
};
use crate::arena::{ObjectHeader, Pos, Slot};
use crate::error::WriteError;
use crate::graph::HeapGraph;
use crate::sink::HeapSink;
use stealmark_model::MarkIndex;

/// Sections the writer always emits: arena, roots, type names.
const SECTIONS: u64 = 3;
/// Where the arena starts: after the header and a three-entry table.
const ARENA_OFFSET: u64 = HEADER_LEN + SECTIONS * ENTRY_LEN;
/// Bytes buffered before a write (and a progress report).
const BUFFER: usize = 1 << 20;

/// Progress of a [`SnapshotWriter`], reported after every megabyte written.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Progress {
    /// Objects emitted so far.
    pub objects: u64,
    /// Bytes written to the output so far.
    pub bytes: u64,
}

/// What [`SnapshotWriter::finish`] wrote.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct WriteSummary {
    /// Objects in the arena.
    pub objects: u64,
    /// Arena length in words.
    pub arena_words: u64,
    /// Roots.
    pub roots: u64,
    /// Type names.
    pub type_names: u64,
    /// The file length in bytes.
    pub file_len: u64,
    /// The file's CRC-32 checksum.
    pub checksum: u32,
}

/// Writes a snapshot in one pass, object by object, holding only a 1 MiB
/// buffer, the roots and the type names in memory: a heap of any size is
/// written without a second copy of it.
///
/// The arena comes first in the file (after the header and section table),
/// so objects stream straight out; roots and type names follow at
/// [`SnapshotWriter::finish`], which then patches the header and the
/// checksum (CRC-32 combined from the streamed part and the header, so the
/// file is not read back).
///
/// Objects are emitted through [`HeapSink`] in position order; slots refer
/// to positions computed in advance (see [`crate::Layout`]). The writer
/// checks the order of calls; it cannot check that forward references land
/// on object starts, so the file is fully validated when opened with
/// [`crate::Snapshot::open`].
///
/// ```
/// use stealmark_heap::{HeapSink, Slot, Snapshot, SnapshotWriter, HeapGraph};
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("pair.smh");
/// let mut w = SnapshotWriter::create(&path).unwrap();
/// let t = w.type_name("Pair").unwrap();
/// let a = w.next_pos();
/// let b = a.add_words(4).unwrap(); // a has 2 header words and 2 slots
/// w.object(t, &[Slot::strong(b), Slot::NULL], 0).unwrap();
/// w.object(t, &[Slot::weak(a), Slot::NULL], 0).unwrap();
/// w.root(a).unwrap();
/// let summary = w.finish().unwrap();
/// assert_eq!(summary.objects, 2);
/// let snap = Snapshot::open(&path).unwrap();
/// assert_eq!(snap.view().object_count(), 2);
/// assert_eq!(snap.type_name(t), Some("Pair"));
/// ```
pub struct SnapshotWriter<W: Write + Seek = File> {
    out: W,
    buf: Vec<u8>,
    /// CRC-32 of everything written after the header and table.
    crc: crc32fast::Hasher,
    /// Bytes written after the header and table.
    written: u64,
    arena_words: u64,
    objects: u64,
    /// Slots still expected for the object begun last, then its payload.
    pending_slots: u64,
    pending_payload: u64,
    roots: Vec<u64>,
    names: Vec<u8>,
    name_ends: Vec<u64>,
    progress: Option<Box<dyn FnMut(Progress) + Send>>,
}

impl<W: Write + Seek> fmt::Debug for SnapshotWriter<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SnapshotWriter")
            .field("objects", &self.objects)
            .field("arena_words", &self.arena_words)
            .field("roots", &self.roots.len())
            .finish()
    }
}

impl SnapshotWriter<File> {
    /// Creates (or truncates) the file at `path` and starts a snapshot.
    pub fn create(path: impl AsRef<Path>) -> Result<SnapshotWriter<File>, WriteError> {
        SnapshotWriter::new(File::create(path)?)
    }
}

impl<W: Write + Seek> SnapshotWriter<W> {
    /// Starts a snapshot at the current start of `out` (which must be empty
    /// or positioned at 0: the header is patched at offset 0).
    pub fn new(mut out: W) -> Result<SnapshotWriter<W>, WriteError> {
        out.seek(SeekFrom::Start(0))?;
        out.write_all(&[0u8; ARENA_OFFSET as usize])?;
        let mut w = SnapshotWriter {
            out,
            buf: Vec::with_capacity(BUFFER + 4096),
            crc: crc32fast::Hasher::new(),
            written: 0,
            arena_words: 1,
            objects: 0,
            pending_slots: 0,
            pending_payload: 0,
            roots: Vec::new(),
            names: Vec::new(),
            name_ends: Vec::new(),
            progress: None,
        };
        // Arena word 0, reserved.
        w.buf.extend_from_slice(&0u64.to_le_bytes());
        Ok(w)
    }

    /// Calls `report` after every megabyte written, and once at the end.
    pub fn on_progress(
        mut self,
        report: impl FnMut(Progress) + Send + 'static,
    ) -> SnapshotWriter<W> {
        self.progress = Some(Box::new(report));
        self
    }

    /// Objects emitted so far.
    pub fn object_count(&self) -> u64 {
        self.objects
    }

    fn flush_buf(&mut self) -> Result<(), WriteError> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.crc.update(&self.buf);
        self.out.write_all(&self.buf)?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        if let Some(report) = &mut self.progress {
            report(Progress {
                objects: self.objects,
                bytes: ARENA_OFFSET + self.written,
            });
        }
        Ok(())
    }

    #[inline]
    fn push_word(&mut self, word: u64) -> Result<(), WriteError> {
        self.buf.extend_from_slice(&word.to_le_bytes());
        if self.buf.len() >= BUFFER {
            self.flush_buf()?;
        }
        Ok(())
    }

    /// Writes the zero payload of the current object once its slots are in.
    fn write_payload(&mut self) -> Result<(), WriteError> {
        while self.pending_payload > 0 {
            let room = (BUFFER.saturating_sub(self.buf.len()) / 8).max(1) as u64;
            let n = self.pending_payload.min(room);
            self.buf.resize(self.buf.len() + n as usize * 8, 0);
            self.pending_payload -= n;
            if self.buf.len() >= BUFFER {
                self.flush_buf()?;
            }
        }
        Ok(())
    }

    fn misuse(&self, what: &str) -> WriteError {
        WriteError::Misuse(format!(
            "{what}: the object begun last (object {}) still expects {} slots",
            self.objects.saturating_sub(1),
            self.pending_slots
        ))
    }

    /// Writes the roots and type names, patches the header and checksum,
    /// and flushes. Returns what was written.
    pub fn finish(mut self) -> Result<WriteSummary, WriteError> {
        if self.pending_slots != 0 {
            return Err(self.misuse("finish"));
        }
        let arena_len = self.arena_words * 8;
        let roots_offset = ARENA_OFFSET + arena_len;
        for i in 0..self.roots.len() {
            let root = self.roots[i];
            self.push_word(root)?;
        }
        let roots_len = self.roots.len() as u64 * 8;
        let types_offset = roots_offset + roots_len;
        self.push_word(0)?;
        for i in 0..self.name_ends.len() {
            let end = self.name_ends[i];
            self.push_word(end)?;
        }
        let names = std::mem::take(&mut self.names);
        self.buf.extend_from_slice(&names);
        let padded = names.len().div_ceil(8) * 8;
        self.buf.resize(self.buf.len() + (padded - names.len()), 0);
        let types_len = (self.name_ends.len() as u64 + 1) * 8 + padded as u64;
        self.flush_buf()?;
        let file_len = types_offset + types_len;
        debug_assert_eq!(file_len, ARENA_OFFSET + self.written);

        let mut header = Header {
            flags: 0,
            file_len,
            object_count: self.objects,
            root_count: self.roots.len() as u64,
            type_count: self.name_ends.len() as u64,
            arena_words: self.arena_words,
            section_count: SECTIONS as u32,
            checksum: 0,
        };
        let entries = [
            SectionEntry {
                kind: KIND_ARENA,
                offset: ARENA_OFFSET,
                length: arena_len,
            },
            SectionEntry {
                kind: KIND_ROOTS,
                offset: roots_offset,
                length: roots_len,
            },
            SectionEntry {
                kind: KIND_TYPE_NAMES,
                offset: types_offset,
                length: types_len,
            },
        ];
        let mut prefix = Vec::with_capacity(ARENA_OFFSET as usize);
        prefix.extend_from_slice(&header.encode());
        for e in &entries {
            prefix.extend_from_slice(&e.encode());
        }
        let mut crc = crc32fast::Hasher::new();
        crc.update(&prefix);
        crc.combine(&self.crc);
        header.checksum = crc.finalize();
        prefix[..HEADER_LEN as usize].copy_from_slice(&header.encode());
        self.out.seek(SeekFrom::Start(0))?;
        self.out.write_all(&prefix)?;
        self.out.seek(SeekFrom::Start(file_len))?;
        self.out.flush()?;
        if let Some(report) = &mut self.progress {
            report(Progress {
                objects: self.objects,
                bytes: file_len,
            });
        }
        Ok(WriteSummary {
            objects: self.objects,
            arena_words: self.arena_words,
            roots: header.root_count,
            type_names: header.type_count,
            file_len,
            checksum: header.checksum,
        })
    }
}

impl<W: Write + Seek> HeapSink for SnapshotWriter<W> {
    type Error = WriteError;

    fn begin_object(&mut self, header: ObjectHeader) -> Result<Pos, WriteError> {
        if self.pending_slots != 0 {
            return Err(self.misuse("begin_object"));
        }
        let pos = self.next_pos();
        let end = self.arena_words.checked_add(header.size_words());
        self.arena_words = end.ok_or_else(|| WriteError::Misuse("arena size overflows".into()))?;
        self.objects += 1;
        self.push_word(header.layout_word())?;
        self.push_word(header.type_word())?;
        self.pending_slots = u64::from(header.slots);
        self.pending_payload = u64::from(header.payload_words);
        if self.pending_slots == 0 {
            self.write_payload()?;
        }
        Ok(pos)
    }

    fn slots(&mut self, slots: &[Slot]) -> Result<(), WriteError> {
        if slots.len() as u64 > self.pending_slots {
            return Err(WriteError::Misuse(format!(
                "slots: {} slots given, the current object expects {} more",
                slots.len(),
                self.pending_slots
            )));
        }
        for s in slots {
            self.buf.extend_from_slice(&s.raw().to_le_bytes());
            if self.buf.len() >= BUFFER {
                self.flush_buf()?;
            }
        }
        self.pending_slots -= slots.len() as u64;
        if self.pending_slots == 0 {
            self.write_payload()?;
        }
        Ok(())
    }

    fn too_many_slots(&self, count: usize) -> WriteError {
        WriteError::Misuse(format!(
            "an object cannot have {count} slots (at most {})",
            u32::MAX
        ))
    }

    fn root(&mut self, target: Pos) -> Result<(), WriteError> {
        self.roots.push(target.offset());
        Ok(())
    }

    fn type_name(&mut self, name: &str) -> Result<u32, WriteError> {
        let id = u32::try_from(self.name_ends.len())
            .map_err(|_| WriteError::Misuse("too many type names".into()))?;
        self.names.extend_from_slice(name.as_bytes());
        self.name_ends.push(self.names.len() as u64);
        Ok(id)
    }

    fn next_pos(&self) -> Pos {
        Pos::from_word_index(self.arena_words).expect("arena position fits")
    }
}

/// Writes an in-memory heap (or any [`HeapGraph`]) to a snapshot file.
pub fn write_heap<G: HeapGraph>(
    graph: &G,
    path: impl AsRef<Path>,
) -> Result<WriteSummary, WriteError> {
    let mut w = SnapshotWriter::create(path)?;
    copy_graph(graph, &mut w)?;
    w.finish()
}

/// Emits `graph` into `sink`: type names, objects in address order, roots.
fn copy_graph<G: HeapGraph, S: HeapSink>(graph: &G, sink: &mut S) -> Result<(), S::Error> {
    for t in 0..graph.type_count() {
        sink.type_name(graph.type_name(t as u32).unwrap_or(""))?;
    }
    let view = graph.view();
    sink.reserve(view.object_count(), view.mark_index_bound() as u64);
    let mut buf = Vec::with_capacity(4096);
    for obj in view.objects() {
        sink.begin_object(view.header(obj))?;
        buf.clear();
        for slot in view.slots(obj) {
            buf.push(match slot {
                None => Slot::NULL,
                Some((target, kind)) => Slot::new(view.pos(target), kind == crate::SlotKind::Weak),
            });
            if buf.len() == 4096 {
                sink.slots(&buf)?;
                buf.clear();
            }
        }
        sink.slots(&buf)?;
    }
    for &root in graph.roots() {
        sink.root(view.pos(root))?;
    }
    Ok(())
}
