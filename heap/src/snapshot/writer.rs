//! The streaming snapshot writer.

use std::fmt;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use super::format::{
    Header, SectionEntry, ENTRY_LEN, FLAG_COMPRESSED, FLAG_RUNTIME_SIZES, HEADER_LEN, KIND_ARENA,
    KIND_FINALIZABLE, KIND_ROOTS, KIND_TYPE_KINDS, KIND_TYPE_NAMES, KIND_WEAK_SLOTS, VERSION,
};
use crate::arena::{ArenaFormat, ArenaLayout, ObjectHeader, Pos, Slot, TypeKind};
use crate::error::{SinkError, WriteError};
use crate::graph::HeapGraph;
use crate::sink::HeapSink;
use crate::sink_state::{compressed_index, next_type_id, too_many_slots, SinkState};
use stealmark_model::MarkIndex;

/// Sections the writer always emits: arena, roots, type names, type kinds,
/// finalizable objects, weak slots (empty ones included).
const SECTIONS: u64 = 6;
/// Where the arena starts: after the header and a six-entry table.
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
    /// Finalizable entries.
    pub finalizable: u64,
    /// The arena's encoding.
    pub format: ArenaFormat,
    /// The file length in bytes.
    pub file_len: u64,
    /// The file's CRC-32 checksum.
    pub checksum: u32,
}

/// Writes a snapshot (format v2) in one pass, object by object, holding
/// only a 1 MiB buffer, the roots, the finalizable objects, the type names
/// and kinds and the compressed layout's weak-slot list in memory: a heap of
/// any size is written without a second copy of it.
///
/// The arena comes first in the file (after the header and section table),
/// so objects stream straight out; the other sections follow at
/// [`SnapshotWriter::finish`], which then patches the header and the
/// checksum (CRC-32 combined from the streamed part and the header, so the
/// file is not read back).
///
/// Objects are emitted through [`HeapSink`] in position order, in the
/// [`ArenaFormat`] chosen before the first one (wide by default); slots refer
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
    /// The format, the object begun last and its slots still expected, the
    /// declared kinds.
    state: SinkState,
    /// The bytes of padding and payload of the object begun last, written
    /// once its slots are in.
    pending_fill: u64,
    /// The half word of the next slot of the object begun last.
    slot_half: u64,
    roots: Vec<u64>,
    finalizable: Vec<u64>,
    names: Vec<u8>,
    name_ends: Vec<u64>,
    /// Half-word indices of weak slots (compressed layout), increasing.
    weak_slots: Vec<u64>,
    progress: Option<Box<dyn FnMut(Progress) + Send>>,
}

