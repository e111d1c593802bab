//! Counting live objects (objects, bytes, per type) when they are scanned,
//! in batches out of the mark loop ([`Worker::account`]), exactly once even
//! when a deque delivers an object to two workers.
//!
//! With such a deque (`idempotent`) and more than one worker (`copies`),
//! every pop from the deque returns a ticket (`stealmark_deques::copies`);
//! the few marked ones (objects that came in through a theft, or lay in
//! the deque when a theft was announced) are noted by word. Before
//! counting a batch, the worker asks its deque for a horizon (one fence):
//! an object that may have a twin is counted only through a claim in a set
//! shared by all workers (`Engine::counted`), every other one directly, as
//! the only copy there ever was. Nothing is carried per object: claims
//! come with thefts, and are rare.

use stealmark_deques::copies::Ticket;
use stealmark_deques::{Owner, WorkDeque};
use stealmark_model::{MarkStore, ObjRef, ObjectModel};

use super::mark_loop::obj_ref;
use super::Worker;
use crate::config::MarkerConfig;
use crate::fifo::{Batch, ACCOUNT_BATCH};

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'_, '_, D, H, S> {
    /// Whether scanned objects carry their tickets to the count (`copies`;
    /// never with an exactly-once kind, where this folds to `false`).
    #[inline(always)]
    pub(super) fn copies(&self) -> bool {
        !D::KIND.exactly_once() && self.copies
    }

    /// With `copies`: notes a word popped from the deque whose ticket is
    /// marked (its object may have another copy whatever the horizon).
    #[inline(always)]
    pub(super) fn note_ticket(&mut self, w: usize, ticket: Ticket) {
        if self.copies() && ticket.marked() {
            self.note_marked(w);
        }
    }

    /// The rare part of [`Worker::note_ticket`]. A full list (it holds at
    /// most the FIFO and a batch, unless an increment left some) makes the
    /// next two counts claim everything instead.
    #[cold]
    #[inline(never)]
    fn note_marked(&mut self, w: usize) {
        if !self.marked_pops.push(w) {
            self.claim_all = 2;
        }
    }

    /// Puts back a prefetched word that this step will not scan (an
    /// increment out of budget): onto the private stack, or, with
    /// `copies`, back onto the deque as a copy (it may have come from the
    /// deque with a twin), so that its count is claimed.
    pub(super) fn return_unscanned(&mut self, w: usize) {
        if self.copies() {
            self.push_copy(w);
        } else {
            self.slot.private.push(w);
        }
    }

    /// Counts the objects not yet counted live: objects, bytes and per
    /// type. Out of the mark loop, every [`ACCOUNT_BATCH`] objects: the loop
    /// is bound by the cache misses it can keep in flight, and every
    /// instruction it carries per object takes room from them (done per
    /// object, this cost a fifth of the one-worker pause); here the headers
    /// were read moments ago and are still cached, and the misses the FIFOs
    /// prefetched complete meanwhile.
    ///
    /// These are the objects scanned since the last call. With `copies`
    /// ([`Worker::counts_copies`]), those that another scan may have
    /// counted are claimed first ([`Worker::drop_counted_copies`]); every
    /// scan still counts in `objects_scanned`, so that scans beyond marks
    /// remain the duplicate scans.
    #[inline(never)]
    pub(super) fn account(&mut self) {
        let scans = self.scanned.len() as u64;
        if self.copies() {
            self.drop_counted_copies();
        }
        let heap = self.phase.heap;
        let rec = &mut self.slot.record;
        let words: &[usize] = if D::KIND.exactly_once() || self.count_scans {
            rec.stats.objects_scanned += scans;
            self.scanned.as_slice()
        } else {
            &self.slot.uncounted
        };
        let mut bytes = 0;
        let mut footprint = 0;
        if self.typed {
            for &w in words {
                let obj = obj_ref(w);
                let size = heap.size_bytes(obj) as u64;
                let t = &mut rec.live_by_type[heap.type_id(obj)];
                t.objects += 1;
                t.bytes += size;
                bytes += size;
                footprint += heap.footprint_bytes(obj) as u64;
            }
        } else {
            for &w in words {
                let obj = obj_ref(w);
                bytes += heap.size_bytes(obj) as u64;
                footprint += heap.footprint_bytes(obj) as u64;
            }
        }
        rec.stats.live_bytes += bytes;
        rec.stats.live_footprint_bytes += footprint;
        self.scanned.clear();
        self.slot.uncounted.clear();
    }

    /// With `copies`: takes the deque's horizon (one fence), and drops from
    /// `scanned` the objects that need a claim and whose claim
    /// (`Engine::counted`) another scan won.
    ///
    /// Which need one: if the horizon saw a new theft announced, every
    /// object popped since the previous horizon whose index lies below the
    /// announced end; those are in this batch or, still in the prefetch
    /// FIFO, in the next one (the FIFO holds fewer words than a batch), so
    /// both batches are claimed whole (`claim_all`). Otherwise only the
    /// objects popped with a marked ticket (`marked_pops`). Every other
    /// object is the only copy there ever was. A claim of an object that
    /// has no twin always wins, so claiming more than needed costs time
    /// only; each copy is counted in one batch, so no copy claims twice.
    #[inline(always)]
    fn drop_counted_copies(&mut self) {
        if !self.slot.owner.horizon().is_none() {
            self.claim_all = 2;
        }
        if self.claim_all != 0 || self.marked_pops.len != 0 {
            self.claim_copies();
        }
    }

    /// The rare part of [`Worker::drop_counted_copies`]: claims the objects
    /// that need it (all, or the marked ones, each word in `marked_pops`
    /// matching one scan of it), and keeps in `scanned` the ones claimed
    /// here and those that need no claim.
    #[cold]
    #[inline(never)]
    fn claim_copies(&mut self) {
        let all = self.claim_all != 0;
        self.claim_all = self.claim_all.saturating_sub(1);
        let counted = &self.phase.engine.counted;
        let mut kept = Batch::new();
        for &w in self.scanned.as_slice() {
            let marked = self.marked_pops.take(w);
            if !(all || marked) || counted.claim(obj_ref(w)) {
                kept.push(w);
            }
        }
        self.scanned = kept;
    }

    /// When live objects are counted as they are marked (`count_marks`):
    /// queues `obj`, just marked by this worker, to be counted live, and
    /// prefetches its header (the count reads it a few dozen marks later;
    /// the scan will need it too).
    #[inline(always)]
    pub(super) fn marked(heap: &H, uncounted: &mut Vec<usize>, count_marks: bool, obj: ObjRef) {
        if !D::KIND.exactly_once() && count_marks {
            heap.prefetch(obj);
            uncounted.push(obj.word());
        }
    }
}

