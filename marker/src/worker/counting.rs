//! Counting live objects (objects, bytes, per type) when they are scanned,
//! in batches out of the mark loop ([`Worker::account`]), exactly once even
//! when a deque delivers an object to two workers.
//!
//! With such a deque (`idempotent`) and more than one worker (`copies`),
//! an object whose deque ticket (`stealmark_deques::copies`) says it may
//! have another copy carries the tag `Word::MAY_COPY` in its word, from
//! its pop through the prefetch FIFO into the batch. Before counting a batch, the
//! worker asks its deque for a horizon (one fence): when it saw a new
//! theft, every word not yet counted is tagged. A tagged object is counted
//! only through a claim in a set shared by all workers (`Engine::counted`),
//! every other one directly, as the only copy there ever was. Claims are
//! rare: they come with thefts.

use stealmark_deques::copies::{Horizon, Ticket};
use stealmark_deques::{Owner, WorkDeque};
use stealmark_model::{MarkStore, ObjectModel};

use super::live::count_batch;
use super::word::Word;
use super::Worker;
use crate::fifo::{Batch, Fifo};

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'_, '_, D, H, S> {
    /// Whether popped objects that may have another copy carry the tag
    /// `Word::MAY_COPY` to the count (`copies`; never with an exactly-once
    /// kind, where this folds to `false`).
    #[inline(always)]
    pub(super) fn copies(&self) -> bool {
        !D::KIND.exactly_once() && self.copies
    }

    /// The word of object `w`, popped with `ticket`, as it enters the
    /// prefetch FIFO: tagged `Word::MAY_COPY` if, with `copies`, the ticket
    /// says another copy may exist. The ticket's index is dropped: a horizon
    /// that saw a new theft tags every word not yet counted
    /// ([`Worker::take_horizon`]), which covers every index it could name.
    #[inline(always)]
    pub(super) fn tag_popped(&self, w: Word, ticket: Ticket) -> Word {
        w.tagged_if(self.copies() & ticket.is_shared())
    }

    /// Puts back a prefetched word that this step will not scan (an
    /// increment out of budget): onto the private stack, unless, with
    /// `copies`, its tag says another copy may exist: then back onto the
    /// deque as a copy, so that its count is claimed. The caller took a
    /// horizon ([`Worker::take_horizon`]) after the word's pop.
    pub(super) fn return_unscanned(&mut self, w: Word) {
        if !D::KIND.exactly_once() && w.may_copy() {
            self.push_copy(w.untagged());
            return;
        }
        self.state.private.push(w.raw());
    }

    /// With `copies`: takes the deque's horizon (one fence) and, when it
    /// saw new thefts, tags `Word::MAY_COPY` every word not yet counted:
    /// those of the objects scanned and not yet counted (`scanned`) and
    /// those still in the prefetch FIFO `fifo`. A word's tag is then the only thing the
    /// count reads.
    ///
    /// Why every word not yet counted: a pop returns an item that a thief
    /// took too only if an owner anchor store at or before the pop
    /// overwrote the theft's CAS; the first horizon whose fence comes after
    /// that store sees the theft's announcement (`IdempotentOwner::horizon`),
    /// but it may not be the horizon before the object's count. An earlier
    /// one may have seen it first (an announcement can be seen before its
    /// CAS lands), and returns nothing new for it later. If that earlier
    /// horizon came before the pop, it raised the deque's `stolen_end` and
    /// the pop's ticket was marked stolen (the word tagged); if it came
    /// after the pop, the word was waiting here (in the FIFO or the batch),
    /// and is tagged now. (Tagging only the batch missed the FIFO's words:
    /// the oracle matrix's double count of idem5.) The horizon names the
    /// highest announced end, and only indices below it may share; tagging
    /// every word instead claims a few more objects per theft seen and
    /// keeps no index per object. A word is nowhere else between its pop
    /// and its count: `process_object` moves it from the FIFO to the batch,
    /// with no horizon in between.
    ///
    /// Orderings: none of its own. It relies on the deque's pairs: the
    /// thief's SeqCst fence before its CAS with the owner's fence in
    /// `horizon` (the theft is seen after an overwriting pop), and the
    /// thief's release increment of the announcement count with the
    /// owner's acquire load of it (a horizon that sees the count also sees
    /// the announced end, and the thief's slot reads happen before any
    /// later push into those slots, so a theft seen before a pop covers
    /// only items that `stolen_end` marks).
    #[inline(always)]
    pub(super) fn take_horizon(&mut self, fifo: &mut Fifo) {
        if self.state.owner.horizon() != Horizon::NONE {
            self.tag_uncounted(fifo);
        }
    }

    /// The rare part of [`Worker::take_horizon`] (once per theft seen).
    #[cold]
    #[inline(never)]
    fn tag_uncounted(&mut self, fifo: &mut Fifo) {
        for w in self.scanned.as_mut_slice() {
            *w = Word::from_raw(*w).tagged().raw();
        }
        fifo.rewrite(|w| Word::from_raw(w).tagged().raw());
    }

    /// Counts the objects not yet counted live: objects, bytes and per
    /// type. Out of the mark loop, every [`ACCOUNT_BATCH`](crate::fifo::ACCOUNT_BATCH) objects: the loop
    /// is bound by the cache misses it can keep in flight, and every
    /// instruction it carries per object takes room from them (done per
    /// object, this cost a fifth of the one-worker pause); here the headers
    /// were read moments ago and are still cached, and the misses the FIFOs
    /// prefetched complete meanwhile.
    ///
    /// These are the objects scanned since the last call. With `copies`
    /// ([`Worker::counts_copies`]), those that another scan may have
    /// counted are claimed first ([`Worker::drop_counted_copies`]), with
    /// `fifo`, the prefetch FIFO, tagged too if the horizon says so; every
    /// scan still counts in `objects_scanned`, so that scans beyond marks
    /// remain the duplicate scans.
    #[inline(never)]
    pub(super) fn account(&mut self, fifo: &mut Fifo) {
        let scans = self.scanned.len() as u64;
        if self.copies() {
            self.drop_counted_copies(fifo);
        }
        let heap = self.phase.heap;
        let rec = &mut self.state.record;
        rec.stats.objects_scanned += scans;
        count_batch(heap, rec, self.typed, &mut self.scanned);
        if self.leaves.len() > 0 {
            count_batch(heap, rec, self.typed, &mut self.leaves);
        }
    }

    /// With `copies`: takes the deque's horizon (one fence,
    /// [`Worker::take_horizon`]), and drops from `scanned` the objects
    /// whose words are tagged and whose claim (`Engine::counted`) another
    /// scan won, untagging the rest. Every object popped before this call
    /// is covered: its word went into `scanned` when it was scanned, after
    /// its pop, and was tagged by every horizon since the pop that saw a
    /// new theft. The untagged ones are the only copy.
    #[inline(always)]
    fn drop_counted_copies(&mut self, fifo: &mut Fifo) {
        self.take_horizon(fifo);
        if Word::any_may_copy(self.scanned.as_slice()) {
            self.claim_copies();
        }
    }

    /// The rare part of [`Worker::drop_counted_copies`]: claims each object
    /// whose word is tagged, and keeps in `scanned`, untagged, the ones
    /// claimed here and those that need no claim.
    #[cold]
    #[inline(never)]
    fn claim_copies(&mut self) {
        let counted = &self.phase.engine.counted;
        let mut kept = Batch::new();
        for &w in self.scanned.as_slice() {
            let w = Word::from_raw(w);
            if !w.may_copy() || counted.claim(w.obj()) {
                kept.push(w.untagged().raw());
            }
        }
        self.scanned = kept;
    }
}