impl<W: Write + Seek> fmt::Debug for SnapshotWriter<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SnapshotWriter")
            .field("format", &self.state.format)
            .field("objects", &self.state.objects)
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
            state: SinkState::new(),
            pending_fill: 0,
            slot_half: 0,
            roots: Vec::new(),
            finalizable: Vec::new(),
            names: Vec::new(),
            name_ends: Vec::new(),
            weak_slots: Vec::new(),
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
        self.state.objects
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
                objects: self.state.objects,
                bytes: ARENA_OFFSET + self.written,
            });
        }
        Ok(())
    }

    #[inline]
    fn push(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= BUFFER {
            self.flush_buf()?;
        }
        Ok(())
    }

    /// Writes the zero padding and payload of the current object once its
    /// slots are in.
    fn write_fill(&mut self) -> Result<(), WriteError> {
        while self.pending_fill > 0 {
            let room = BUFFER.saturating_sub(self.buf.len()).max(8) as u64;
            let n = self.pending_fill.min(room);
            self.buf.resize(self.buf.len() + n as usize, 0);
            self.pending_fill -= n;
            if self.buf.len() >= BUFFER {
                self.flush_buf()?;
            }
        }
        Ok(())
    }

    /// Writes the other sections, patches the header and checksum, and
    /// flushes. Returns what was written.
    pub fn finish(mut self) -> Result<WriteSummary, WriteError> {
        self.state.check_complete("finish")?;
        let kinds = self.state.resolved_kinds(self.name_ends.len())?;
        let mut offset = ARENA_OFFSET;
        let mut entries = Vec::with_capacity(SECTIONS as usize);
        let mut section = |kind: u32, length: u64| {
            entries.push(SectionEntry {
                kind,
                offset,
                length,
            });
            offset += length;
        };
        section(KIND_ARENA, self.arena_words * 8);
        let roots = std::mem::take(&mut self.roots);
        for root in &roots {
            self.push(&root.to_le_bytes())?;
        }
        section(KIND_ROOTS, roots.len() as u64 * 8);
        self.push(&0u64.to_le_bytes())?;
        let name_ends = std::mem::take(&mut self.name_ends);
        for end in &name_ends {
            self.push(&end.to_le_bytes())?;
        }
        let names = std::mem::take(&mut self.names);
        self.push(&names)?;
        let padded = names.len().div_ceil(8) * 8;
        self.push(&vec![0; padded - names.len()])?;
        section(
            KIND_TYPE_NAMES,
            (name_ends.len() as u64 + 1) * 8 + padded as u64,
        );
        let kinds_len = kinds.len().div_ceil(8) * 8;
        self.push(&kinds)?;
        self.push(&vec![0; kinds_len - kinds.len()])?;
        section(KIND_TYPE_KINDS, kinds_len as u64);
        let finalizable = std::mem::take(&mut self.finalizable);
        for f in &finalizable {
            self.push(&f.to_le_bytes())?;
        }
        section(KIND_FINALIZABLE, finalizable.len() as u64 * 8);
        let weak_slots = std::mem::take(&mut self.weak_slots);
        for j in &weak_slots {
            self.push(&j.to_le_bytes())?;
        }
        section(KIND_WEAK_SLOTS, weak_slots.len() as u64 * 8);
        self.flush_buf()?;
        let file_len = offset;
        debug_assert_eq!(file_len, ARENA_OFFSET + self.written);

        let format = self.state.format;
        let mut flags = 0;
        if format.layout == ArenaLayout::Compressed {
            flags |= FLAG_COMPRESSED;
        }
        if format.runtime_sizes {
            flags |= FLAG_RUNTIME_SIZES;
        }
        let mut header = Header {
            version: VERSION,
            flags,
            file_len,
            object_count: self.state.objects,
            root_count: roots.len() as u64,
            type_count: name_ends.len() as u64,
            arena_words: self.arena_words,
            section_count: SECTIONS as u32,
            checksum: 0,
        };
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
                objects: self.state.objects,
                bytes: file_len,
            });
        }
        Ok(WriteSummary {
            objects: self.state.objects,
            arena_words: self.arena_words,
            roots: header.root_count,
            type_names: header.type_count,
            finalizable: finalizable.len() as u64,
            format,
            file_len,
            checksum: header.checksum,
        })
    }
}

impl<W: Write + Seek> HeapSink for SnapshotWriter<W> {
    type Error = WriteError;

    fn set_format(&mut self, format: ArenaFormat) -> Result<(), WriteError> {
        Ok(self.state.set_format(format)?)
    }

    fn format(&self) -> ArenaFormat {
        self.state.format
    }

    fn begin_object(&mut self, header: ObjectHeader) -> Result<Pos, WriteError> {
        self.state.check_begin(header)?;
        let pos = self.next_pos();
        let format = self.state.format;
        let layout = format.layout;
        let size = header.size_words(layout);
        let end = self
            .arena_words
            .checked_add(size)
            .filter(|&end| format.fits(end))
            .ok_or(SinkError::TooFar { pos })?;
        let start = self.arena_words;
        self.arena_words = end;
        self.state.begun(header);
        self.push(&header.layout_word().to_le_bytes())?;
        match layout {
            ArenaLayout::Wide => self.push(&u64::from(header.type_id).to_le_bytes())?,
            ArenaLayout::Compressed => self.push(&header.type_id.to_le_bytes())?,
        }
        self.slot_half = 2 * start + layout.header_halves();
        self.pending_fill = size * 8
            - 4 * (layout.header_halves() + u64::from(header.slots) * layout.slot_halves());
        if self.state.pending == 0 {
            self.write_fill()?;
        }
        Ok(pos)
    }

