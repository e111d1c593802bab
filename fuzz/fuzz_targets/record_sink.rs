//! A sink that records everything an importer emits (through a
//! [`CheckSink`], which checks it is well formed), so that a fuzz target can
//! compare two imports, or an import with the snapshot written from it.
//! Like `CheckSink`, it allocates no payload.

// Shared by several targets, each of which uses a part.
#![allow(dead_code)]

use stealmark_heap::{ArenaFormat, HeapSink, ObjectHeader, Pos, Slot, SlotKind, TypeKind};

use crate::import_sink::{CheckSink, Misuse};

/// What an importer emitted.
#[derive(Default, PartialEq, Debug)]
pub struct Recorded {
    pub format: ArenaFormat,
    /// Every object's position and header, in emission order.
    pub objects: Vec<(Pos, ObjectHeader)>,
    /// Where each object's slots start in `slots`.
    pub slot_starts: Vec<usize>,
    pub slots: Vec<Slot>,
    pub roots: Vec<Pos>,
    pub finalizable: Vec<Pos>,
    pub names: Vec<String>,
    /// Explicit kinds, in the order they were set (the last one counts).
    pub kinds: Vec<(u32, TypeKind)>,
    /// The types given per-slot weak references, sorted and deduplicated
    /// by [`RecordSink::finish`].
    pub weak_types: Vec<u32>,
    pub arena_words: u64,
}

impl Recorded {
    /// The slots of object `i`.
    pub fn slots_of(&self, i: usize) -> &[Slot] {
        let end = self
            .slot_starts
            .get(i + 1)
            .copied()
            .unwrap_or(self.slots.len());
        &self.slots[self.slot_starts[i]..end]
    }

    /// The kind type `t` ends up with: the last one set, else weak-slots if
    /// its objects got per-slot weak references, else plain.
    pub fn kind(&self, t: u32) -> TypeKind {
        match self.kinds.iter().rev().find(|k| k.0 == t) {
            Some(&(_, kind)) => kind,
            None if self.weak_types.binary_search(&t).is_ok() => TypeKind::WeakSlots,
            None => TypeKind::Plain,
        }
    }

    /// The kind of slot `j` (non-null) of an object of kind `kind`.
    pub fn slot_kind(kind: TypeKind, slot: Slot, j: usize) -> SlotKind {
        match kind {
            TypeKind::WeakSlots if slot.is_weak() => SlotKind::Weak,
            TypeKind::WeakRef if j == 0 => SlotKind::Weak,
            TypeKind::SoftRef if j == 0 => SlotKind::Soft,
            TypeKind::PhantomRef if j == 0 => SlotKind::Phantom,
            TypeKind::EphemeronTable => panic!("an importer made an ephemeron table"),
            _ => SlotKind::Strong,
        }
    }
}

/// Records what it is given, checking it with a [`CheckSink`].
#[derive(Default)]
pub struct RecordSink {
    pub check: CheckSink,
    pub heap: Recorded,
}

impl RecordSink {
    /// Checks the heap is well formed and returns the record.
    pub fn finish(mut self) -> Recorded {
        self.check.check();
        self.heap.weak_types.sort_unstable();
        self.heap.weak_types.dedup();
        self.heap.arena_words = self.check.arena_words();
        self.heap
    }
}

impl HeapSink for RecordSink {
    type Error = Misuse;

    fn set_format(&mut self, format: ArenaFormat) -> Result<(), Misuse> {
        self.heap.format = format;
        self.check.set_format(format)
    }

    fn format(&self) -> ArenaFormat {
        self.check.format()
    }

    fn begin_object(&mut self, h: ObjectHeader) -> Result<Pos, Misuse> {
        let pos = self.check.begin_object(h)?;
        self.heap.objects.push((pos, h));
        self.heap.slot_starts.push(self.heap.slots.len());
        Ok(pos)
    }

    fn slots(&mut self, slots: &[Slot]) -> Result<(), Misuse> {
        self.check.slots(slots)?;
        if slots.iter().any(|s| s.is_weak()) {
            let (_, h) = self.heap.objects.last().expect("slots after an object");
            self.heap.weak_types.push(h.type_id);
        }
        self.heap.slots.extend_from_slice(slots);
        Ok(())
    }

    fn too_many_slots(&self, n: usize) -> Misuse {
        self.check.too_many_slots(n)
    }

    fn root(&mut self, target: Pos) -> Result<(), Misuse> {
        self.heap.roots.push(target);
        self.check.root(target)
    }

    fn finalizable(&mut self, target: Pos) -> Result<(), Misuse> {
        self.heap.finalizable.push(target);
        self.check.finalizable(target)
    }

    fn type_name(&mut self, name: &str) -> Result<u32, Misuse> {
        self.heap.names.push(name.to_owned());
        self.check.type_name(name)
    }

    fn type_kind(&mut self, type_id: u32, kind: TypeKind) -> Result<(), Misuse> {
        self.heap.kinds.push((type_id, kind));
        self.check.type_kind(type_id, kind)
    }

    fn next_pos(&self) -> Pos {
        self.check.next_pos()
    }
}
