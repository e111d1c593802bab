//! [`MarkStore`]: where mark bits live.

use crate::obj_ref::ObjRef;
use crate::object_model::ObjectModel;

/// The default [`MarkStore::prefetch_distance`]: 32 targets, for marks in
/// the objects.
pub const DEFAULT_PREFETCH_DISTANCE: usize = 32;

/// Mark bits for the objects of a heap of type `H`.
///
/// The engine calls [`MarkStore::try_mark`] once per strong reference it
/// finds; exactly one call per reachable object returns `true` during a mark
/// phase, and that caller owns scanning the object. A runtime that keeps mark
/// bits in object headers implements this trait over its headers, with an
/// atomic read-modify-write on the header word; everyone else uses
/// [`MarkBitmap`](crate::MarkBitmap).
pub trait MarkStore<H: ObjectModel + ?Sized>: Sync {
    /// Sets `obj`'s mark bit. Returns `true` if this call set it, `false` if
    /// it was already set. Must be atomic: two concurrent calls for the same
    /// object return `true` at most once between them.
    fn try_mark(&self, heap: &H, obj: ObjRef) -> bool;

    /// [`MarkStore::try_mark`] for a caller that is the only thread marking
    /// in this store: it may set the bit with a plain load and store (no
    /// atomic read-modify-write, no `lock` prefix), which is a good part of
    /// the cost of marking a cold object.
    ///
    /// When the engine calls it: only in a stop-the-world collection
    /// (stealmark-marker's `Marker::collect`, `collect_with`, `mark` and
    /// `mark_with`) whose marker has exactly one worker, from that
    /// worker, for every mark of the collection (roots, the mark loop, the
    /// contract's steps). Never in a mark cycle (incremental or concurrent
    /// marking, and its remark), where the mutators' write barriers mark
    /// too, and never with more than one worker. (The reference markers of
    /// `stealmark_marker::sequential` mark their own bitmap the same way,
    /// so that comparisons with the engine stay fair.)
    ///
    /// What it may assume: no other thread reads or writes the marks of
    /// this store until the collection returns (the runtime has stopped
    /// its threads, and marks nothing itself meanwhile). The engine's
    /// [`MarkStore::is_marked`] calls come from the same thread, so they
    /// see every earlier mark in program order.
    ///
    /// It must still be memory-safe if that assumption is broken (a store
    /// shared with another marking thread): use atomics (relaxed loads and
    /// stores compile to plain instructions), so that the worst outcome is
    /// a lost mark, never undefined behaviour. The default calls
    /// [`MarkStore::try_mark`], which is always correct; override it only
    /// where the unshared form is cheaper ([`MarkBitmap`](crate::MarkBitmap)
    /// does). Storing unconditionally (a marked word or byte written back
    /// as it was) lets the engine's one-worker loop, which uses the answer
    /// as a number, run without a branch on it.
    #[inline]
    fn try_mark_unshared(&self, heap: &H, obj: ObjRef) -> bool {
        self.try_mark(heap, obj)
    }

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

    /// How far ahead of its test the engine prefetches a target's mark
    /// ([`MarkStore::prefetch`]), counted in strong targets: the engine
    /// keeps this many found targets waiting, their marks on the way, and
    /// marks (and pushes) the oldest as each new one comes in. The engine
    /// uses the largest power of two not above it, from 1 to 64, and asks
    /// once per worker and collection.
    ///
    /// The default, 32, is for marks in the objects (a header byte or
    /// word): the test of each target not touched for a while misses in the
    /// cache, and a long delay gives the miss time to resolve (with Lua's
    /// colour bytes, a full mark of 3 million objects took 25% less time at
    /// 32 than at 8). A dense side table hits in the cache far more often,
    /// and there each delayed slot only holds back its target's push:
    /// [`MarkBitmap`](crate::MarkBitmap) uses 8.
    #[inline]
    fn prefetch_distance(&self) -> usize {
        DEFAULT_PREFETCH_DISTANCE
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
