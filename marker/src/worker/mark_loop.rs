//! The mark loop, the hot path: pop a grey object (private stack first, then
//! the deque, through the prefetch FIFO), count it live, scan its slots,
//! mark each strong target (through the edge FIFO) and push the ones whose
//! bit this worker set. Large arrays are scanned in chunks claimed through
//! tokens. Non-strong slots are recorded and handled out of line
//! (`contract`).

use std::ops::Range;

use stealmark_deques::copies::Ticket;
use stealmark_deques::{Owner, WorkDeque};
use stealmark_model::{MarkStore, ObjRef, ObjectModel, SlotKind, WeakRef};

use super::balancing::WAKE_GRAIN;
use super::{Phase, Slot, Worker, OFF};
use crate::arrays::ArrayTable;
use crate::fifo::{obj_ref, Fifo, ACCOUNT_BATCH};
use crate::stats::WorkerRecord;

/// A word popped for scanning ([`Worker::next_local`]).
pub(super) enum Popped {
    /// An object to scan (or to open as a large array).
    Object(usize),
    /// A large array's token: a chunk to claim and scan.
    Token(usize),
}

/// Strong edges delayed between finding them and testing their mark bits,
/// when prefetching is on.
pub(crate) const EDGE_DEPTH: usize = 8;

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'_, '_, D, H, S> {
    /// Scans until the private stack, the deque, both FIFOs and (when
    /// watching the key index) the objects to check are empty.
    ///
    /// The FIFOs leave the worker for the loop (see
    /// [`Worker::drain_objects`]) and come back empty.
    pub(super) fn drain<const W: u8>(&mut self) {
        let mut fifo = std::mem::replace(&mut self.fifo, Fifo::new());
        let mut edges = std::mem::replace(&mut self.edges, Fifo::new());
        loop {
            self.drain_objects_in_mode::<W>(&mut fifo, &mut edges);
            debug_assert_eq!(edges.len(), 0, "drain_objects marks the delayed edges");
            if W != OFF && self.slot.contract.has_checks() {
                self.settle::<W>();
            } else {
                self.account(&mut fifo);
                break;
            }
        }
        self.fifo = fifo;
        self.edges = edges;
    }

    /// Marks the targets still waiting in the edge FIFO.
    pub(super) fn flush_edges<const W: u8>(&mut self, edges: &mut Fifo) {
        while let Some(w) = edges.pop() {
            self.trace::<W>(obj_ref(w));
        }
    }

    /// Scans until the private stack, the deque, the object FIFO `fifo` and
    /// the edge FIFO `edges` are empty (the objects to check may still hold
    /// some). `M` holds the settings fixed for the drain (`super::mode`).
    ///
    /// `heap` and `store` are the phase's, passed as parameters of a
    /// function of its own: a shared reference parameter tells the
    /// compiler that nothing writes the heap view's and the store's fields
    /// while the loop runs, so it reads them once, as the sequential
    /// marker does, instead of once or twice per object and per slot (read
    /// through `self`, they might alias the worker's stores and calls).
    #[inline(never)]
    pub(super) fn drain_objects<const W: u8, const M: u8>(
        &mut self,
        heap: &H,
        store: &S,
        fifo: &mut Fifo,
        edges: &mut Fifo,
    ) {
        let mut until_balance = self.until_balance;
        let depth = self.depth;
        loop {
            while let Some(popped) = self.next_local::<M>(heap, fifo, depth) {
                match popped {
                    Popped::Object(w) => self.process_object::<W, M>(heap, store, w, fifo, edges),
                    Popped::Token(token) => self.scan_chunk::<W, M>(token, edges),
                }
                if W != OFF && self.slot.contract.checks_full() {
                    self.settle::<W>();
                }
                until_balance -= 1;
                if until_balance == 0 {
                    until_balance = self.phase.config.balance_interval;
                    self.periodic(fifo.len());
                }
            }
            // Out of objects, the delayed edges are marked here rather
            // than by the caller, so that a graph that is one object wide
            // (a list: each object's one child waits in the edge FIFO)
            // does not leave and re-enter this function per object.
            if edges.len() == 0 {
                break;
            }
            self.flush_edges::<W>(edges);
        }
        self.until_balance = until_balance;
    }

    /// The next word to scan: from the private stack, else the deque,
    /// through the prefetch FIFO (`depth` deep) when it is on. Each popped
    /// word is tested once for a token: a token skips the FIFO (there is
    /// nothing to prefetch), so the FIFO holds objects only, each tagged
    /// with `copies` if it may have another copy ([`Worker::tag_popped`]).
    /// Forced inline: out of line (as the compiler chose once the loop had
    /// three instantiations), the FIFO lives in memory across the call and
    /// the one-worker pause grew by a third.
    #[inline(always)]
    pub(super) fn next_local<const M: u8>(
        &mut self,
        heap: &H,
        fifo: &mut Fifo,
        depth: usize,
    ) -> Option<Popped> {
        if !self.prefetching::<M>() {
            let (w, ticket) = self.pop()?;
            return Some(if ArrayTable::is_token(w) {
                Popped::Token(w)
            } else {
                Popped::Object(self.tag_popped(w, ticket))
            });
        }
        while fifo.len() < depth {
            match self.pop() {
                Some((w, _)) if ArrayTable::is_token(w) => return Some(Popped::Token(w)),
                Some((w, ticket)) => {
                    heap.prefetch(obj_ref(w));
                    fifo.push(self.tag_popped(w, ticket));
                }
                None => break,
            }
        }
        fifo.pop().map(Popped::Object)
    }

    /// Pops the newest private item, else the newest item of the deque,
    /// with its deque ticket (a private item's is [`Ticket::ONLY`]).
    #[inline(always)]
    fn pop(&mut self) -> Option<(usize, Ticket)> {
        match self.slot.private.pop() {
            Some(w) => Some((w, Ticket::ONLY)),
            None => {
                let (w, ticket) = self.slot.owner.pop_ticketed()?;
                #[cfg(feature = "inject-delays")]
                let ticket = self.inject_duplicate(w, ticket);
                Some((w, ticket))
            }
        }
    }

    /// Pushes a newly grey object: onto the private stack, or straight onto
    /// the deque when private work is off.
    #[inline]
    pub(super) fn push(&mut self, w: usize) {
        if self.private {
            self.slot.private.push(w);
        } else {
            self.push_shared(w);
        }
    }

    /// Pushes onto the deque, spilling to the overflow storage when full.
    #[inline]
    pub(super) fn push_shared(&mut self, w: usize) {
        Self::push_to_deque(self.phase, self.slot, w);
    }

    /// Pushes onto the deque an item that may have another copy (one taken
    /// by a single steal): the deque marks its ticket.
    #[inline]
    pub(super) fn push_copy(&mut self, w: usize) {
        if let Err(w) = self.slot.owner.push_copy(w) {
            Self::spill(self.phase, self.slot, w);
        }
    }

    /// [`Worker::push_shared`] on the parts of the worker it uses, for the
    /// slot loop, which holds the rest borrowed.
    #[inline(always)]
    fn push_to_deque(phase: &Phase<'_, D, H, S>, slot: &mut Slot<D>, w: usize) {
        if let Err(w) = slot.owner.push(w) {
            Self::spill(phase, slot, w);
        }
    }

    /// The bounded deque is full: move the item and half the deque to the
    /// shared overflow storage, and wake a parked worker to take some.
    #[cold]
    fn spill(phase: &Phase<'_, D, H, S>, slot: &mut Slot<D>, w: usize) {
        let moved =
            phase
                .engine
                .overflow
                .spill(w, &mut slot.owner, phase.config.deque_capacity / 2);
        slot.record.stats.overflow_pushes += moved as u64;
        if phase.term.sleepers() > 0 {
            let k = phase.term.wake(moved / WAKE_GRAIN);
            slot.record.stats.wakeups_sent += k as u64;
        }
    }

    /// Scans an object, or opens it as a large array; queues it to be
    /// counted live (with `count_live`; `w` keeps its tag with `copies`,
    /// and a full batch is counted with `fifo`, the prefetch FIFO, see
    /// [`Worker::account`]).
    #[inline(always)]
    pub(super) fn process_object<const W: u8, const M: u8>(
        &mut self,
        heap: &H,
        store: &S,
        tagged: usize,
        fifo: &mut Fifo,
        edges: &mut Fifo,
    ) {
        let w = Self::untagged(tagged);
        let obj = obj_ref(w);
        let n = heap.slot_count(obj);
        if self.counting::<M>() {
            self.scanned.push(tagged);
            if self.scanned.len() == ACCOUNT_BATCH {
                self.account(fifo);
            }
        } else {
            self.slot.record.stats.objects_scanned += 1;
        }
        if n > self.big_array {
            self.open_array::<W, M>(w, n, edges);
        } else {
            self.scan::<W, M>(heap, store, obj, 0..n, true, edges);
        }
    }

    /// Visits the slots in `slots`: marks and pushes strong targets, records
    /// the others (and then handles them out of line: they are rare).
    ///
    /// `whole` says the scan covers the whole object and may be a second
    /// scan of it (a deque that delivers an item twice): then, if it found
    /// non-strong slots, the object is claimed as a holder
    /// (`crate::holders`) and a scan that loses the claim drops its
    /// records. Chunks of large arrays are claimed exactly once and need
    /// no claim.
    #[inline(always)]
    pub(super) fn scan<const W: u8, const M: u8>(
        &mut self,
        heap: &H,
        store: &S,
        obj: ObjRef,
        slots: Range<usize>,
        whole: bool,
        edges: &mut Fifo,
    ) {
        // Two instances of the slot loop, so that the private-or-shared
        // choice is made once per object, not once per marked target.
        let (visited, marked, weak) = if self.private_on::<M>() {
            self.visit_slots::<W, M>(heap, store, obj, slots, edges, |slot, w| {
                slot.private.push(w)
            })
        } else {
            let phase = self.phase;
            self.visit_slots::<W, M>(heap, store, obj, slots, edges, |slot, w| {
                Self::push_to_deque(phase, slot, w)
            })
        };
        let st = &mut self.slot.record.stats;
        st.slots_scanned += visited;
        st.objects_marked += marked;
        if weak != 0 {
            let from = self.slot.record.weak_refs.len() - weak;
            if whole && !D::KIND.exactly_once() && !self.phase.engine.holders.claim(obj) {
                self.drop_duplicate(from);
            } else {
                self.found_weak::<W>(from);
            }
        }
    }

    /// The slot loop of [`Worker::scan`]: visits `obj`'s `slots`, marks
    /// each strong target (through the edge FIFO) and hands the ones this
    /// worker marked to `grey`; records the other slots. Returns the slots
    /// visited, the targets marked and the slots recorded. The per-slot
    /// closure keeps its counters in locals so that it inlines into the
    /// heap's `scan_slots` loop.
    #[inline(always)]
    fn visit_slots<const W: u8, const M: u8>(
        &mut self,
        heap: &H,
        store: &S,
        obj: ObjRef,
        slots: Range<usize>,
        edges: &mut Fifo,
        mut grey: impl FnMut(&mut Slot<D>, usize),
    ) -> (u64, u64, usize) {
        let edge_depth = self.edge_depth::<M>();
        let unshared = self.unshared::<M>();
        let slot = &mut *self.slot;
        let (mut visited, mut marked, mut weak) = (0u64, 0u64, 0usize);
        heap.scan_slots(
            obj,
            slots,
            #[inline(always)]
            |index, target, kind| {
                visited += 1;
                if kind == SlotKind::Strong {
                    let Some(target) = delay_edge(heap, store, edges, edge_depth, target) else {
                        return;
                    };
                    if mark(heap, store, unshared, target) {
                        marked += 1;
                        grey(slot, target.word());
                        if W != OFF {
                            slot.contract.check(target);
                        }
                    }
                } else {
                    weak += 1;
                    record_weak(&mut slot.record, obj, index, target, kind);
                }
            },
        );
        (visited, marked, weak)
    }

    /// Another scan of this holder recorded its non-strong slots: drops
    /// the copies this scan recorded from `weak_refs[from]` on.
    #[cold]
    #[inline(never)]
    fn drop_duplicate(&mut self, from: usize) {
        let rec = &mut self.slot.record;
        rec.stats.weak_refs -= (rec.weak_refs.len() - from) as u64;
        rec.weak_refs.truncate(from);
        rec.stats.duplicate_holders += 1;
    }
}

