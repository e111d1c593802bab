//! What a language runtime implements, or names, to use stealmark as its
//! mark phase. This crate has no dependencies, so a runtime's binding
//! depends on it and nothing else.
//!
//! - [`ObjRef`]: the engine's name for an object, a non-null aligned word
//!   (an address, or [`ObjRef::from_index`] for numbered objects).
//! - [`ObjectModel`]: how the engine reads a heap: sizes, types and
//!   reference slots, each slot with its [`SlotKind`] (strong, strong to a
//!   leaf, soft, weak, phantom, or an ephemeron's value).
//! - [`MarkStore`]: where mark bits live; [`MarkBitmap`] is the default side
//!   bitmap over the dense indices of [`MarkIndex`], and a runtime with mark
//!   bits in object headers implements the trait over them.
//! - [`RootSource`]: roots (and the registered finalizable objects) in chunks
//!   that the GC workers claim in parallel.
//! - [`SoftRefs`] and [`SoftRefPolicy`]: what happens to soft references.
//! - [`WeakRef`]: a non-strong slot, as the engine reports it when the runtime
//!   must clear it.
//! - [`prefetch_read`]: the cache hint the default [`ObjectModel::prefetch`]
//!   issues.
//!
//! # Implementing the object model
//!
//! A binding implements [`ObjectModel`] for a type that can see the heap
//! (a handle to the runtime's spaces, or a borrowed arena). The engine is
//! generic over it and monomorphised, so every method inlines into the mark
//! loop; keep them small and branch-free where you can.
//!
//! ```
//! use std::ops::Range;
//! use stealmark_model::{MarkBitmap, MarkIndex, MarkStore, ObjRef, ObjectModel, SlotKind};
//!
//! /// Objects numbered `0..n`; object `i` points to `2i+1` and `2i+2`.
//! struct Tree(usize);
//!
//! impl ObjectModel for Tree {
//!     fn size_bytes(&self, _: ObjRef) -> usize { 24 }
//!     fn slot_count(&self, _: ObjRef) -> usize { 2 }
//!     fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(&self, o: ObjRef, s: Range<usize>, mut v: V) {
//!         for k in s.start.min(2)..s.end.min(2) {
//!             let child = 2 * o.index() + 1 + k;
//!             if child < self.0 {
//!                 v(k, ObjRef::from_index(child), SlotKind::Strong);
//!             }
//!         }
//!     }
//!     fn prefetch(&self, _: ObjRef) {} // the words are not addresses
//! }
//!
//! /// A side bitmap needs dense indices; header mark bits would not.
//! impl MarkIndex for Tree {
//!     fn mark_index_bound(&self) -> usize { self.0 }
//!     fn mark_index(&self, o: ObjRef) -> usize { o.index() }
//! }
//!
//! let heap = Tree(7);
//! let bits = MarkBitmap::new(heap.mark_index_bound());
//! assert!(bits.try_mark(&heap, ObjRef::from_index(3)));
//! assert!(bits.is_marked(&heap, ObjRef::from_index(3)));
//! let mut children = Vec::new();
//! heap.scan_slots(ObjRef::from_index(1), 0..2, |_, t, _| children.push(t.index()));
//! assert_eq!(children, vec![3, 4]);
//! ```

mod bitmap;
mod mark_store;
mod obj_ref;
mod object_model;
mod prefetch;
mod root_source;
mod slot_kind;
mod soft_refs;
mod weak_ref;

pub use bitmap::MarkBitmap;
pub use mark_store::{MarkStore, DEFAULT_PREFETCH_DISTANCE};
pub use obj_ref::ObjRef;
pub use object_model::{MarkIndex, ObjectModel};
pub use prefetch::{prefetch_object, prefetch_read};
pub use root_source::{RootSource, ROOT_CHUNK};
pub use slot_kind::SlotKind;
pub use soft_refs::{SoftRefPolicy, SoftRefs};
pub use weak_ref::WeakRef;
