//! The mark loop of one worker, generic over the deque kind `D`, the heap
//! `H` and the mark store `S` (monomorphised: every call inlines).

use std::any::Any;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use crossbeam_utils::{Backoff, CachePadded};
use parking_lot::Mutex;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use stealmark_deques::{Owner, Steal, Thief, ThiefStats, WorkDeque};
use stealmark_model::{ObjRef, ObjectModel, SlotKind};

use crate::arrays::ArrayTable;
use crate::config::{BalancePolicy, DequeKind, MarkerConfig, StealAmount, VictimSelection};
use crate::fifo::Fifo;
use crate::overflow::Overflow;
use crate::private::PrivateStack;
use crate::stats::{Span, SpanKind, TimelineSample, WorkerRecord};
use crate::termination::{Reactivate, Termination};
use stealmark_model::WeakRef;
use stealmark_model::{MarkBitmap, MarkStore};

/// Array descriptors per marker: arrays being scanned in chunks at once.
const ARRAY_DESCRIPTORS: usize = 4096;

/// While a worker looks for work, busy workers keep up to this many of their
/// private items in their deques (half their private stack, at most this).
const IDLE_SHARE_MAX: usize = 1024;

/// Strong edges delayed between finding them and testing their mark bits,
/// when prefetching is on.
pub(crate) const EDGE_DEPTH: usize = 8;

/// A busy worker wakes one parked worker per this many items in its deque.
const WAKE_GRAIN: usize = 4;

/// What one worker keeps between phases.
pub(crate) struct Slot<D: WorkDeque> {
    owner: D::Owner,
    /// The private part of the mark stack; its capacity is kept from one
    /// phase to the next.
    private: PrivateStack,
    rng: Pcg64,
    thief_stats: ThiefStats,
    record: WorkerRecord,
}

/// The deques, overflow storage and array descriptors of one deque kind.
pub(crate) struct Engine<D: WorkDeque> {
    slots: Box<[CachePadded<Mutex<Slot<D>>>]>,
    thieves: Box<[D::Thief]>,
    overflow: Overflow,
    arrays: ArrayTable,
    /// Whether pushes can fail (bounded deques), so that the overflow storage
    /// must be checked before a worker goes idle.
    bounded: bool,
}

impl<D: WorkDeque> Engine<D> {
    pub(crate) fn new(config: &MarkerConfig) -> Engine<D> {
        let mut slots = Vec::with_capacity(config.workers);
        let mut thieves = Vec::with_capacity(config.workers);
        for i in 0..config.workers {
            let (owner, thief) = D::with_capacity(config.deque_capacity);
            thieves.push(thief);
            // Each worker has its own stream: the seed mixed with the index
            // through a multiplicative hash, so no two queues share a seed.
            let seed = config.seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            slots.push(CachePadded::new(Mutex::new(Slot {
                owner,
                private: PrivateStack::default(),
                rng: Pcg64::seed_from_u64(seed),
                thief_stats: ThiefStats::default(),
                record: WorkerRecord::default(),
            })));
        }
        Engine {
            slots: slots.into_boxed_slice(),
            thieves: thieves.into_boxed_slice(),
            overflow: Overflow::default(),
            arrays: ArrayTable::new(ARRAY_DESCRIPTORS, config.workers),
            bounded: config.deque == DequeKind::Abp,
        }
    }

    /// Prepares a phase (no worker runs).
    pub(crate) fn reset(&self) {
        self.overflow.clear();
        self.arrays.reset();
    }

    /// After a phase, when every worker has returned (no thief is inside a
    /// steal): lets the deques free retired buffers, and swaps each worker's
    /// record with `records[i]`, so both sets of buffers are kept.
    pub(crate) fn finish_phase(&mut self, records: &mut [WorkerRecord]) {
        for (slot, rec) in self.slots.iter_mut().zip(records) {
            let slot = slot.get_mut();
            // SAFETY: no thief is inside a steal from this deque. Its only
            // thief handle is `self.thieves[i]` (made in `Engine::new`, never
            // cloned), which workers reach only through the `&Engine` of a
            // `Phase`; `&mut self` proves that no such borrow is live, and
            // `Pool::broadcast` returned only after every worker had
            // returned from the phase's job.
            unsafe { slot.owner.quiesce() };
            std::mem::swap(rec, &mut slot.record);
        }
    }
}

