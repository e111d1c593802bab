//! A sink for the importer fuzz targets: it allocates no payload (a fuzzed
//! size can claim gigabytes) and checks that an import that succeeds emitted
//! a well-formed heap: every slot, root and finalizable entry names an
//! emitted object, every object got exactly its slots and a runtime size
//! exactly when the format records them, every type id has a name, kinds
//! are only set for named types, and per-slot weak references only go to
//! types whose kind allows them.

// Shared by several targets, each of which uses a part.
#![allow(dead_code)]

use stealmark_heap::{ArenaFormat, HeapSink, ObjectHeader, Pos, Slot, TypeKind};

#[derive(Default)]
pub struct CheckSink {
    format: ArenaFormat,
    /// Word index of the next object (word 0 is reserved).
    next: u64,
    starts: Vec<u64>,
    targets: Vec<u64>,
    roots: Vec<u64>,
    finalizable: Vec<u64>,
    max_type: Option<u32>,
    types: u32,
    kinds: Vec<(u32, TypeKind)>,
    /// The type of the current object, and the types given per-slot weak
    /// references.
    current_type: u32,
    weak_types: Vec<u32>,
    pending: u64,
}

#[derive(Debug)]
pub struct Misuse(&'static str);

impl std::fmt::Display for Misuse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for Misuse {}

impl HeapSink for CheckSink {
    type Error = Misuse;

    fn set_format(&mut self, format: ArenaFormat) -> Result<(), Misuse> {
        assert!(
            self.starts.is_empty() || format == self.format,
            "the format changed after the first object"
        );
        self.format = format;
        Ok(())
    }

    fn format(&self) -> ArenaFormat {
        self.format
    }

    fn begin_object(&mut self, h: ObjectHeader) -> Result<Pos, Misuse> {
        assert_eq!(
            self.pending, 0,
            "an object started before the last one got its slots"
        );
        assert_eq!(
            h.runtime_size.is_some(),
            self.format.runtime_sizes,
            "a runtime size exactly when the format records them"
        );
        let start = self.next.max(1);
        let pos = Pos::from_word_index(start).ok_or(Misuse("arena overflow"))?;
        self.next = start
            .checked_add(h.size_words(self.format.layout))
            .ok_or(Misuse("arena overflow"))?;
        assert!(self.format.fits(self.next), "the arena outgrew its layout");
        self.starts.push(start);
        self.pending = u64::from(h.slots);
        self.max_type = self.max_type.max(Some(h.type_id));
        self.current_type = h.type_id;
        Ok(pos)
    }

    fn slots(&mut self, slots: &[Slot]) -> Result<(), Misuse> {
        self.pending = self
            .pending
            .checked_sub(slots.len() as u64)
            .expect("more slots than announced");
        for s in slots {
            // Importers emit null slots only as a reference's null referent.
            if let Some(t) = s.target() {
                self.targets.push(t.word_index());
            }
            if s.is_weak() {
                self.weak_types.push(self.current_type);
            }
        }
        Ok(())
    }

    fn too_many_slots(&self, _: usize) -> Misuse {
        Misuse("too many slots")
    }

    fn root(&mut self, target: Pos) -> Result<(), Misuse> {
        self.roots.push(target.word_index());
        Ok(())
    }

    fn finalizable(&mut self, target: Pos) -> Result<(), Misuse> {
        self.finalizable.push(target.word_index());
        Ok(())
    }

    fn type_name(&mut self, _: &str) -> Result<u32, Misuse> {
        self.types += 1;
        Ok(self.types - 1)
    }

    fn type_kind(&mut self, type_id: u32, kind: TypeKind) -> Result<(), Misuse> {
        self.kinds.push((type_id, kind));
        Ok(())
    }

    fn next_pos(&self) -> Pos {
        Pos::from_word_index(self.next.max(1)).expect("in range")
    }
}

impl CheckSink {
    /// The arena words emitted so far (word 0 included).
    pub fn arena_words(&self) -> u64 {
        self.next.max(1)
    }

    /// Asserts that the emitted heap is well formed.
    pub fn check(&self) {
        assert_eq!(self.pending, 0, "the last object lacks slots");
        assert!(
            !self.starts.is_empty(),
            "an import with no objects succeeded"
        );
        for t in self
            .targets
            .iter()
            .chain(&self.roots)
            .chain(&self.finalizable)
        {
            assert!(
                self.starts.binary_search(t).is_ok(),
                "a slot, root or finalizable entry names no object"
            );
        }
        if let Some(max) = self.max_type {
            assert!(max < self.types, "type id {max} has no name");
        }
        for &(t, kind) in &self.kinds {
            assert!(t < self.types, "type id {t} has a kind but no name");
            assert!(
                matches!(kind, TypeKind::Plain | TypeKind::WeakSlots)
                    || !self.weak_types.contains(&t),
                "per-slot weak references in a type of kind {kind}"
            );
        }
    }
}
