//! [`HeapSink`]: where a producer (a generator, an importer) emits a heap,
//! one object at a time, in arena order.
//!
//! Both the in-memory [`HeapBuilder`](crate::HeapBuilder) and the streaming
//! [`SnapshotWriter`](crate::SnapshotWriter) are sinks, so a producer is
//! written once and can build a heap in memory or stream it to a file.
//!
//! Objects are laid out back to back from [`Pos::FIRST`], so a producer knows
//! every object's position before emitting it: the object after one at `p`
//! with header `h` is at `p + h.size_words(layout)` words. A producer picks
//! the [`ArenaFormat`] (with [`HeapSink::set_format`], before the first
//! object; the default is [`ArenaFormat::WIDE`]), computes positions in a
//! first pass ([`Layout`] helps), then emits objects whose slots refer to
//! positions before or after them.

use crate::arena::{ArenaFormat, ArenaLayout, ObjectHeader, Pos, Slot, TypeKind};

/// A destination for a heap emitted object by object, in position order.
pub trait HeapSink {
    /// The error the sink reports.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Chooses the arena's encoding. Only before the first object (type
    /// names, kinds, roots and finalizable objects may come before); the
    /// default is [`ArenaFormat::WIDE`].
    fn set_format(&mut self, format: ArenaFormat) -> Result<(), Self::Error>;

    /// The arena's encoding.
    fn format(&self) -> ArenaFormat;

    /// Hints how many objects and arena words will follow, so that the sink
    /// can allocate once. Optional; the default does nothing.
    fn reserve(&mut self, objects: u64, arena_words: u64) {
        let _ = (objects, arena_words);
    }

    /// Starts the next object and returns its position. Exactly
    /// `header.slots` slots must follow through [`HeapSink::slots`] before the
    /// next object starts or the sink finishes; the payload is zero-filled.
    /// The header has a runtime size if and only if the format records them
    /// (build it with [`ObjectHeader::sized`] then).
    fn begin_object(&mut self, header: ObjectHeader) -> Result<Pos, Self::Error>;

    /// Appends slots to the object begun last.
    fn slots(&mut self, slots: &[Slot]) -> Result<(), Self::Error>;

    /// Emits a whole object of a format without runtime sizes: its header
    /// and all of its slots.
    fn object(
        &mut self,
        type_id: u32,
        slots: &[Slot],
        payload_words: u32,
    ) -> Result<Pos, Self::Error> {
        let count = u32::try_from(slots.len()).map_err(|_| self.too_many_slots(slots.len()))?;
        let pos = self.begin_object(ObjectHeader::new(type_id, count, payload_words))?;
        self.slots(slots)?;
        Ok(pos)
    }

    /// The error for an object with more than `u32::MAX` slots.
    fn too_many_slots(&self, count: usize) -> Self::Error;

    /// Adds a root: a strong reference from outside the heap. Roots may be
    /// added at any time, also before their object is emitted.
    fn root(&mut self, target: Pos) -> Result<(), Self::Error>;

    /// Registers a finalizable object (duplicates allowed), at any time.
    fn finalizable(&mut self, target: Pos) -> Result<(), Self::Error>;

    /// Adds a name to the type-name table and returns its type id (names are
    /// numbered from 0 in the order they are added). Its kind is plain until
    /// [`HeapSink::type_kind`] says otherwise.
    fn type_name(&mut self, name: &str) -> Result<u32, Self::Error>;

    /// Sets the kind of type `type_id`, at any time before the sink
    /// finishes. A plain type whose objects receive per-slot weak slots
    /// ([`Slot::weak`]) becomes [`TypeKind::WeakSlots`] by itself.
    fn type_kind(&mut self, type_id: u32, kind: TypeKind) -> Result<(), Self::Error>;

    /// The position the next object will get.
    fn next_pos(&self) -> Pos;
}

/// Assigns positions to objects in arena order, for a producer's first pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    next: u64,
    objects: u64,
    layout: ArenaLayout,
}

impl Default for Layout {
    fn default() -> Self {
        Layout::new()
    }
}

impl Layout {
    /// An empty wide arena: the first object will be at [`Pos::FIRST`].
    pub const fn new() -> Layout {
        Layout::with_layout(ArenaLayout::Wide)
    }

    /// An empty arena in `layout`.
    pub const fn with_layout(layout: ArenaLayout) -> Layout {
        Layout {
            next: 1,
            objects: 0,
            layout,
        }
    }

    /// Places an object with `slots` slots and `payload_words` payload words,
    /// returning its position.
    ///
    /// # Panics
    ///
    /// If the arena exceeds `u64::MAX / 8` words (far beyond any machine).
    #[inline]
    pub fn push(&mut self, slots: u32, payload_words: u32) -> Pos {
        self.push_header(ObjectHeader::new(0, slots, payload_words))
    }

    /// Places an object with header `header`, returning its position.
    ///
    /// # Panics
    ///
    /// As [`Layout::push`].
    #[inline]
    pub fn push_header(&mut self, header: ObjectHeader) -> Pos {
        let pos = Pos::from_word_index(self.next).expect("arena size overflows u64");
        self.next += header.size_words(self.layout);
        self.objects += 1;
        pos
    }

    /// The arena size in words so far (the reserved word included).
    pub const fn arena_words(&self) -> u64 {
        self.next
    }

    /// The number of objects placed.
    pub const fn objects(&self) -> u64 {
        self.objects
    }
}