/// Everything the workers share during one phase.
pub(crate) struct Phase<'a, D: WorkDeque, H, S> {
    pub(crate) engine: &'a Engine<D>,
    pub(crate) heap: &'a H,
    pub(crate) store: &'a S,
    pub(crate) roots: &'a [ObjRef],
    pub(crate) config: &'a MarkerConfig,
    pub(crate) term: &'a Termination,
    pub(crate) start: Instant,
    /// The side bitmap, when the workers clear it themselves before marking
    /// (each its own part, so the lines start in the cache of a core that
    /// marks), meeting at `cleared` before anyone marks.
    pub(crate) clear: Option<&'a MarkBitmap>,
    pub(crate) cleared: AtomicUsize,
    /// The first panic raised by a worker, re-raised by the caller.
    pub(crate) panic: Mutex<Option<Box<dyn Any + Send>>>,
}

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Phase<'_, D, H, S> {
    /// The job of worker `index`. Catches a panic, records it and ends the
    /// phase for everyone (the caller re-raises it).
    pub(crate) fn run_worker(&self, index: usize) {
        let mut slot = self.engine.slots[index].lock();
        if let Some(bitmap) = self.clear {
            let n = self.config.workers;
            bitmap.clear_part(index, n);
            // Release/Acquire: each worker's clearing stores happen before
            // every other worker's marking, which starts after it has seen
            // all `n` arrivals. Spins and yields only: clearing is short.
            self.cleared.fetch_add(1, Ordering::Release);
            let backoff = Backoff::new();
            while self.cleared.load(Ordering::Acquire) < n {
                backoff.snooze();
            }
        }
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Worker::new(self, index, &mut slot).run();
        }));
        if let Err(payload) = result {
            self.panic.lock().get_or_insert(payload);
            self.term.abort();
        }
    }
}

/// One worker's state during a phase.
struct Worker<'p, 'a, D: WorkDeque, H, S> {
    phase: &'p Phase<'a, D, H, S>,
    index: usize,
    slot: &'p mut Slot<D>,
    fifo: Fifo,
    depth: usize,
    /// Strong targets waiting for their mark-bit test, whose mark words have
    /// been prefetched (empty when prefetching is off).
    edges: Fifo,
    edge_depth: usize,
    /// Whether new grey objects go to the private stack first.
    private: bool,
    /// Objects left until the next policy evaluation and wake-up check.
    until_balance: u32,
    /// Arrays with more slots than this are scanned in chunks.
    big_array: usize,
    /// Objects left until the next timeline sample (counted down in steps of
    /// `balance_interval`, at each periodic check).
    until_sample: u32,
    sample_interval: u32,
    /// The load at the last balance (threshold policy).
    last_balance_len: usize,
    span_kind: SpanKind,
    span_start: u64,
}

impl<'p, 'a, D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'p, 'a, D, H, S> {
    fn new(phase: &'p Phase<'a, D, H, S>, index: usize, slot: &'p mut Slot<D>) -> Self {
        slot.record.clear();
        slot.private.clear();
        slot.owner.reset_stats();
        slot.thief_stats = ThiefStats::default();
        let c = phase.config;
        Worker {
            phase,
            index,
            slot,
            fifo: Fifo::new(),
            depth: c.prefetch,
            edges: Fifo::new(),
            edge_depth: if c.prefetch > 0 { EDGE_DEPTH } else { 0 },
            private: c.private_work,
            until_balance: c.balance_interval,
            big_array: 2 * c.array_chunk,
            until_sample: c.timeline_interval,
            sample_interval: c.timeline_interval,
            last_balance_len: 0,
            span_kind: SpanKind::Marking,
            span_start: 0,
        }
    }

    #[inline]
    fn now_ns(&self) -> u64 {
        self.phase.start.elapsed().as_nanos() as u64
    }

    fn run(&mut self) {
        self.span_start = self.now_ns();
        self.mark_roots();
        let term = self.phase.term;
        loop {
            self.drain();
            self.switch(SpanKind::Stealing);
            term.hungry_enter();
            if self.refill() {
                term.hungry_leave();
                self.switch(SpanKind::Marking);
                continue;
            }
            self.switch(SpanKind::Idle);
            let found = self.idle();
            term.hungry_leave();
            if found {
                self.switch(SpanKind::Marking);
            } else {
                break;
            }
        }
        self.finish();
    }

