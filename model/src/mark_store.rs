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
    ///
    /// Must read, with an atomic load, the location that
    /// [`MarkStore::try_mark`] writes with an atomic read-modify-write, so
    /// that sequentially consistent fences order the two: the engine's
    /// ephemeron key index relies on it (a worker that registers an entry
    /// for a key and one that marks the key each fence, then look at what
    /// the other wrote; at least one of them sees it).
    ///
    /// An object the store cannot hold (outside the heap) is a broken
    /// contract: panic with a message that says so, as
    /// [`MarkBitmap`](crate::MarkBitmap) does, rather than answer `false`.
    fn is_marked(&self, heap: &H, obj: ObjRef) -> bool;

    /// Hints that `try_mark(heap, obj)` comes soon. The default prefetches
    /// the object (right for mark bits in headers); side bitmaps prefetch
    /// their word instead.
    #[inline]
    fn prefetch(&self, heap: &H, obj: ObjRef) {
        heap.prefetch(obj);
    }

    /// One past the largest [`MarkStore::dense_index`] of any object, if
    /// this store numbers the objects densely (a side bitmap does; mark
    /// bits in headers need not). The engine then finds ephemeron values
    /// waiting for a key in a side table indexed by the key's number
    /// instead of a hash map. The default: no numbering.
    #[inline]
    fn dense_bound(&self, heap: &H) -> Option<usize> {
        let _ = heap;
        None
    }

    /// `obj`'s number below [`MarkStore::dense_bound`], distinct for
    /// distinct objects; `None` exactly when `dense_bound` is `None`.
    #[inline]
    fn dense_index(&self, heap: &H, obj: ObjRef) -> Option<usize> {
        let _ = (heap, obj);
        None
    }
}