    fn slots(&mut self, slots: &[Slot]) -> Result<(), WriteError> {
        self.state.check_slots(slots.len())?;
        let layout = self.state.format.layout;
        for &s in slots {
            self.state.note_slot(self.state.current_type, s);
            match layout {
                ArenaLayout::Wide => self.push(&s.raw().to_le_bytes())?,
                ArenaLayout::Compressed => {
                    let index = compressed_index(s)?;
                    if s.is_weak() {
                        self.weak_slots.push(self.slot_half);
                    }
                    self.push(&index.to_le_bytes())?;
                }
            }
            self.slot_half += layout.slot_halves();
        }
        self.state.pending -= slots.len() as u64;
        if self.state.pending == 0 {
            self.write_fill()?;
        }
        Ok(())
    }

    fn too_many_slots(&self, count: usize) -> WriteError {
        too_many_slots(count).into()
    }

    fn root(&mut self, target: Pos) -> Result<(), WriteError> {
        self.roots.push(target.offset());
        Ok(())
    }

    fn finalizable(&mut self, target: Pos) -> Result<(), WriteError> {
        self.finalizable.push(target.offset());
        Ok(())
    }

    fn type_name(&mut self, name: &str) -> Result<u32, WriteError> {
        let id = next_type_id(self.name_ends.len())?;
        self.names.extend_from_slice(name.as_bytes());
        self.name_ends.push(self.names.len() as u64);
        Ok(id)
    }

    fn type_kind(&mut self, type_id: u32, kind: TypeKind) -> Result<(), WriteError> {
        self.state.type_kind(type_id, kind);
        Ok(())
    }

    fn next_pos(&self) -> Pos {
        Pos::from_word_index(self.arena_words).expect("arena position fits")
    }
}

/// Writes an in-memory heap (or any [`HeapGraph`]) to a snapshot file, in
/// the heap's own format (a version 1 snapshot becomes version 2, wide).
pub fn write_heap<G: HeapGraph>(
    graph: &G,
    path: impl AsRef<Path>,
) -> Result<WriteSummary, WriteError> {
    let mut w = SnapshotWriter::create(path)?;
    copy_graph(graph, &mut w)?;
    w.finish()
}

/// Emits `graph` into `sink`: format, type names and kinds, objects in
/// address order, roots, finalizable objects.
fn copy_graph<G: HeapGraph, S: HeapSink>(graph: &G, sink: &mut S) -> Result<(), S::Error> {
    let view = graph.view();
    sink.set_format(view.format())?;
    for t in 0..graph.type_count() {
        sink.type_name(graph.type_name(t as u32).unwrap_or(""))?;
    }
    // Explicit kinds; weak-slots types follow from their weak slots.
    let kinded = graph.type_count().max(view.kinded_types());
    for t in 0..kinded as u32 {
        match view.type_kind(t) {
            TypeKind::Plain | TypeKind::WeakSlots => {}
            kind => sink.type_kind(t, kind)?,
        }
    }
    sink.reserve(view.object_count(), view.mark_index_bound() as u64);
    let mut buf = Vec::with_capacity(4096);
    for obj in view.objects() {
        let header = view.header(obj);
        let per_slot = view.type_kind(header.type_id) == TypeKind::WeakSlots;
        sink.begin_object(header)?;
        buf.clear();
        for slot in view.slots(obj) {
            buf.push(match slot {
                None => Slot::NULL,
                Some((target, kind)) => {
                    Slot::new(view.pos(target), per_slot && kind == crate::SlotKind::Weak)
                }
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
    for &f in graph.finalizable() {
        sink.finalizable(view.pos(f))?;
    }
    Ok(())
}
