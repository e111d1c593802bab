//! [`MutatorBuffer`]: one mutator thread's end of the write barrier (either
//! family: snapshot at the beginning, or incremental update), and its
//! allocation of black objects; and [`Recorder`], the buffer's state, which
//! the owned form shares.

use stealmark_model::{MarkStore, ObjRef, ObjectModel};

use super::core::{Borrowed, Core, Failure, Parts};
use super::entry::Entry;
use super::CycleError;
use crate::satb::{Closed, BUFFER_CAPACITY};

/// A thread's barrier buffer and its allocation counts, under either form
/// of the cycle.
pub(crate) struct Recorder {
    /// The entries recorded and not yet handed off.
    pub(crate) entries: Vec<Entry>,
    /// Whether the buffer counts as held by the queue.
    pub(crate) attached: bool,
    /// Objects allocated black, and their bytes.
    allocated: (u64, u64),
}

impl Recorder {
    /// A detached recorder (no buffer).
    pub(crate) fn detached() -> Recorder {
        Recorder {
            entries: Vec::new(),
            attached: false,
            allocated: (0, 0),
        }
    }

    /// Takes a buffer from the queue.
    pub(crate) fn attach<P: Parts>(&mut self, core: &Core<P>) -> Result<(), Failure> {
        self.entries = core.queue.acquire().map_err(|c| core.refusal(c))?;
        self.attached = true;
        Ok(())
    }

    /// Refuses as [`Recorder::attach`] would once the cycle has ended, but
    /// takes no buffer and no lock: a detached handle's barrier call that
    /// has nothing to record.
    #[inline]
    pub(crate) fn check_attach<P: Parts>(&self, core: &Core<P>) -> Result<(), CycleError> {
        debug_assert!(!self.attached);
        if core.queue.ended() {
            return Err(core.refusal(Closed::Ended).into_error());
        }
        Ok(())
    }

    /// Hands off the entries (all of them with `force`, else only a buffer
    /// still over half full once filtered).
    pub(crate) fn hand_off<P: Parts>(
        &mut self,
        core: &Core<P>,
        force: bool,
    ) -> Result<(), Failure> {
        core.hand_off(&mut self.entries, force)
    }

    /// Hands off the entries and gives the buffer back, also when the
    /// hand-off fails (its error is returned).
    pub(crate) fn detach<P: Parts>(&mut self, core: &Core<P>) -> Result<(), Failure> {
        if !self.attached {
            return Ok(());
        }
        let handed = self.hand_off(core, true);
        self.attached = false;
        core.queue.release(
            std::mem::take(&mut self.entries),
            std::mem::take(&mut self.allocated),
        );
        handed
    }

    /// Marks `obj` black, and counts it with its bytes.
    #[inline]
    pub(crate) fn allocate_black<P: Parts>(&mut self, core: &Core<P>, obj: ObjRef) {
        let (heap, store) = (core.parts.heap(), core.parts.store());
        if store.try_mark(heap, obj) {
            self.allocated.0 += 1;
            self.allocated.1 += heap.size_bytes(obj) as u64;
        }
    }
}

