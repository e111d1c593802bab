//! Mark cycles that run while the mutator does, in steps on the mutator's
//! thread (incremental marking) or on the GC workers in the background
//! (concurrent marking), with a snapshot-at-the-beginning or an
//! incremental-update write barrier; and their remark. Two forms share one implementation (`core`): the
//! borrowed [`MarkCycle`] with its [`MutatorBuffer`]s, and the owned
//! [`OwnedCycle`] with its [`OwnedMutator`]s, which a virtual machine keeps
//! in its global and per-thread state. [`MarkCycle`]'s documentation gives
//! the rules a runtime follows for either barrier family.

mod buffer;
mod core;
pub(crate) mod entry;
mod error;
mod options;
mod owned;
pub(crate) mod spares;

use stealmark_model::{MarkStore, ObjectModel, RootSource};

pub use buffer::MutatorBuffer;
pub use error::CycleError;
pub use options::{Backpressure, CycleOptions};
pub use owned::{Finished, OwnedCycle, OwnedMutator};

use self::core::{Borrowed, Core};
use crate::collection::Collection;
use crate::marker::Marker;
use crate::report::Report;

/// What a mark cycle did besides marking, for its caller's accounting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct CycleStats {
    /// Steps the background workers ran (concurrent marking).
    pub background_steps: u64,
    /// Incremental steps ([`MarkCycle::step`] calls that ran, and the
    /// mutators' assists).
    pub increments: u64,
    /// Increments that mutator threads ran as back-pressure
    /// ([`Backpressure::Assist`]).
    pub assists: u64,
    /// Hand-offs refused because the queue was at its bound (each followed
    /// by an assist or a wait).
    pub waits: u64,
    /// Wall time of the background steps and increments, in nanoseconds
    /// (marking outside the pauses).
    pub marking_ns: u64,
    /// The start's pause (the root snapshot), in nanoseconds.
    pub start_pause_ns: u64,
    /// The remark's pause, in nanoseconds, freeing the cycle's buffers
    /// included.
    pub remark_ns: u64,
    /// Barrier buffers handed off (full, or flushed partly full).
    pub buffers: u64,
    /// The most barrier buffers allocated at once (held, handed off, being
    /// marked from, or kept for reuse), 8 KiB each.
    pub peak_buffers: u64,
    /// Objects allocated black through [`MutatorBuffer::allocate_black`]
    /// (or [`OwnedMutator::allocate_black`]). They are marked but not in
    /// [`Report::live_objects`] (the marker never scanned them).
    pub allocated_black: u64,
    /// The [`size_bytes`](ObjectModel::size_bytes) of those objects: not
    /// in [`Report::live_bytes`].
    pub allocated_black_bytes: u64,
}

