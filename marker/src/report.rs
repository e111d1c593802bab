//! What a collection gives back: [`Marking`] (side-bitmap form) and
//! [`Report`] (any mark store), borrowed from the marker until its next
//! collection.

use stealmark_model::{MarkBitmap, MarkIndex, ObjRef, ObjectModel, WeakRef};

use crate::stats::{EphemeronStats, MarkStats, StepKind, TypeCount};

/// The result of [`Marker::mark`](crate::Marker::mark) and
/// [`Marker::collect`](crate::Marker::collect): the marker's side bitmap and
/// the collection's records; [`Marking::report`] gives the runtime
/// contract's outputs (slots to clear, objects to finalize, live bytes).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Marking<'m> {
    /// One bit per mark index, set for every object marked.
    pub bitmap: &'m MarkBitmap,
    /// The collection's statistics and per-worker records.
    pub stats: &'m MarkStats,
}

impl<'m> Marking<'m> {
    /// Whether `obj` was marked.
    pub fn is_marked<H: ObjectModel + MarkIndex>(&self, heap: &H, obj: ObjRef) -> bool {
        self.bitmap.contains(heap.mark_index(obj))
    }

    /// Every soft, weak, phantom and ephemeron slot found in a marked
    /// object.
    pub fn weak_refs(&self) -> impl Iterator<Item = &'m WeakRef> + 'm {
        self.report().weak_refs()
    }

    /// The runtime contract's outputs.
    pub fn report(&self) -> Report<'m> {
        Report { stats: self.stats }
    }
}

/// The runtime contract's outputs of a collection, whatever the mark store:
/// what [`Marker::collect_with`](crate::Marker::collect_with) returns, and
/// [`Marking::report`] for the side-bitmap form.
///
/// Lists come per worker as well as flattened: worker `i`'s list is what
/// worker `i` found, so a runtime can hand each list to one of its own
/// threads (to clear fields, or queue finalizers) without copying.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Report<'m> {
    /// The collection's statistics and per-worker records.
    pub stats: &'m MarkStats,
}

impl<'m> Report<'m> {
    /// The slots to clear, every worker's, in no particular order: soft and
    /// weak slots whose referent is dead before finalization, phantom slots
    /// whose referent is dead after it, ephemeron slots whose key is dead.
    /// `holder`'s field number `slot` is the one to clear.
    pub fn cleared(&self) -> impl Iterator<Item = &'m WeakRef> + 'm {
        self.cleared_by_worker().flat_map(ClearedSlots::into_iter)
    }

    /// The slots to clear, one list per worker.
    pub fn cleared_by_worker(&self) -> impl ExactSizeIterator<Item = ClearedSlots<'m>> + 'm {
        self.stats.workers.iter().map(|r| ClearedSlots {
            refs: &r.weak_refs,
            at: &r.cleared,
        })
    }

    /// The registered finalizable objects that were unreachable (each once,
    /// in no particular order). They have been marked, with everything they
    /// reach, so that their finalizers can run; the runtime should
    /// unregister them.
    pub fn to_finalize(&self) -> impl Iterator<Item = ObjRef> + 'm {
        self.stats
            .workers
            .iter()
            .flat_map(|r| r.to_finalize.iter().copied())
    }

    /// The objects to finalize, one list per worker.
    pub fn to_finalize_by_worker(&self) -> impl ExactSizeIterator<Item = &'m [ObjRef]> + 'm {
        self.stats.workers.iter().map(|r| r.to_finalize.as_slice())
    }

    /// Every soft, weak, phantom and ephemeron slot found in a marked object
    /// (judged or not).
    pub fn weak_refs(&self) -> impl Iterator<Item = &'m WeakRef> + 'm {
        self.stats.workers.iter().flat_map(|r| r.weak_refs.iter())
    }

    /// Objects marked.
    pub fn live_objects(&self) -> u64 {
        self.stats.live_objects
    }

    /// Bytes of the objects marked (their
    /// [`size_bytes`](ObjectModel::size_bytes)).
    pub fn live_bytes(&self) -> u64 {
        self.stats.live_bytes
    }

    /// The [`footprint_bytes`](ObjectModel::footprint_bytes) of the objects
    /// marked: [`Report::live_bytes`] unless the model stores objects in
    /// another size than the runtime's (a heap snapshot with runtime sizes).
    pub fn live_footprint_bytes(&self) -> u64 {
        self.stats.live_footprint_bytes
    }

    /// Per type id, the objects marked and their bytes (empty when the heap
    /// reports no types, [`ObjectModel::type_count`]).
    pub fn live_by_type(&self) -> &'m [TypeCount] {
        &self.stats.live_by_type
    }

    /// Ephemeron figures: entries found, registered in the key index, live
    /// at the end, and the rounds that used the index.
    pub fn ephemerons(&self) -> EphemeronStats {
        let t = self.stats.total();
        EphemeronStats {
            pairs: t.ephemerons,
            registered: t.ephemerons_registered,
            released: t.ephemerons_released,
            values_traced: t.ephemeron_values_traced,
            rounds: self
                .stats
                .steps
                .iter()
                .filter(|s| s.kind == StepKind::Resolve)
                .count() as u64,
        }
    }
}

/// One worker's slots to clear ([`Report::cleared_by_worker`]): its
/// records of them, read in place (the judging notes which of the worker's
/// records are cleared and copies none).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ClearedSlots<'m> {
    /// Every non-strong slot the worker found.
    refs: &'m [WeakRef],
    /// The positions in `refs` of those to clear.
    at: &'m [usize],
}

impl<'m> ClearedSlots<'m> {
    /// How many slots to clear.
    pub fn len(&self) -> usize {
        self.at.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.at.is_empty()
    }

    /// The slots to clear, in no particular order.
    pub fn iter(&self) -> ClearedIter<'m> {
        ClearedIter {
            refs: self.refs,
            at: self.at.iter(),
        }
    }
}

impl<'m> IntoIterator for ClearedSlots<'m> {
    type Item = &'m WeakRef;
    type IntoIter = ClearedIter<'m>;

    fn into_iter(self) -> ClearedIter<'m> {
        self.iter()
    }
}

/// The iterator of [`ClearedSlots`].
#[derive(Debug, Clone)]
pub struct ClearedIter<'m> {
    refs: &'m [WeakRef],
    at: std::slice::Iter<'m, usize>,
}

impl<'m> Iterator for ClearedIter<'m> {
    type Item = &'m WeakRef;

    #[inline]
    fn next(&mut self) -> Option<&'m WeakRef> {
        self.at.next().map(|&i| &self.refs[i])
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.at.size_hint()
    }

    /// Skips `n` slots in constant time (a binding that copies the list out
    /// in pages starts each page this way).
    #[inline]
    fn nth(&mut self, n: usize) -> Option<&'m WeakRef> {
        self.at.nth(n).map(|&i| &self.refs[i])
    }
}

impl ExactSizeIterator for ClearedIter<'_> {}
