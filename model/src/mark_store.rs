//! [`MarkStore`]: where mark bits live.

use crate::obj_ref::ObjRef;
use crate::object_model::ObjectModel;

/// Mark bits for the objects of a heap of type `H`.
///
/// The engine calls [`MarkStore::try_mark`] once per strong reference it
/// finds; exactly one call per reachable object returns `true` during a mark
/// phase, and that caller owns scanning the object. A runtime that keeps mark
/// bits in object headers implements this trait over its headers (see
/// `examples/embed_runtime.rs`); everyone else uses
/// [`MarkBitmap`](crate::MarkBitmap).
pub trait MarkStore<H: ObjectModel + ?Sized>: Sync {
    /// Sets `obj`'s mark bit. Returns `true` if this call set it, `false` if
    /// it was already set. Must be atomic: two concurrent calls for the same
    /// object return `true` at most once between them.
    fn try_mark(&self, heap: &H, obj: ObjRef) -> bool;

    /// Whether `obj` is marked.
    fn is_marked(&self, heap: &H, obj: ObjRef) -> bool;

    /// Hints that `try_mark(heap, obj)` comes soon. The default prefetches
    /// the object (right for mark bits in headers); side bitmaps prefetch
    /// their word instead.
    #[inline]
    fn prefetch(&self, heap: &H, obj: ObjRef) {
        heap.prefetch(obj);
    }
}
