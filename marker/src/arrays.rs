//! Large arrays, scanned in chunks that any worker can claim.
//!
//! An object with more than `2 × array_chunk` slots gets a descriptor here:
//! the object, its chunk count and an atomic claim counter. The mark stack
//! then carries *tokens* (the descriptor's index, as a token word of the
//! worker's mark stack) instead of the object. A worker holding a token claims
//! the next chunk with `fetch_add`, pushes the token back while chunks
//! remain (plus one extra copy, up to one copy per worker, so that idle
//! workers find copies to steal), and scans its chunk. Every live copy holds
//! one reference; the descriptor returns to the free list when the last copy
//! is dropped.
//!
//! A deque that may deliver an item twice (`idempotent`) hands out copies
//! that no reference counts: such a copy could drop the last reference of
//! another, or claim a chunk of the next array to reuse the descriptor with
//! the object of the previous one (a chunk never scanned). So with such a
//! deque the table does not recycle descriptors during a collection
//! (`recycle` off): a copy only ever claims chunks of its own array, each
//! chunk once through the counter, and a copy delivered twice claims one
//! more chunk or finds none left, which is harmless. The cost is that at
//! most `capacity` arrays per collection are scanned in chunks; later ones
//! are scanned whole.
//!
//! The table has a fixed capacity, allocated once; when it is exhausted a
//! worker scans the array whole, which is correct but not parallel.

use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;
use stealmark_model::ObjRef;

use crate::zeroed::{zeroed, Zeroable};

/// One array's descriptor. `repr(C)` with only atomic words, so that a
/// table of them is allocated zeroed (`ArrayTable::new`).
#[repr(C)]
struct Descriptor {
    /// The array's word (set before the first token is published).
    obj: AtomicUsize,
    /// The number of chunks.
    chunks: AtomicUsize,
    /// The next chunk to claim.
    next: AtomicUsize,
    /// Live token copies.
    refs: AtomicUsize,
}

// SAFETY: `repr(C)` with four `AtomicUsize` fields, and `AtomicUsize` has
// the size, alignment and bit validity of `usize` (its documentation
// guarantees it): all zero bytes are a descriptor of four zeros.
unsafe impl Zeroable for Descriptor {}

/// What a worker claimed from a token.
pub(crate) struct Claim {
    /// The array.
    pub(crate) obj: ObjRef,
    /// The chunk index claimed.
    pub(crate) chunk: usize,
    /// Token copies the worker must push back (0, 1 or 2).
    pub(crate) push_back: usize,
}

/// The descriptors that `open` may hand out: those returned since the last
/// reset, then every index from `fresh` up (none of them opened since the
/// reset). A reset is then two stores, whatever the table's capacity.
struct Free {
    /// Descriptors freed by their last copy, most recent last.
    returned: Vec<usize>,
    /// The lowest index not opened since the last reset.
    fresh: usize,
}

/// The descriptor table of one marker.
pub(crate) struct ArrayTable {
    descs: Box<[Descriptor]>,
    free: Mutex<Free>,
    /// The most token copies of one array (the number of workers).
    fanout: usize,
    /// Whether a descriptor returns to the free list with its last copy
    /// (copies are counted exactly), or only at the next reset.
    recycle: bool,
}

impl ArrayTable {
    /// A table of `capacity` descriptors for `workers` workers; `recycle`
    /// when every token copy is delivered exactly once.
    pub(crate) fn new(capacity: usize, workers: usize, recycle: bool) -> ArrayTable {
        ArrayTable {
            descs: zeroed(capacity),
            free: Mutex::new(Free {
                returned: Vec::new(),
                fresh: 0,
            }),
            fanout: workers.max(1),
            recycle,
        }
    }

    /// Restores every descriptor to the free list (between phases, when no
    /// token is live), in constant time. Allocates nothing.
    pub(crate) fn reset(&self) {
        let mut free = self.free.lock();
        free.returned.clear();
        free.fresh = 0;
    }

    /// Creates a descriptor for `obj` with `chunks` chunks and returns its
    /// index, for the array's token (holding one reference), or `None` if
    /// the table is full.
    pub(crate) fn open(&self, obj: ObjRef, chunks: usize) -> Option<usize> {
        let index = {
            let mut free = self.free.lock();
            match free.returned.pop() {
                Some(index) => index,
                None if free.fresh < self.descs.len() => {
                    free.fresh += 1;
                    free.fresh - 1
                }
                None => return None,
            }
        };
        let d = &self.descs[index];
        // Relaxed: the descriptor is unshared until its token is pushed on a
        // deque, whose release/acquire publishes these stores; a previous
        // user's accesses are ordered before ours by the free list's mutex.
        d.obj.store(obj.word(), Ordering::Relaxed);
        d.chunks.store(chunks, Ordering::Relaxed);
        d.next.store(0, Ordering::Relaxed);
        d.refs.store(1, Ordering::Relaxed);
        Some(index)
    }

