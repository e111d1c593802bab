//! The mark loop, the hot path: pop a grey object (private stack first, then
//! the deque, through the prefetch FIFO), count it live, scan its slots,
//! mark each strong target (through the edge delay line) and push the ones
//! whose bit this worker set, but for leaves (`SlotKind::StrongLeaf`), which are
//! done once marked. Large arrays are scanned in chunks: an array with
//! more slots than `Worker::big_array` is opened in the descriptor table
//! ([`ArrayTable`](crate::arrays::ArrayTable)), and its token, pushed to
//! the deque, lets any worker claim and scan one chunk at a time.
//! Non-strong slots are recorded and handled out of line (`contract`).

use std::ops::Range;

use stealmark_deques::WorkDeque;
use stealmark_model::{MarkStore, ObjRef, ObjectModel, SlotKind, WeakRef};

use super::leaves::marked_leaf;
use super::modes::{in_mode, KeyWatch, LoopMode};
use super::stack::mark;
use super::word::Word;
use super::{Worker, WorkerState};
use crate::delay::DelayLine;
use crate::fifo::{Fifo, ACCOUNT_BATCH};
use crate::stats::WorkerRecord;

/// A word popped for scanning ([`Worker::next_local`]).
pub(super) enum Popped {
    /// An object to scan (or to open as a large array), tagged if it may
    /// have another copy.
    Object(Word),
    /// A large array's token: a chunk to claim and scan.
    Token(Word),
}

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'_, '_, D, H, S> {
    /// Scans until the private stack, the deque, both FIFOs and (when
    /// watching the key index) the objects to check are empty.
    ///
    /// The FIFOs leave the worker for the loop (see
    /// [`Worker::drain_objects`]) and come back empty.
    pub(super) fn drain<W: KeyWatch>(&mut self) {
        let mut fifo = std::mem::replace(&mut self.fifo, Fifo::new());
        let mut edges = std::mem::take(&mut self.edges);
        loop {
            self.drain_in_mode::<W>(&mut fifo, &mut edges);
            debug_assert!(edges.is_empty(), "drain_objects marks the delayed edges");
            if W::ON && self.state.contract.has_checks() {
                self.settle::<W>();
            } else {
                self.account(&mut fifo);
                break;
            }
        }
        self.fifo = fifo;
        self.edges = edges;
    }

    /// Runs [`Worker::drain_objects`] in the mode for this worker's
    /// settings and the step's key watch (`super::modes::in_mode`).
    #[inline(always)]
    fn drain_in_mode<W: KeyWatch>(&mut self, fifo: &mut Fifo, edges: &mut DelayLine) {
        let (heap, store) = (self.phase.heap, self.phase.store);
        in_mode!(W, self.settings, M => self.drain_objects::<W, M>(heap, store, fifo, edges))
    }

    /// Marks the targets still waiting in the edge delay line; whether
    /// there were any.
    pub(super) fn flush_edges<W: KeyWatch>(&mut self, edges: &mut DelayLine) -> bool {
        edges.take_all(|w| {
            let edge = Word::from_raw(w);
            if H::LEAF_SLOTS && edge.is_leaf() {
                self.shade_leaf::<W>(edge.obj());
            } else {
                self.shade::<W>(edge.obj());
            }
        })
    }

    /// Scans until the private stack, the deque, the object FIFO `fifo` and
    /// the edge delay line `edges` are empty (the objects to check may still
    /// hold some). `M` holds the settings fixed for the drain (`super::modes`).
    ///
    /// `heap` and `store` are the phase's, passed as parameters of a
    /// function of its own: a shared reference parameter tells the
    /// compiler that nothing writes the heap view's and the store's fields
    /// while the loop runs, so it reads them once, as the sequential
    /// marker does, instead of once or twice per object and per slot (read
    /// through `self`, they might alias the worker's stores and calls).
    #[inline(never)]
    pub(super) fn drain_objects<W: KeyWatch, M: LoopMode>(
        &mut self,
        heap: &H,
        store: &S,
        fifo: &mut Fifo,
        edges: &mut DelayLine,
    ) {
        let mut until_balance = self.until_balance;
        let depth = self.settings.depth;
        loop {
            while let Some(popped) = self.next_local::<M>(heap, fifo, depth) {
                match popped {
                    Popped::Object(w) => self.process_object::<W, M>(heap, store, w, fifo, edges),
                    Popped::Token(token) => self.scan_chunk::<W, M>(token, edges),
                }
                if W::ON && self.state.contract.checks_full() {
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
            // (a list: each object's one child waits in the edge delay
            // line) does not leave and re-enter this function per object.
            if !self.flush_edges::<W>(edges) {
                break;
            }
        }
        self.until_balance = until_balance;
    }

    /// The next word to scan: from the private stack, else the deque,
    /// through the prefetch FIFO (`depth` deep) when it is on. Each popped
    /// word is tested once for a token: a token skips the FIFO (there is
    /// nothing to prefetch), so the FIFO holds objects only, each tagged
    /// [`Word::MAY_COPY`](Word) if it may have another copy
    /// ([`Worker::tag_popped`]).
    /// Forced inline: out of line (as the compiler chose once the loop had
    /// three instantiations), the FIFO lives in memory across the call and
    /// the one-worker pause grew by a third.
    #[inline(always)]
    pub(super) fn next_local<M: LoopMode>(
        &mut self,
        heap: &H,
        fifo: &mut Fifo,
        depth: usize,
    ) -> Option<Popped> {
        if !M::prefetching(&self.settings) {
            let (w, ticket) = self.pop()?;
            return Some(if w.is_token() {
                Popped::Token(w)
            } else {
                Popped::Object(self.tag_popped(w, ticket))
            });
        }
        while fifo.len() < depth {
            match self.pop() {
                Some((w, _)) if w.is_token() => return Some(Popped::Token(w)),
                Some((w, ticket)) => {
                    heap.prefetch(w.obj());
                    fifo.push(self.tag_popped(w, ticket).raw());
                }
                None => break,
            }
        }
        let popped = fifo.pop()?;
        // The second stage: the object halfway along the FIFO, whose header
        // has had half the FIFO's time to arrive, is hinted at again, so
        // that the model can prefetch what the header points to.
        if H::PREFETCHES_SLOTS {
            if let Some(w) = fifo.peek(depth / 2) {
                heap.prefetch_slots(Word::from_raw(w).obj());
            }
        }
        Some(Popped::Object(Word::from_raw(popped)))
    }

    /// Scans an object, or opens it as a large array; queues it to be
    /// counted live (with `count_live`; `w` keeps its tag with `copies`,
    /// and a full batch is counted with `fifo`, the prefetch FIFO, see
    /// [`Worker::account`]).
    #[inline(always)]
    pub(super) fn process_object<W: KeyWatch, M: LoopMode>(
        &mut self,
        heap: &H,
        store: &S,
        tagged: Word,
        fifo: &mut Fifo,
        edges: &mut DelayLine,
    ) {
        let obj = tagged.obj();
        if M::counting(&self.settings) {
            self.scanned.push(tagged.raw());
            if self.scanned.len() == ACCOUNT_BATCH {
                self.account(fifo);
            }
        } else {
            self.state.record.stats.objects_scanned += 1;
        }
        let popped = Extent::Popped {
            limit: self.big_array,
        };
        if let Some(n) = self.scan::<W, M>(heap, store, obj, popped, edges) {
            self.open_array::<W, M>(obj, n, edges);
        }
    }

    /// Visits the slots `extent` covers: marks and pushes strong targets,
    /// records the others (and then handles them out of line: they are
    /// rare). Returns the slot count of a popped object too large to scan
    /// whole, which it left alone.
    ///
    /// A popped object may be a second copy (a deque that delivers an item
    /// twice): if its scan found non-strong slots, the object is claimed as
    /// a holder (`crate::holders`) and a scan that loses the claim drops
    /// its records. Chunks of large arrays are claimed exactly once and
    /// need no claim.
    #[inline(always)]
    pub(super) fn scan<W: KeyWatch, M: LoopMode>(
        &mut self,
        heap: &H,
        store: &S,
        obj: ObjRef,
        extent: Extent,
        edges: &mut DelayLine,
    ) -> Option<usize> {
        let whole = matches!(extent, Extent::Popped { .. });
        // Two instances of the slot loop, so that the private-or-shared
        // choice is made once per object, not once per marked target.
        //
        // An unshared mark (one worker) pushes onto the private stack
        // without a branch on whether it set the bit: that branch goes
        // either way on real heaps (about one slot in five finds its
        // target unmarked, and which one is data), and its mispredictions
        // cost up to a sixth of the one-worker pause on javac's heap. It
        // costs a binary tree, where every target is unmarked and the
        // branch always predicted, about 2%. A shared mark keeps the
        // branch: its atomic read-modify-write runs only for an unmarked
        // target, and skipping it is worth the misprediction.
        let unshared = M::unshared(&self.settings);
        let (v, large) = if M::private(&self.settings) {
            self.visit_slots::<W, M>(heap, store, obj, extent, edges, |state, obj, marked| {
                if unshared {
                    state.private.push_if(Word::object(obj).raw(), marked)
                } else if marked {
                    state.private.push(Word::object(obj).raw())
                }
            })
        } else {
            let phase = self.phase;
            self.visit_slots::<W, M>(heap, store, obj, extent, edges, |state, obj, marked| {
                if marked {
                    Self::push_to_deque(phase, state, Word::object(obj))
                }
            })
        };
        let st = &mut self.state.record.stats;
        st.slots_scanned += v.slots;
        st.objects_marked += v.marked;
        st.objects_scanned += v.leaves;
        let weak = v.weak;
        if weak != 0 {
            let from = self.state.record.weak_refs.len() - weak;
            if whole && !D::KIND.exactly_once() && !self.phase.engine.holders.claim(obj) {
                self.drop_duplicate(from);
            } else {
                self.found_weak::<W>(from);
            }
        }
        large
    }

    /// The slot loop of [`Worker::scan`]: visits `obj`'s slots in `extent`
    /// (and returns what [`ObjectModel::scan_object`] returned), marks
    /// each strong target (through the edge delay line) and hands each
    /// target that is not a leaf to `push_if` with whether this worker marked it,
    /// to be pushed if it did (the private stack's `push_if` pushes without
    /// a branch on that answer, and an unshared mark sets the bit without
    /// one either). A leaf is done once marked (queued to be counted live,
    /// with `count_live`). Records the other slots. The per-slot closure
    /// keeps its counters in locals so that it inlines into the heap's
    /// `scan_slots` loop.
    #[inline(always)]
    fn visit_slots<W: KeyWatch, M: LoopMode>(
        &mut self,
        heap: &H,
        store: &S,
        obj: ObjRef,
        extent: Extent,
        edges: &mut DelayLine,
        mut push_if: impl FnMut(&mut WorkerState<D>, ObjRef, bool),
    ) -> (Visited, Option<usize>) {
        let edge_delay = M::edge_delay(&self.settings);
        let unshared = M::unshared(&self.settings);
        let counting = M::counting(&self.settings);
        let typed = self.typed;
        let state = &mut *self.state;
        let leaves = &mut self.leaves;
        let mut v = Visited::default();
        let large = scan_extent(
            heap,
            obj,
            extent,
            #[inline(always)]
            |index, target, kind| {
                v.slots += 1;
                if kind.is_strong() {
                    let leaf = H::LEAF_SLOTS && kind == SlotKind::StrongLeaf;
                    let edge = Word::object(target).leaf_if(leaf);
                    let Some(edge) = delay_edge(heap, store, edges, edge_delay, edge) else {
                        return;
                    };
                    let target = edge.obj();
                    let marked = mark(heap, store, unshared, target);
                    if H::LEAF_SLOTS && edge.is_leaf() {
                        if marked {
                            v.leaves += 1;
                            marked_leaf(heap, &mut state.record, typed, counting, leaves, target);
                        }
                    } else {
                        push_if(state, target, marked);
                    }
                    v.marked += u64::from(marked);
                    if W::ON && marked {
                        state.contract.check(target);
                    }
                } else {
                    v.weak += 1;
                    record_weak(&mut state.record, obj, index, target, kind);
                }
            },
        );
        (v, large)
    }

    /// Starts scanning a large array in chunks (whole, if the descriptor
    /// table is full).
    /// With a deque that may deliver an item twice, the array is first
    /// claimed as a holder (`crate::holders`): a second delivery of it is
    /// a duplicate and opens nothing, so that its slots are scanned once.
    #[cold]
    fn open_array<W: KeyWatch, M: LoopMode>(
        &mut self,
        obj: ObjRef,
        n: usize,
        edges: &mut DelayLine,
    ) {
        if !D::KIND.exactly_once() && !self.phase.engine.holders.claim(obj) {
            self.state.record.stats.duplicate_holders += 1;
            return;
        }
        let chunk = self.phase.config.array_chunk;
        match self.phase.engine.arrays.open(obj, n.div_ceil(chunk)) {
            Some(descriptor) => self.scan_chunk::<W, M>(Word::token(descriptor), edges),
            None => {
                let (heap, store) = (self.phase.heap, self.phase.store);
                self.scan::<W, M>(heap, store, obj, Extent::Slots(0..n), edges);
            }
        }
    }

    /// Claims a chunk of a large array through a popped token, republishes
    /// the token while chunks remain, and scans the chunk. A token carries
    /// no tag for copies: its chunks are claimed exactly once and counted
    /// with their array.
    pub(super) fn scan_chunk<W: KeyWatch, M: LoopMode>(
        &mut self,
        token: Word,
        edges: &mut DelayLine,
    ) {
        let Some(claim) = self.phase.engine.arrays.claim(token.descriptor()) else {
            return;
        };
        // Tokens are the array's parallelism: they go straight to the deque.
        for _ in 0..claim.push_back {
            self.push_shared(token);
        }
        let chunk = self.phase.config.array_chunk;
        let lo = claim.chunk * chunk;
        self.state.record.stats.array_chunks += 1;
        let (heap, store) = (self.phase.heap, self.phase.store);
        let slots = Extent::Slots(lo..lo + chunk);
        self.scan::<W, M>(heap, store, claim.obj, slots, edges);
    }

    /// Another scan of this holder recorded its non-strong slots: drops
    /// the copies this scan recorded from `weak_refs[from]` on.
    #[cold]
    #[inline(never)]
    fn drop_duplicate(&mut self, from: usize) {
        let rec = &mut self.state.record;
        rec.stats.weak_refs -= (rec.weak_refs.len() - from) as u64;
        rec.weak_refs.truncate(from);
        rec.stats.duplicate_holders += 1;
    }
}

/// Visits `obj`'s slots in `extent`; returns what
/// [`ObjectModel::scan_object`] returned for a popped object.
#[inline(always)]
fn scan_extent<H: ObjectModel, V: FnMut(usize, ObjRef, SlotKind)>(
    heap: &H,
    obj: ObjRef,
    extent: Extent,
    visit: V,
) -> Option<usize> {
    match extent {
        Extent::Popped { limit } => heap.scan_object(obj, limit, visit),
        Extent::Slots(slots) => {
            heap.scan_slots(obj, slots, visit);
            None
        }
    }
}

/// The slots a [`Worker::scan`] covers.
pub(super) enum Extent {
    /// A popped object's, all of them, unless it has more than `limit`:
    /// then none, and it is scanned in chunks.
    Popped {
        /// The most slots scanned whole (`Worker::big_array`).
        limit: usize,
    },
    /// These, claimed exactly once: a chunk of a large array, a large
    /// array the descriptor table had no room for, a holder's rescan.
    Slots(Range<usize>),
}

/// What one [`Worker::visit_slots`] did.
#[derive(Default)]
struct Visited {
    /// Slots visited.
    slots: u64,
    /// Targets this worker marked, leaves included.
    marked: u64,
    /// Leaves this worker marked (done: never pushed nor scanned).
    leaves: u64,
    /// Non-strong slots recorded.
    weak: usize,
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

/// Delays a strong edge (or a root) through the edge delay line when
/// `delay` is on: prefetches `target`'s mark bit and returns the edge as
/// many edges older as the line is deep (the store's
/// [`MarkStore::prefetch_distance`]), whose mark word
/// should have arrived (`None` while the line fills). Off, returns `target`
/// itself.
#[inline(always)]
pub(super) fn delay_edge<H: ObjectModel, S: MarkStore<H>>(
    heap: &H,
    store: &S,
    edges: &mut DelayLine,
    delay: bool,
    target: Word,
) -> Option<Word> {
    if !delay {
        return Some(target);
    }
    store.prefetch(heap, target.obj());
    edges.swap(target.raw()).map(Word::from_raw)
}