/// A mark cycle in progress: from [`Marker::start`] to
/// [`MarkCycle::finish`]. Marking proceeds in incremental steps
/// ([`MarkCycle::step`], on the caller's thread) or in the background
/// ([`MarkCycle::concurrently`], on the GC workers) while the mutator runs;
/// each mutator thread goes through its own [`MutatorBuffer`]'s write
/// barrier, of either family: snapshot at the beginning (the old value of
/// every reference slot it overwrites, and black allocation) or
/// incremental update (the value stored into a marked holder, or the
/// holder itself).
///
/// The cycle borrows the marker, the heap and the store; [`OwnedCycle`] is
/// the same cycle holding them itself, for a runtime that keeps the cycle in
/// its global state.
///
/// # The rules a runtime follows
///
/// - **Threads.** `MarkCycle` is `Sync` when the heap and the store are:
///   [`step`](MarkCycle::step), [`concurrently`](MarkCycle::concurrently),
///   [`is_quiet`](MarkCycle::is_quiet), [`wait_quiet`](MarkCycle::wait_quiet)
///   and [`mutator`](MarkCycle::mutator) may be called from any thread, also
///   at the same time: a step while another thread marks returns at once,
///   and a background phase while one runs is refused
///   ([`CycleError::BackgroundRunning`]). [`finish`](MarkCycle::finish)
///   takes the cycle, so it runs once every other call has returned.
/// - **One thread's calls.** A mutator thread holds one [`MutatorBuffer`]
///   and may call `step` between its barrier calls; it never calls `finish`
///   while holding a buffer (the borrow checker refuses it).
/// - **Writes, snapshot at the beginning.** Before overwriting a
///   reference slot (strong, or an ephemeron's value) the thread calls
///   [`MutatorBuffer::pre_write`] with the old value. Every object
///   allocated during the cycle goes through
///   [`MutatorBuffer::allocate_black`] before a reference to it is stored.
///   A thread that reads a weak referent during the cycle calls
///   `pre_write(Some(referent))` for it (as Java's `Reference.get` does
///   under SATB).
/// - **Writes, incremental update.** After storing a reference into a slot
///   of any kind of a marked holder, the thread calls
///   [`MutatorBuffer::shade`] with the value stored, or
///   [`MutatorBuffer::rescan`] with the holder. It may skip unmarked
///   holders only while no marking runs (between steps); beside the
///   background marking it calls the barrier on every store. It allocates
///   white (no call), or black through `allocate_black` and then shades
///   what it initialises the object's slots with. Weak referents read need
///   no call. The remark's roots are the roots as they are then.
/// - **Cleared slots.** A cleared slot carries the target it was judged on
///   (a rescanned holder's slot may be named twice), and the runtime
///   clears a slot only if it still holds it.
/// - **Failure.** A panic of a step, of the background marking or of the
///   remark poisons the cycle: every later call refuses
///   ([`CycleError::Panicked`]) and `finish` reports the error, never a
///   result. The marker stays usable for the next collection.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, AtomicBool, Ordering::Relaxed};
/// use stealmark_marker::{Collection, MarkStore, Marker, MarkerConfig, ObjRef, ObjectModel, SlotKind};
///
/// /// Objects with one reference slot each (0: null, else index + 1).
/// struct Heap(Vec<AtomicUsize>);
/// impl ObjectModel for Heap {
///     fn size_bytes(&self, _: ObjRef) -> usize { 16 }
///     fn slot_count(&self, _: ObjRef) -> usize { 1 }
///     fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(&self, o: ObjRef, s: std::ops::Range<usize>, mut v: V) {
///         let w = self.0[o.index()].load(Relaxed); // atomic: mutators write slots
///         if s.start == 0 && s.end > 0 && w != 0 { v(0, ObjRef::from_index(w - 1), SlotKind::Strong) }
///     }
///     fn prefetch(&self, _: ObjRef) {}
/// }
/// struct Bits(Vec<AtomicBool>);
/// impl MarkStore<Heap> for Bits {
///     fn try_mark(&self, _: &Heap, o: ObjRef) -> bool { !self.0[o.index()].swap(true, Relaxed) }
///     fn is_marked(&self, _: &Heap, o: ObjRef) -> bool { self.0[o.index()].load(Relaxed) }
/// }
///
/// // 0 -> 1 -> 2; object 3 is free space the mutator allocates into.
/// let heap = Heap([2, 3, 0, 0].into_iter().map(AtomicUsize::new).collect());
/// let bits = Bits((0..4).map(|_| AtomicBool::new(false)).collect());
/// let roots = [ObjRef::from_index(0)];
/// let mut marker = Marker::new(MarkerConfig::with_workers(2)).unwrap();
/// let cycle = marker.start(&heap, &bits, &roots[..]);
/// cycle.concurrently(|| {
///     let mut barrier = cycle.mutator();
///     // Allocate object 3 (black) and link it from 0; unlink 1 (recorded).
///     barrier.allocate_black(ObjRef::from_index(3));
///     barrier.pre_write(Some(ObjRef::from_index(1)));
///     heap.0[0].store(4, Relaxed);
/// }).unwrap();
/// let (report, stats) = cycle.finish(&Collection::new(&roots[..])).unwrap();
/// // Everything reachable at the start (0, 1, 2) and the new object 3.
/// assert!((0..4).all(|i| bits.0[i].load(Relaxed)));
/// assert_eq!(report.live_objects(), 3); // scanned; 3 was allocated black
/// assert_eq!((stats.allocated_black, stats.allocated_black_bytes), (1, 16));
/// ```
pub struct MarkCycle<'m, H: ObjectModel, S: MarkStore<H>> {
    pub(crate) core: Core<Borrowed<'m, H, S>>,
}