    /// Ends the current span at now and starts one of `kind`.
    fn switch(&mut self, kind: SpanKind) {
        let now = self.now_ns();
        self.close_span(now);
        if kind == SpanKind::Idle {
            let st = &mut self.slot.record.stats;
            st.termination_attempts += 1;
            self.sample(now, 0);
        }
        self.span_kind = kind;
        self.span_start = now;
    }

    fn close_span(&mut self, now: u64) {
        let d = now.saturating_sub(self.span_start);
        let rec = &mut self.slot.record;
        match self.span_kind {
            SpanKind::Marking => {
                rec.stats.busy_ns += d;
                rec.stats.last_work_ns = now;
            }
            SpanKind::Stealing => rec.stats.steal_ns += d,
            SpanKind::Idle => rec.stats.idle_ns += d,
            SpanKind::Termination => {
                rec.stats.idle_ns += d;
                rec.stats.termination_ns = d;
            }
        }
        if self.phase.config.spans {
            if rec.spans.len() < WorkerRecord::MAX_SPANS {
                rec.spans.push(Span {
                    kind: self.span_kind,
                    start_ns: self.span_start,
                    end_ns: now,
                });
            } else {
                rec.spans_dropped += 1;
            }
        }
    }

    fn finish(&mut self) {
        // The last idle span is the termination span.
        self.span_kind = SpanKind::Termination;
        let now = self.now_ns();
        self.close_span(now);
        let o = *self.slot.owner.stats();
        let t = self.slot.thief_stats;
        let st = &mut self.slot.record.stats;
        st.pushes = o.pushes;
        st.pops = o.pops;
        st.cas = o.cas_attempted + t.cas_attempted;
        st.steal_attempts = t.steal_attempts;
        st.steal_successes = t.steal_successes;
        st.steal_aborts = t.steal_aborts;
        st.items_stolen = t.items_stolen;
    }

    /// Records a timeline sample, decimating when the buffer is full.
    fn sample(&mut self, now: u64, len: usize) {
        if self.sample_interval == 0 {
            return;
        }
        let tl = &mut self.slot.record.timeline;
        if tl.len() == WorkerRecord::MAX_SAMPLES {
            let mut keep = 0;
            tl.retain(|_| {
                keep += 1;
                keep % 2 == 0
            });
            self.sample_interval = self.sample_interval.saturating_mul(2);
        }
        tl.push(TimelineSample {
            t_ns: now,
            len: len.min(u32::MAX as usize) as u32,
        });
    }

    /// Marks this worker's share of the roots (a contiguous slice).
    fn mark_roots(&mut self) {
        let roots = self.phase.roots;
        let n = self.phase.config.workers;
        let per = roots.len().div_ceil(n);
        let lo = (self.index * per).min(roots.len());
        let hi = (lo + per).min(roots.len());
        for &r in &roots[lo..hi] {
            if self.phase.store.try_mark(self.phase.heap, r) {
                self.slot.record.stats.objects_marked += 1;
                self.push(r.word());
            }
        }
    }

    /// Scans until the private stack, the deque and both FIFOs are empty.
    fn drain(&mut self) {
        loop {
            self.drain_objects();
            if self.edges.len() == 0 {
                return;
            }
            self.flush_edges();
        }
    }

    /// Marks the targets still waiting in the edge FIFO.
    fn flush_edges(&mut self) {
        let (heap, store) = (self.phase.heap, self.phase.store);
        let mut marked = 0;
        while let Some(w) = self.edges.pop() {
            if store.try_mark(heap, obj_ref(w)) {
                marked += 1;
                self.push(w);
            }
        }
        self.slot.record.stats.objects_marked += marked;
    }

    /// Scans until the private stack, the deque and the object FIFO are
    /// empty (the edge FIFO may still hold targets).
    fn drain_objects(&mut self) {
        while let Some(w) = self.next_local() {
            if ArrayTable::is_token(w) {
                self.process_token(w);
            } else {
                self.process_object(w);
            }
            self.until_balance -= 1;
            if self.until_balance == 0 {
                self.until_balance = self.phase.config.balance_interval;
                self.periodic();
            }
        }
    }