/// Room for the words a worker popped with marked tickets and has not yet
/// counted: at most the prefetch FIFO and a batch, and a few left by an
/// increment.
const MARKED_POPS: usize = MarkerConfig::MAX_PREFETCH + ACCOUNT_BATCH + 16;

/// The words a worker popped with marked tickets and has not yet counted.
pub(super) struct MarkedPops {
    words: [usize; MARKED_POPS],
    pub(super) len: usize,
}

impl Default for MarkedPops {
    fn default() -> MarkedPops {
        MarkedPops {
            words: [0; MARKED_POPS],
            len: 0,
        }
    }
}

impl MarkedPops {
    /// Notes `w`; `false` (noting nothing) when full.
    fn push(&mut self, w: usize) -> bool {
        if self.len == self.words.len() {
            return false;
        }
        self.words[self.len] = w;
        self.len += 1;
        true
    }

    /// Removes one note of `w`; whether there was one.
    fn take(&mut self, w: usize) -> bool {
        match self.words[..self.len].iter().position(|&x| x == w) {
            Some(i) => {
                self.len -= 1;
                self.words[i] = self.words[self.len];
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::MarkedPops;

    #[test]
    fn marked_pops_match_each_note_once_and_refuse_when_full() {
        let mut m = MarkedPops::default();
        assert!(m.push(8) && m.push(16) && m.push(8));
        assert!(m.take(8) && m.take(8));
        assert!(!m.take(8));
        assert!(m.take(16) && m.len == 0);
        for i in 0..super::MARKED_POPS {
            assert!(m.push(i));
        }
        assert!(!m.push(0));
    }
}