/// One mutator thread's write-barrier buffer during a mark cycle, from
/// [`MarkCycle::mutator`](super::MarkCycle::mutator).
///
/// Before the thread overwrites a reference slot while marking is active,
/// it calls [`MutatorBuffer::pre_write`] with the slot's old value (a Yuasa
/// deletion barrier); or, after storing into a marked holder,
/// [`MutatorBuffer::shade`] with the value or [`MutatorBuffer::rescan`]
/// with the holder (the incremental-update barrier; see
/// [`MarkCycle`](super::MarkCycle) for each family's rules). The buffer
/// keeps the entries, and a full buffer ([`MutatorBuffer::CAPACITY`]
/// entries) goes to the marker, whose workers mark from it. Objects the
/// thread allocates black go through [`MutatorBuffer::allocate_black`].
///
/// # Thread rules
///
/// The buffer is the thread's own (no synchronisation on the fast path; it
/// is `Send`, so a thread may pass it on, but only one thread uses it at a
/// time). Dropping it hands its entries to the marker; a thread about to
/// block outside the runtime (native code, a blocking call) drops it first,
/// or [flushes](MutatorBuffer::flush) it, so that the remark never waits
/// for that thread; it takes a new one when it comes back. The remark
/// requires every buffer to have been dropped (see
/// [`MarkCycle::finish`](super::MarkCycle::finish)). A thread may call the
/// cycle's [`step`](super::MarkCycle::step) between barrier calls.
///
/// # Bounds
///
/// A hand-off first drops the objects to shade that are already marked,
/// and repeats in a row; a buffer left half full or less stays with its
/// thread. When the cycle's
/// queue is at its bound ([`CycleOptions`](super::CycleOptions)), the
/// hand-off applies the cycle's [`Backpressure`](super::Backpressure): the
/// thread runs a step of the cycle itself, or waits for the markers.
pub struct MutatorBuffer<'c, 'm, H: ObjectModel, S: MarkStore<H>> {
    core: &'c Core<Borrowed<'m, H, S>>,
    rec: Recorder,
}

impl<'c, 'm, H: ObjectModel, S: MarkStore<H>> MutatorBuffer<'c, 'm, H, S> {
    /// Entries per buffer: a full buffer is handed to the marker.
    pub const CAPACITY: usize = BUFFER_CAPACITY;

    pub(super) fn new(core: &'c Core<Borrowed<'m, H, S>>) -> Self {
        let mut rec = Recorder::detached();
        // A borrowed cycle cannot have ended while it is borrowed: the
        // remark takes it by value.
        let _ = rec.attach(core);
        MutatorBuffer { core, rec }
    }

    /// The write barrier: call it with a reference slot's old value before
    /// overwriting the slot (`None` for a null slot). The fast path skips a
    /// null, appends, and compares the length with the capacity; a full
    /// buffer is handed off out of line.
    ///
    /// # Panics
    ///
    /// If an assist ([`Backpressure::Assist`](super::Backpressure)) marked
    /// on this thread and the marking panicked (as
    /// [`MarkCycle::step`](super::MarkCycle::step)).
    #[inline]
    pub fn pre_write(&mut self, old: Option<ObjRef>) {
        if let Some(old) = old {
            self.record(Entry::shade(old));
        }
    }

    /// The incremental-update barrier's forward half (Dijkstra's): call it
    /// with the value stored into a reference slot of a marked holder
    /// (strong, weak or an ephemeron's key or value), after or before the
    /// store. The value is marked and traced before the cycle ends. The
    /// fast path is [`MutatorBuffer::pre_write`]'s.
    ///
    /// # Panics
    ///
    /// As [`MutatorBuffer::pre_write`].
    #[inline]
    pub fn shade(&mut self, value: ObjRef) {
        self.record(Entry::shade(value));
    }