    /// The next word to scan: from the private stack, else the deque,
    /// through the prefetch FIFO when it is on.
    #[inline]
    fn next_local(&mut self) -> Option<usize> {
        if self.depth == 0 {
            return self.pop();
        }
        while self.fifo.len() < self.depth {
            match self.pop() {
                Some(w) => {
                    if !ArrayTable::is_token(w) {
                        self.phase.heap.prefetch(obj_ref(w));
                    }
                    self.fifo.push(w);
                }
                None => break,
            }
        }
        self.fifo.pop()
    }

    /// Pops the newest private item, else the newest item of the deque.
    #[inline]
    fn pop(&mut self) -> Option<usize> {
        match self.slot.private.pop() {
            Some(w) => Some(w),
            None => self.slot.owner.pop(),
        }
    }

    /// This worker's load: private and shared items.
    #[inline]
    fn load(&self) -> usize {
        self.slot.private.len() + self.slot.owner.len()
    }

    /// Pushes a newly grey object: onto the private stack, or straight onto
    /// the deque when private work is off.
    #[inline]
    fn push(&mut self, w: usize) {
        if self.private {
            self.slot.private.push(w);
        } else {
            self.push_shared(w);
        }
    }

    /// Tops up the deque from the oldest private items: to half of the
    /// private stack (at most [`IDLE_SHARE_MAX`]) while any worker is
    /// looking for work, else to the reserve.
    fn share(&mut self) {
        let private = self.slot.private.len();
        if private < 2 {
            return;
        }
        let c = self.phase.config;
        let want = if self.phase.term.hungry() > 0 {
            (private / 2).min(IDLE_SHARE_MAX)
        } else {
            c.deque_reserve.min(private / 2)
        };
        let shared = self.slot.owner.len();
        if shared >= want {
            return;
        }
        let slot = &mut *self.slot;
        for &w in slot.private.take_oldest(want - shared) {
            if let Err(w) = slot.owner.push(w) {
                let e = self.phase.engine;
                let moved =
                    e.overflow
                        .spill(w, &mut slot.owner, self.phase.config.deque_capacity / 2);
                slot.record.stats.overflow_pushes += moved as u64;
            }
        }
    }

    /// Pushes onto the deque, spilling to the overflow storage when full.
    #[inline]
    fn push_shared(&mut self, w: usize) {
        if let Err(w) = self.slot.owner.push(w) {
            self.spill(w);
        }
    }

    /// The bounded deque is full: move the item and half the deque to the
    /// shared overflow storage, and wake a parked worker to take some.
    #[cold]
    fn spill(&mut self, w: usize) {
        let e = self.phase.engine;
        let moved = e.overflow.spill(
            w,
            &mut self.slot.owner,
            self.phase.config.deque_capacity / 2,
        );
        self.slot.record.stats.overflow_pushes += moved as u64;
        if self.phase.term.sleepers() > 0 {
            let k = self.phase.term.wake(moved / WAKE_GRAIN);
            self.slot.record.stats.wakeups_sent += k as u64;
        }
    }

    /// Scans an object, or opens it as a large array.
    #[inline(always)]
    fn process_object(&mut self, w: usize) {
        let obj = obj_ref(w);
        let n = self.phase.heap.slot_count(obj);
        self.slot.record.stats.objects_scanned += 1;
        if n > self.big_array {
            self.open_array(w, n);
        } else {
            self.scan(obj, 0..n);
        }
    }

    /// Starts scanning a large array in chunks (whole, if the descriptor
    /// table is full).
    #[cold]
    fn open_array(&mut self, w: usize, n: usize) {
        let chunk = self.phase.config.array_chunk;
        match self.phase.engine.arrays.open(w, n.div_ceil(chunk)) {
            Some(token) => self.process_token(token),
            None => self.scan(obj_ref(w), 0..n),
        }
    }

    /// Claims a chunk of a large array, republishes the token while chunks
    /// remain, and scans the chunk.
    fn process_token(&mut self, token: usize) {
        let Some(claim) = self.phase.engine.arrays.claim(token) else {
            return;
        };
        // Tokens are the array's parallelism: they go straight to the deque.
        for _ in 0..claim.push_back {
            self.push_shared(token);
        }
        let chunk = self.phase.config.array_chunk;
        let lo = claim.chunk * chunk;
        self.slot.record.stats.array_chunks += 1;
        self.scan(obj_ref(claim.obj), lo..lo + chunk);
    }

