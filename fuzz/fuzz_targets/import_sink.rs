//! A sink for the importer fuzz targets: it allocates no payload (a fuzzed
//! size can claim gigabytes) and checks that an import that succeeds emitted
//! a well-formed heap: every slot and root names an emitted object, every
//! object got exactly its slots, every type id has a name.

use stealmark_heap::{HeapSink, ObjectHeader, Pos, Slot};

#[derive(Default)]
pub struct CheckSink {
    /// Word index of the next object (word 0 is reserved).
    next: u64,
    starts: Vec<u64>,
    targets: Vec<u64>,
    roots: Vec<u64>,
    max_type: Option<u32>,
    types: u32,
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

    fn begin_object(&mut self, h: ObjectHeader) -> Result<Pos, Misuse> {
        assert_eq!(
            self.pending, 0,
            "an object started before the last one got its slots"
        );
        let start = self.next.max(1);
        let pos = Pos::from_word_index(start).ok_or(Misuse("arena overflow"))?;
        self.next = start
            .checked_add(h.size_words())
            .ok_or(Misuse("arena overflow"))?;
        self.starts.push(start);
        self.pending = u64::from(h.slots);
        self.max_type = self.max_type.max(Some(h.type_id));
        Ok(pos)
    }

    fn slots(&mut self, slots: &[Slot]) -> Result<(), Misuse> {
        self.pending = self
            .pending
            .checked_sub(slots.len() as u64)
            .expect("more slots than announced");
        for s in slots {
            let t = s.target().expect("importers emit no null slots");
            self.targets.push(t.word_index());
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

    fn type_name(&mut self, _: &str) -> Result<u32, Misuse> {
        self.types += 1;
        Ok(self.types - 1)
    }

    fn next_pos(&self) -> Pos {
        Pos::from_word_index(self.next.max(1)).expect("in range")
    }
}

impl CheckSink {
    /// Asserts that the emitted heap is well formed.
    pub fn check(&self) {
        assert_eq!(self.pending, 0, "the last object lacks slots");
        assert!(
            !self.starts.is_empty(),
            "an import with no objects succeeded"
        );
        for t in self.targets.iter().chain(&self.roots) {
            assert!(
                self.starts.binary_search(t).is_ok(),
                "a slot or root names no object"
            );
        }
        if let Some(max) = self.max_type {
            assert!(max < self.types, "type id {max} has no name");
        }
    }
}