    /// The incremental-update barrier's backward half (Steele's): call it
    /// for a marked holder that the thread writes references into, instead
    /// of [`shade`](MutatorBuffer::shade) for each value stored (as Lua does
    /// for tables). The holder is scanned again, whole, at the remark (as
    /// Lua re-traverses its `grayagain` list in `atomic`, so that a holder
    /// written all cycle long is scanned again once): its strong slots as
    /// they are then are traced, and its other slots are judged on what
    /// they hold then. Repeats of one holder are recorded once.
    ///
    /// ```
    /// # use std::sync::atomic::{AtomicUsize, AtomicBool, Ordering::Relaxed};
    /// # use stealmark_marker::{Collection, MarkStore, Marker, MarkerConfig, ObjRef, ObjectModel, SlotKind};
    /// # struct Heap(Vec<AtomicUsize>);
    /// # impl ObjectModel for Heap {
    /// #     fn size_bytes(&self, _: ObjRef) -> usize { 16 }
    /// #     fn slot_count(&self, _: ObjRef) -> usize { 1 }
    /// #     fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(&self, o: ObjRef, s: std::ops::Range<usize>, mut v: V) {
    /// #         let w = self.0[o.index()].load(Relaxed);
    /// #         if s.start == 0 && s.end > 0 && w != 0 { v(0, ObjRef::from_index(w - 1), SlotKind::Strong) }
    /// #     }
    /// #     fn prefetch(&self, _: ObjRef) {}
    /// # }
    /// # struct Bits(Vec<AtomicBool>);
    /// # impl MarkStore<Heap> for Bits {
    /// #     fn try_mark(&self, _: &Heap, o: ObjRef) -> bool { !self.0[o.index()].swap(true, Relaxed) }
    /// #     fn is_marked(&self, _: &Heap, o: ObjRef) -> bool { self.0[o.index()].load(Relaxed) }
    /// # }
    /// // Objects with one slot each (0: null, else index + 1): 0 -> 1.
    /// let heap = Heap([2, 0, 0].into_iter().map(AtomicUsize::new).collect());
    /// let bits = Bits((0..3).map(|_| AtomicBool::new(false)).collect());
    /// let roots = [ObjRef::from_index(0)];
    /// let mut marker = Marker::new(MarkerConfig::with_workers(2)).unwrap();
    /// let cycle = marker.start(&heap, &bits, &roots[..]);
    /// while !cycle.step(100).unwrap() {} // 0 and 1 are black
    /// let mut barrier = cycle.mutator();
    /// // Object 2 is allocated white and stored into object 1, marked:
    /// // the backward barrier has 1 scanned again.
    /// heap.0[1].store(3, Relaxed);
    /// if bits.is_marked(&heap, ObjRef::from_index(1)) {
    ///     barrier.rescan(ObjRef::from_index(1));
    /// }
    /// drop(barrier);
    /// cycle.finish(&Collection::new(&roots[..])).unwrap();
    /// assert!(bits.0[2].load(Relaxed), "reached through the rescanned holder");
    /// ```
    ///
    /// # Panics
    ///
    /// As [`MutatorBuffer::pre_write`].
    #[inline]
    pub fn rescan(&mut self, holder: ObjRef) {
        self.record(Entry::rescan(holder));
    }

    #[inline(always)]
    fn record(&mut self, entry: Entry) {
        // Never grows: the buffer is handed off (or filtered to half its
        // capacity) as soon as it is full.
        self.rec.entries.push(entry);
        if self.rec.entries.len() >= BUFFER_CAPACITY {
            self.hand_off(false);
        }
    }

    /// Hands the entries recorded so far to the marker (on the way into
    /// native code, or whenever the thread will not reach a safepoint for
    /// a while).
    ///
    /// # Panics
    ///
    /// As [`MutatorBuffer::pre_write`].
    pub fn flush(&mut self) {
        if !self.rec.entries.is_empty() {
            self.hand_off(true);
        }
    }

    /// Marks a newly allocated object black: call it for every object the
    /// thread allocates during the cycle, before storing a reference to it
    /// anywhere. The object's slots must hold only null or references the
    /// thread could reach (objects of the snapshot or allocated black).
    ///
    /// # Panics
    ///
    /// In a cycle started with
    /// [`CycleOptions::black_allocation`](crate::CycleOptions::black_allocation)
    /// off, whose steps may mark with plain stores beside this thread.
    #[inline]
    pub fn allocate_black(&mut self, obj: ObjRef) {
        if !self.core.allocates_black() {
            panic!("{}", CycleError::BlackAllocationOff);
        }
        self.rec.allocate_black(self.core, obj);
    }

    #[cold]
    #[inline(never)]
    fn hand_off(&mut self, force: bool) {
        // A refusal (the cycle failed: its entries are dropped, and its
        // remark reports the failure) needs nothing more here.
        if let Err(Failure::Panicked(payload)) = self.rec.hand_off(self.core, force) {
            std::panic::resume_unwind(payload);
        }
    }
}

impl<H: ObjectModel, S: MarkStore<H>> Drop for MutatorBuffer<'_, '_, H, S> {
    fn drop(&mut self) {
        // An assist's panic here poisons the cycle, which the remark
        // reports; it is not re-raised (a drop may run while unwinding).
        let _ = self.rec.detach(self.core);
    }
}