impl Marker {
    /// Starts a mark cycle of `heap` in `store` (cleared by the caller, as
    /// for [`Marker::collect_with`]) with the default [`CycleOptions`]: the
    /// start's pause copies the roots (the snapshot's roots) and nothing
    /// more. See [`MarkCycle`].
    pub fn start<'m, H, S, R>(
        &'m mut self,
        heap: &'m H,
        store: &'m S,
        roots: &R,
    ) -> MarkCycle<'m, H, S>
    where
        H: ObjectModel,
        S: MarkStore<H>,
        R: RootSource + ?Sized,
    {
        self.start_with(heap, store, roots, CycleOptions::default())
    }

    /// [`Marker::start`] with the barrier queue's bounds and back-pressure
    /// of `options`.
    pub fn start_with<'m, H, S, R>(
        &'m mut self,
        heap: &'m H,
        store: &'m S,
        roots: &R,
        options: CycleOptions,
    ) -> MarkCycle<'m, H, S>
    where
        H: ObjectModel,
        S: MarkStore<H>,
        R: RootSource + ?Sized,
    {
        let parts = Borrowed {
            heap,
            store,
            marker: std::marker::PhantomData,
        };
        MarkCycle {
            core: Core::begin(self, parts, roots, options),
        }
    }
}

impl<'m, H: ObjectModel, S: MarkStore<H>> MarkCycle<'m, H, S> {
    /// A write-barrier buffer for the calling mutator thread (one per
    /// thread; give it back, by dropping it, before a thread blocks outside
    /// the runtime, and before the remark).
    pub fn mutator(&self) -> MutatorBuffer<'_, 'm, H, S> {
        MutatorBuffer::new(&self.core)
    }

    /// An incremental step on the calling thread (with
    /// [`CycleOptions::parallel_steps`], on the GC workers too, who share
    /// the budget): shades up to `budget` waiting entries (roots, then
    /// barrier entries handed off; holders to rescan wait for the remark),
    /// then scans up to `budget` objects, then precleans up to what is left of the
    /// budget (sets aside non-strong slots whose referents are marked, so
    /// that the remark judges fewer). Returns `Ok(true)` when no work is
    /// left for now (barrier buffers still held by threads may add more;
    /// the remark takes those). While another thread marks (the background,
    /// or a step) this returns `Ok(false)` at once.
    ///
    /// # Errors
    ///
    /// [`CycleError::Panicked`] once a part of the cycle has panicked.
    ///
    /// # Panics
    ///
    /// As [`Marker::mark`], when this step's marking panics; the cycle is
    /// poisoned from then on, the marker stays usable.
    pub fn step(&self, budget: usize) -> Result<bool, CycleError> {
        self.core.step(budget).map_err(|f| f.raise())
    }