    /// Visits the slots in `slots`: marks and pushes strong targets, records
    /// weak ones. The per-slot closure is kept small (counters in locals,
    /// weak references out of line) so that it inlines into the heap's
    /// `scan_slots` loop.
    #[inline(always)]
    fn scan(&mut self, obj: ObjRef, slots: Range<usize>) {
        let heap = self.phase.heap;
        let store = self.phase.store;
        let mut visited = 0u64;
        let mut marked = 0u64;
        let edge_depth = self.edge_depth;
        if self.private {
            let slot = &mut *self.slot;
            let private = &mut slot.private;
            let record = &mut slot.record;
            let edges = &mut self.edges;
            heap.scan_slots(
                obj,
                slots,
                #[inline(always)]
                |index, target, kind| {
                    visited += 1;
                    if kind == SlotKind::Strong {
                        let Some(target) = delay_edge(heap, store, edges, edge_depth, target)
                        else {
                            return;
                        };
                        if store.try_mark(heap, target) {
                            marked += 1;
                            private.push(target.word());
                        }
                    } else {
                        record_weak(record, obj, index, target, kind);
                    }
                },
            );
        } else {
            heap.scan_slots(
                obj,
                slots,
                #[inline(always)]
                |index, target, kind| {
                    visited += 1;
                    if kind == SlotKind::Strong {
                        let Some(target) =
                            delay_edge(heap, store, &mut self.edges, edge_depth, target)
                        else {
                            return;
                        };
                        if store.try_mark(heap, target) {
                            marked += 1;
                            self.push_shared(target.word());
                        }
                    } else {
                        record_weak(&mut self.slot.record, obj, index, target, kind);
                    }
                },
            );
        }
        let st = &mut self.slot.record.stats;
        st.slots_scanned += visited;
        st.objects_marked += marked;
    }

    /// Every `balance_interval` objects: wake parked workers in proportion
    /// to the surplus, and apply the balancing policy.
    fn periodic(&mut self) {
        #[cfg(feature = "inject-delays")]
        self.inject_delay();
        if self.sample_interval != 0 {
            self.until_sample = self
                .until_sample
                .saturating_sub(self.phase.config.balance_interval);
            if self.until_sample == 0 {
                self.until_sample = self.sample_interval;
                let len = self.load() + self.fifo.len();
                let now = self.now_ns();
                self.sample(now, len);
            }
        }
        if self.private {
            self.share();
        }
        let len = self.load();
        if len >= WAKE_GRAIN && self.phase.term.sleepers() > 0 {
            let k = self.phase.term.wake(len / WAKE_GRAIN);
            self.slot.record.stats.wakeups_sent += k as u64;
        }
        let c = self.phase.config;
        let balance = match c.policy {
            BalancePolicy::OnEmpty => false,
            BalancePolicy::Probabilistic => {
                len == 0 || self.slot.rng.random::<f64>() * (len as f64) < c.mu
            }
            BalancePolicy::Threshold => {
                let last = self.last_balance_len;
                if (len as f64) * c.threshold_factor <= last as f64 {
                    true
                } else {
                    if len as f64 >= last as f64 * c.threshold_factor || last == 0 {
                        self.last_balance_len = len;
                    }
                    false
                }
            }
        };
        if balance {
            self.balance(len);
        }
    }

    /// A balancing attempt by a worker that still has `len` items: steal
    /// from a random victim only if it surely has more than twice as many.
    fn balance(&mut self, len: usize) {
        self.last_balance_len = len;
        let Some(v) = self.pick_victim() else {
            return;
        };
        if self.phase.engine.thieves[v].len() > 2 * len + 1 {
            self.slot.record.stats.balance_attempts += 1;
            self.steal_from(v);
            self.last_balance_len = self.load();
        }
    }