/// Records a non-strong slot (out of line: rare, and it may allocate).
#[cold]
#[inline(never)]
fn record_weak(
    record: &mut WorkerRecord,
    holder: ObjRef,
    slot: usize,
    target: ObjRef,
    kind: SlotKind,
) {
    record.stats.weak_refs += 1;
    record.weak_refs.push(WeakRef {
        holder,
        slot,
        target,
        kind,
    });
}

/// Sets `obj`'s mark; whether this call set it. `unshared` (a step whose
/// worker is the only thread marking, `Phase::unshared`) marks without an
/// atomic read-modify-write.
#[inline(always)]
pub(super) fn mark<H: ObjectModel, S: MarkStore<H>>(
    heap: &H,
    store: &S,
    unshared: bool,
    obj: ObjRef,
) -> bool {
    if unshared {
        store.try_mark_unshared(heap, obj)
    } else {
        store.try_mark(heap, obj)
    }
}

/// Delays a strong edge (or a root) through the edge FIFO: prefetches `target`'s mark
/// bit and returns the edge `depth` edges older, whose mark word should have
/// arrived (or `target` itself when the FIFO is off or not yet full).
#[inline(always)]
pub(super) fn delay_edge<H: ObjectModel, S: MarkStore<H>>(
    heap: &H,
    store: &S,
    edges: &mut Fifo,
    depth: usize,
    target: ObjRef,
) -> Option<ObjRef> {
    if depth == 0 {
        return Some(target);
    }
    store.prefetch(heap, target);
    edges.push(target.word());
    if edges.len() <= depth {
        return None;
    }
    edges.pop().map(obj_ref)
}