    /// Runs `mutate` (the mutator's part of the cycle) while the GC workers
    /// mark in the background, and returns its result once they have
    /// stopped. The workers mark from the waiting entries, then from each
    /// barrier buffer handed off; with nothing to do they park (the cycle
    /// is [quiet](MarkCycle::is_quiet)) until a buffer arrives. Only the
    /// remark ends the cycle. The workers stop when `mutate` returns (or
    /// unwinds), after the step in progress: this call cannot return while
    /// any of them can still reach the heap.
    ///
    /// # Errors
    ///
    /// Without running `mutate`: [`CycleError::BackgroundRunning`] if
    /// another `concurrently` of this cycle runs (on another thread, or
    /// this call is nested in one); [`CycleError::Panicked`] once a part
    /// of the cycle has panicked; [`CycleError::Spawn`] if the coordinator
    /// thread could not start.
    ///
    /// # Panics
    ///
    /// If `mutate` panics, or a worker did (re-raised once `mutate` has
    /// returned; [`MarkCycle::is_quiet`] holds from the panic on, and the
    /// cycle is poisoned).
    pub fn concurrently<T>(&self, mutate: impl FnOnce() -> T) -> Result<T, CycleError> {
        self.core
            .queue
            .start()
            .map_err(|c| self.core.refusal(c).raise())?;
        let _joined = Joined(&self.core.queue);
        let (out, background) = std::thread::scope(|s| {
            let worker = std::thread::Builder::new()
                .name("stealmark-gc-coordinator".into())
                .spawn_scoped(s, || self.core.background())
                .map_err(|e| CycleError::Spawn {
                    message: e.to_string(),
                })?;
            let stop = StopOnDrop(&self.core.queue);
            let out = mutate();
            drop(stop);
            Ok((out, worker.join()))
        })?;
        match background {
            Ok(Ok(())) => Ok(out),
            Ok(Err(payload)) => std::panic::resume_unwind(payload),
            Err(payload) => Err(self.core.coordinator_lost(payload).raise()),
        }
    }

    /// Whether the background marking has nothing left to do for now:
    /// every entry handed off is marked from and traced, or the background
    /// stopped because of a panic. A good moment for the remark; buffers
    /// that threads still hold may add work.
    pub fn is_quiet(&self) -> bool {
        self.core.queue.is_quiet()
    }

    /// Blocks (without spinning) until the background marking is
    /// [quiet](MarkCycle::is_quiet), or no longer runs, or `timeout` has
    /// passed (`None`: no limit); whether it is quiet.
    pub fn wait_quiet(&self, timeout: Option<std::time::Duration>) -> bool {
        self.core.queue.wait_quiet(timeout)
    }

    /// The remark, in a pause (the caller has stopped its mutators: every
    /// [`MutatorBuffer`] is given back, which the borrow of `self` already
    /// proves for those not leaked): shades every barrier entry left and
    /// the current roots (`collection.roots`), completes the closure, then
    /// runs the runtime contract's steps (soft, weak, phantom, ephemerons,
    /// finalization of `collection.finalizable`) as a collection does.
    ///
    /// # Errors
    ///
    /// [`CycleError::Panicked`] if a part of the cycle panicked before;
    /// [`CycleError::LeakedBuffers`] if buffers were leaked instead of
    /// dropped. Either way no result is reported, and the marker stays
    /// usable.
    ///
    /// # Panics
    ///
    /// As [`Marker::mark`], if the remark's marking panics.
    pub fn finish<R, F>(
        self,
        collection: &Collection<'_, R, F>,
    ) -> Result<(Report<'m>, CycleStats), CycleError>
    where
        R: RootSource + ?Sized,
        F: RootSource + ?Sized,
    {
        let (marker, stats) = self.core.finish(collection).map_err(|f| f.raise())?;
        Ok((
            Report {
                stats: &*marker.stats_mut(),
            },
            stats,
        ))
    }
}

/// Stops the background marking when dropped (also when the mutator's
/// closure unwinds, so that the scope's join cannot wait forever).
struct StopOnDrop<'q>(&'q crate::satb::Queue<entry::Entry>);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Ends the background phase once its coordinator is joined (also when the
/// mutator's closure unwinds).
struct Joined<'q>(&'q crate::satb::Queue<entry::Entry>);

impl Drop for Joined<'_> {
    fn drop(&mut self) {
        self.0.joined();
    }
}