    /// A random other worker (`random`, or the longer deque of two).
    fn pick_victim(&mut self) -> Option<usize> {
        let n = self.phase.config.workers;
        if n < 2 {
            return None;
        }
        let mut pick = || {
            let r = self.slot.rng.random_range(0..n - 1);
            if r >= self.index {
                r + 1
            } else {
                r
            }
        };
        let a = pick();
        match self.phase.config.victim {
            VictimSelection::Random => Some(a),
            VictimSelection::BestOf2 => {
                let b = pick();
                let t = &self.phase.engine.thieves;
                Some(if t[b].len() > t[a].len() { b } else { a })
            }
        }
    }

    /// One steal attempt from `victim`; `true` if something was taken.
    fn steal_from(&mut self, victim: usize) -> bool {
        let thief = &self.phase.engine.thieves[victim];
        match self.phase.config.steal {
            StealAmount::Half => matches!(
                thief.steal_half(&mut self.slot.owner, &mut self.slot.thief_stats),
                Steal::Success(k) if k > 0
            ),
            StealAmount::One => match thief.steal(&mut self.slot.thief_stats) {
                Steal::Success(w) => {
                    self.push_shared(w);
                    true
                }
                Steal::Empty | Steal::Abort => false,
            },
        }
    }

    /// The local deque and FIFO are empty: take from the overflow storage,
    /// else try to steal, up to twice per other worker. `true` if the local
    /// deque now has work.
    fn refill(&mut self) -> bool {
        let e = self.phase.engine;
        if e.bounded && e.overflow.len_hint() > 0 {
            let batch = self.phase.config.deque_capacity / 2;
            let k = e.overflow.take(&mut self.slot.owner, batch);
            if k > 0 {
                self.slot.record.stats.overflow_takes += k as u64;
                return true;
            }
        }
        for _ in 0..2 * self.phase.config.workers {
            #[cfg(feature = "inject-delays")]
            self.inject_delay();
            let Some(v) = self.pick_victim() else {
                break;
            };
            if self.steal_from(v) {
                return true;
            }
        }
        // A bounded deque's overflow storage is checked under its lock before
        // the worker may count itself idle (see docs/design.md).
        self.load() > 0 || (e.bounded && !e.overflow.is_empty_locked() && self.refill())
    }

    /// The termination protocol. Returns `true` when the worker has found
    /// work again, `false` when the phase is over.
    fn idle(&mut self) -> bool {
        let term = self.phase.term;
        let engine = self.phase.engine;
        loop {
            #[cfg(feature = "inject-delays")]
            self.inject_delay();
            if term.go_idle() {
                return false;
            }
            let backoff = Backoff::new();
            loop {
                if term.is_done() {
                    return false;
                }
                #[cfg(feature = "inject-delays")]
                self.inject_delay();
                // Probe one random victim (and the overflow hint): O(1).
                let seen = (engine.bounded && engine.overflow.len_hint() > 0)
                    || self
                        .pick_victim()
                        .is_some_and(|v| !engine.thieves[v].is_empty());
                if seen {
                    match term.try_reactivate() {
                        Reactivate::Done => return false,
                        Reactivate::Active => {
                            #[cfg(feature = "inject-delays")]
                            self.inject_delay();
                            if self.refill() {
                                return true;
                            }
                            self.slot.record.stats.termination_attempts += 1;
                            break;
                        }
                    }
                }
                if backoff.is_completed() {
                    self.slot.record.stats.parks += 1;
                    term.park();
                    backoff.reset();
                } else {
                    backoff.snooze();
                }
            }
        }
    }

    /// Test-only: random yields and sleeps, to shake out lost work and hangs.
    #[cfg(feature = "inject-delays")]
    fn inject_delay(&mut self) {
        let r: u32 = self.slot.rng.random_range(0..256);
        if r < 32 {
            std::thread::yield_now();
        } else if r < 34 {
            std::thread::sleep(std::time::Duration::from_micros(u64::from(r) * 20));
        }
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

/// Delays a strong edge through the edge FIFO: prefetches `target`'s mark
/// bit and returns the edge `depth` edges older, whose mark word should have
/// arrived (or `target` itself when the FIFO is off or not yet full).
#[inline(always)]
fn delay_edge<H: ObjectModel, S: MarkStore<H>>(
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

/// The object a mark-stack word (without tag) names.
#[inline(always)]
fn obj_ref(w: usize) -> ObjRef {
    match ObjRef::from_word(w) {
        Some(o) => o,
        None => unreachable!("mark stack holds only object references and tagged tokens"),
    }
}
