//! What the two sinks of this crate, [`HeapBuilder`](crate::HeapBuilder)
//! and [`SnapshotWriter`](crate::SnapshotWriter), keep and check alike
//! besides their arenas: the format, the object begun last and the slots it
//! still expects, the declared type kinds and the types that received
//! per-slot weak slots, and the errors of calls that do not fit
//! ([`SinkError`]).

use std::collections::BTreeSet;

use crate::arena::{ArenaFormat, ObjectHeader, Slot, TypeKind, COMPRESSED_MAX_WORDS};
use crate::error::SinkError;

/// The bookkeeping both sinks share.
#[derive(Debug)]
pub(crate) struct SinkState {
    /// The arena's encoding.
    pub(crate) format: ArenaFormat,
    /// Objects begun so far.
    pub(crate) objects: u64,
    /// Slots still expected for the object begun last.
    pub(crate) pending: u64,
    /// The type of the object begun last.
    pub(crate) current_type: u32,
    /// Kind codes by type id (absent: plain).
    kinds: Vec<u8>,
    /// Type ids whose objects received a per-slot weak slot.
    weak_types: BTreeSet<u32>,
}

impl SinkState {
    /// No object yet, in the wide format.
    pub(crate) fn new() -> SinkState {
        SinkState {
            format: ArenaFormat::WIDE,
            objects: 0,
            pending: 0,
            current_type: 0,
            kinds: Vec::new(),
            weak_types: BTreeSet::new(),
        }
    }

    /// [`HeapSink::set_format`](crate::HeapSink::set_format): only before
    /// the first object.
    pub(crate) fn set_format(&mut self, format: ArenaFormat) -> Result<(), SinkError> {
        if self.objects > 0 && format != self.format {
            return Err(SinkError::Misuse(format!(
                "set_format: {} objects were already emitted in the {} layout",
                self.objects, self.format.layout
            )));
        }
        self.format = format;
        Ok(())
    }

    /// Checks, before `what`, that the object begun last has all its slots.
    pub(crate) fn check_complete(&self, what: &str) -> Result<(), SinkError> {
        if self.pending != 0 {
            return Err(SinkError::Misuse(format!(
                "{what}: the object begun last (object {}) still expects {} slots",
                self.objects.saturating_sub(1),
                self.pending
            )));
        }
        Ok(())
    }

    /// Checks that an object with `header` may begin: the one before it is
    /// complete, and the header fits the format.
    pub(crate) fn check_begin(&self, header: ObjectHeader) -> Result<(), SinkError> {
        self.check_complete("begin_object")?;
        check_header(self.format, header).map_err(SinkError::Misuse)
    }

    /// Counts the object with `header` that begins now.
    pub(crate) fn begun(&mut self, header: ObjectHeader) {
        self.objects += 1;
        self.pending = u64::from(header.slots);
        self.current_type = header.type_id;
    }

    /// Checks that `count` more slots fit the object begun last.
    pub(crate) fn check_slots(&self, count: usize) -> Result<(), SinkError> {
        if count as u64 > self.pending {
            return Err(SinkError::Misuse(format!(
                "slots: {count} slots given, the current object expects {} more",
                self.pending
            )));
        }
        Ok(())
    }

    /// Notes `slot`, a slot of an object of type `type_id`: a per-slot weak
    /// slot makes its type weak-slots.
    pub(crate) fn note_slot(&mut self, type_id: u32, slot: Slot) {
        if slot.is_weak() {
            self.weak_types.insert(type_id);
        }
    }

    /// [`HeapSink::type_kind`](crate::HeapSink::type_kind).
    pub(crate) fn type_kind(&mut self, type_id: u32, kind: TypeKind) {
        let t = type_id as usize;
        if self.kinds.len() <= t {
            self.kinds.resize(t + 1, TypeKind::Plain.code());
        }
        self.kinds[t] = kind.code();
    }

    /// The kind bytes to write for `type_count` type names: the declared
    /// kinds, with every plain type whose objects received per-slot weak
    /// slots turned into [`TypeKind::WeakSlots`], trailing plain kinds
    /// dropped.
    pub(crate) fn resolved_kinds(&self, type_count: usize) -> Result<Vec<u8>, SinkError> {
        let mut kinds = self.kinds.clone();
        for &t in &self.weak_types {
            let i = t as usize;
            if kinds.len() <= i {
                kinds.resize(i + 1, TypeKind::Plain.code());
            }
            match TypeKind::from_code(kinds[i]).unwrap_or_default() {
                TypeKind::Plain | TypeKind::WeakSlots => kinds[i] = TypeKind::WeakSlots.code(),
                kind => return Err(SinkError::WeakSlotNotAllowed { type_id: t, kind }),
            }
        }
        while kinds.last() == Some(&TypeKind::Plain.code()) {
            kinds.pop();
        }
        if type_count > 0 && kinds.len() > type_count {
            return Err(SinkError::Misuse(format!(
                "type id {} has a kind but there are only {type_count} type names",
                kinds.len() - 1
            )));
        }
        Ok(kinds)
    }
}

/// [`HeapSink::too_many_slots`](crate::HeapSink::too_many_slots).
pub(crate) fn too_many_slots(count: usize) -> SinkError {
    SinkError::Misuse(format!(
        "an object cannot have {count} slots (at most {})",
        u32::MAX
    ))
}

/// The type id of a new type name after `count` of them.
pub(crate) fn next_type_id(count: usize) -> Result<u32, SinkError> {
    u32::try_from(count).map_err(|_| SinkError::Misuse("too many type names".into()))
}

/// The value of `slot` in a compressed arena: its target's word index, 0
/// for null.
pub(crate) fn compressed_index(slot: Slot) -> Result<u32, SinkError> {
    match slot.target() {
        None => Ok(0),
        Some(p) if p.word_index() < COMPRESSED_MAX_WORDS => Ok(p.word_index() as u32),
        Some(p) => Err(SinkError::TooFar { pos: p }),
    }
}

/// Checks that a header has a runtime size exactly when the format records
/// them, and a payload that matches it. Returns what is wrong.
fn check_header(format: ArenaFormat, header: ObjectHeader) -> Result<(), String> {
    match (format.runtime_sizes, header.runtime_size) {
        (false, None) => Ok(()),
        (false, Some(_)) => Err(
            "an object with a runtime size in an arena that records none (set the format first)"
                .into(),
        ),
        (true, None) => {
            Err("an object without a runtime size in an arena that records them".into())
        }
        (true, Some(size)) => {
            let expected = ObjectHeader::sized(header.type_id, header.slots, size, format.layout);
            if expected.payload_words == header.payload_words {
                Ok(())
            } else {
                Err(format!(
                    "an object of {size} runtime bytes and {} slots has {} payload words in the {} \
                     layout, not {} (use ObjectHeader::sized)",
                    header.slots, expected.payload_words, format.layout, header.payload_words
                ))
            }
        }
    }
}
