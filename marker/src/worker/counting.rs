//! Counting live objects (objects, bytes, per type) when they are scanned,
//! in batches out of the mark loop ([`Worker::account`]), exactly once even
//! when a deque delivers an object to two workers.
//!
//! With such a deque (`idempotent`) and more than one worker (`copies`),
//! every popped word carries its deque ticket (`stealmark_deques::copies`)
//! beside the prefetch FIFO, in the same order, into the batch. Before
//! counting a batch, the worker asks its deque for a horizon (one fence):
//! an object whose ticket may share is counted only through a claim in a
//! set shared by all workers (`Engine::counted`), every other one directly,
//! as the only copy there ever was. Claims are rare: they come with thefts.

use stealmark_deques::copies::{Horizon, Ticket};
use stealmark_deques::{Owner, WorkDeque};
use stealmark_model::{MarkStore, ObjectModel};

use super::live::count_live;
use super::Worker;
use crate::arrays::ArrayTable;
use crate::fifo::{obj_ref, Batch};
use crate::stats::TypeCount;

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'_, '_, D, H, S> {
    /// Whether scanned objects carry their tickets to the count (`copies`;
    /// never with an exactly-once kind, where this folds to `false`).
    #[inline(always)]
    pub(super) fn copies(&self) -> bool {
        !D::KIND.exactly_once() && self.copies
    }

    /// With `copies`: the ticket of a word `w` just popped, in pop order
    /// (the FIFO's order), if `w` is an object. A token's ticket is dropped:
    /// its chunks are claimed exactly once and counted with their array,
    /// and a token skips the FIFO ([`Worker::next_local`]).
    #[inline(always)]
    pub(super) fn queue_ticket(&mut self, w: usize, ticket: Ticket) {
        if self.copies() && !ArrayTable::is_token(w) {
            self.tickets.push(ticket.word());
        }
    }

    /// With `copies`: the ticket of the word being processed (the oldest
    /// queued).
    #[inline(always)]
    pub(super) fn take_ticket(&mut self) -> usize {
        let ticket = self.tickets.pop();
        debug_assert!(ticket.is_some(), "a ticket per popped object");
        ticket.unwrap_or(Ticket::ONLY.word())
    }

    /// Puts back a prefetched word that this step will not scan (an
    /// increment out of budget): onto the private stack, unless, with
    /// `copies`, its ticket says another copy may exist: then back onto
    /// the deque as a copy, so that its count is claimed. The caller took a
    /// horizon ([`Worker::take_horizon`]) after the word's pop.
    pub(super) fn return_unscanned(&mut self, w: usize) {
        if self.copies() && Ticket::from_word(self.take_ticket()).is_shared() {
            self.push_copy(w);
            return;
        }
        self.slot.private.push(w);
    }

    /// With `copies`: takes the deque's horizon (one fence) and, when it
    /// saw new thefts, flags with it every ticket not yet settled: those of
    /// the objects scanned and not yet counted (`scanned_tickets`) and those
    /// of the words still in the prefetch FIFO (`tickets`). A ticket's
    /// shared bit is then the only thing the count reads.
    ///
    /// Why every unsettled ticket: a pop returns an item that a thief took
    /// too only if an owner anchor store at or before the pop overwrote the
    /// theft's CAS; the first horizon whose fence comes after that store
    /// sees the theft's announcement (`IdempotentOwner::horizon`), but it
    /// may not be the horizon that settles the ticket. An earlier one may
    /// have seen it first (an announcement can be seen before its CAS
    /// lands), and returns nothing new for it later. If that earlier
    /// horizon came before the pop, it raised the deque's `stolen_end` and
    /// the pop marked the ticket stolen; if it came after the pop, the
    /// ticket was waiting here (in the FIFO or the batch), and is flagged
    /// now. Before, only the batch was flagged, and an object still in the
    /// FIFO when the horizon saw the theft was counted directly at the next
    /// batch, whose horizon was none: the oracle matrix's double count.
    /// A ticket is nowhere else between its pop and its count:
    /// `process_object` moves it from the ring to the batch, with no
    /// horizon in between.
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
    pub(super) fn take_horizon(&mut self) {
        let horizon = self.slot.owner.horizon();
        if horizon != Horizon::NONE {
            self.flag_unsettled(horizon);
        }
    }

    /// The rare part of [`Worker::take_horizon`] (once per theft seen).
    #[cold]
    #[inline(never)]
    fn flag_unsettled(&mut self, horizon: Horizon) {
        let flag = |t: usize| horizon.flag(Ticket::from_word(t)).word();
        for t in self.scanned_tickets.as_mut_slice() {
            *t = flag(*t);
        }
        self.tickets.rewrite(flag);
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
        rec.stats.objects_scanned += scans;
        let by_type: &mut [TypeCount] = if self.typed {
            &mut rec.live_by_type
        } else {
            &mut []
        };
        let (bytes, footprint) = count_live(heap, self.scanned.as_slice(), by_type);
        rec.stats.live_bytes += bytes;
        rec.stats.live_footprint_bytes += footprint;
        self.scanned.clear();
    }

    /// With `copies`: takes the deque's horizon (one fence,
    /// [`Worker::take_horizon`]), and drops from `scanned` the objects
    /// whose tickets are shared and whose claim (`Engine::counted`) another
    /// scan won. Every object popped before this call is covered: its
    /// ticket went into `scanned_tickets` when it was scanned, after its
    /// pop, and was flagged by every horizon since the pop. The others are
    /// the only copy.
    #[inline(always)]
    fn drop_counted_copies(&mut self) {
        self.take_horizon();
        let shared = self
            .scanned_tickets
            .as_slice()
            .iter()
            .any(|&t| Ticket::from_word(t).is_shared());
        if shared {
            self.claim_copies();
        }
        self.scanned_tickets.clear();
    }

    /// The rare part of [`Worker::drop_counted_copies`]: claims each object
    /// whose ticket is shared, and keeps in `scanned` the ones claimed here
    /// and those that need no claim.
    #[cold]
    #[inline(never)]
    fn claim_copies(&mut self) {
        let counted = &self.phase.engine.counted;
        let mut kept = Batch::new();
        for (&w, &t) in self
            .scanned
            .as_slice()
            .iter()
            .zip(self.scanned_tickets.as_slice())
        {
            if !Ticket::from_word(t).is_shared() || counted.claim(obj_ref(w)) {
                kept.push(w);
            }
        }
        self.scanned = kept;
    }
}