    /// Claims the next chunk for the holder of one copy of the token of
    /// descriptor `index`. On `None` every chunk was already claimed and
    /// the copy has been dropped.
    pub(crate) fn claim(&self, index: usize) -> Option<Claim> {
        let d = &self.descs[index];
        // Relaxed: `open`'s stores reach this worker through the token's
        // push (release) and its pop or steal (acquire) by the deque.
        let obj = d.obj.load(Ordering::Relaxed);
        let chunks = d.chunks.load(Ordering::Relaxed);
        // Relaxed: the counter only hands out distinct chunk indices; the
        // array itself is immutable during marking.
        let chunk = d.next.fetch_add(1, Ordering::Relaxed);
        if chunk >= chunks {
            self.release(index);
            return None;
        }
        let remaining = chunks - chunk - 1;
        let push_back = if remaining == 0 {
            self.release(index);
            0
        } else if remaining >= 2 && d.refs.load(Ordering::Relaxed) < self.fanout {
            // Relaxed: the count only needs to be exact for the free decision,
            // which `release`'s AcqRel handles; this copy keeps it above zero.
            d.refs.fetch_add(1, Ordering::Relaxed);
            2
        } else {
            1
        };
        let Some(obj) = ObjRef::from_word(obj) else {
            unreachable!("an opened descriptor holds its array");
        };
        Some(Claim {
            obj,
            chunk,
            push_back,
        })
    }

    /// Drops one token copy; frees the descriptor with the last one (when
    /// the table recycles).
    fn release(&self, index: usize) {
        if !self.recycle {
            return;
        }
        // AcqRel: the release half orders this holder's reads of the
        // descriptor before its reuse; the acquire half, in the last holder,
        // sees every other holder's release before it frees the slot.
        if self.descs[index].refs.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.free.lock().returned.push(index);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_claimed_once_and_descriptor_recycled() {
        let t = ArrayTable::new(1, 4, true);
        let tok = t.open(ObjRef::from_index(7), 5).unwrap();
        assert!(t.open(ObjRef::from_index(15), 3).is_none(), "capacity 1");
        let mut stack = vec![tok];
        let mut seen = Vec::new();
        while let Some(tok) = stack.pop() {
            if let Some(c) = t.claim(tok) {
                assert_eq!(c.obj, ObjRef::from_index(7));
                seen.push(c.chunk);
                stack.extend(std::iter::repeat_n(tok, c.push_back));
            }
        }
        seen.sort_unstable();
        assert_eq!(seen, vec![0, 1, 2, 3, 4]);
        assert!(
            t.open(ObjRef::from_index(15), 3).is_some(),
            "descriptor freed by the last copy"
        );
    }

    #[test]
    fn a_reset_frees_every_descriptor_and_the_returned_ones_come_first() {
        let t = ArrayTable::new(3, 1, true);
        let opened: Vec<usize> = (0..3).map(|i| t.open(r(i), 1).unwrap()).collect();
        assert_eq!(opened, vec![0, 1, 2]);
        assert!(t.open(r(3), 1).is_none(), "capacity 3");
        // Claiming the only chunk of descriptor 1 drops its last copy.
        assert_eq!(t.claim(1).unwrap().push_back, 0);
        assert_eq!(t.open(r(4), 1), Some(1), "the returned descriptor");
        assert!(t.open(r(5), 1).is_none());
        t.reset();
        let reopened: Vec<usize> = (0..3).map(|i| t.open(r(i), 2).unwrap()).collect();
        assert_eq!(reopened, vec![0, 1, 2]);
        assert!(t.open(r(3), 1).is_none(), "still capacity 3");
        assert_eq!(t.claim(2).unwrap().obj, r(2), "opened afresh");
    }

    fn r(i: usize) -> ObjRef {
        ObjRef::from_index(i)
    }

    #[test]
    fn without_recycling_duplicated_copies_claim_each_chunk_once() {
        let t = ArrayTable::new(1, 4, false);
        let tok = t.open(ObjRef::from_index(7), 5).unwrap();
        // Every copy is delivered twice, as an idempotent deque may.
        let mut stack = vec![tok, tok];
        let mut seen = Vec::new();
        while let Some(tok) = stack.pop() {
            if let Some(c) = t.claim(tok) {
                assert_eq!(c.obj, ObjRef::from_index(7));
                seen.push(c.chunk);
                stack.extend(std::iter::repeat_n(tok, 2 * c.push_back));
            }
        }
        seen.sort_unstable();
        assert_eq!(seen, vec![0, 1, 2, 3, 4]);
        assert!(
            t.open(ObjRef::from_index(15), 3).is_none(),
            "not recycled before the reset"
        );
        t.reset();
        assert!(t.open(ObjRef::from_index(15), 3).is_some());
    }
}
