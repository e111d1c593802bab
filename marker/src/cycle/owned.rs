//! The owned form of a mark cycle: [`OwnedCycle`] holds the marker and
//! shares the heap and the store through `Arc`, so that a virtual machine
//! keeps it in its global state; [`OwnedMutator`] is a mutator thread's
//! barrier handle, kept in the thread's own state for the whole cycle.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::Mutex;
use stealmark_model::{MarkStore, ObjRef, ObjectModel, RootSource};

use super::buffer::Recorder;
use super::core::{Core, Failure, Shared};
use super::entry::Entry;
use super::{CycleError, CycleOptions, CycleStats};
use crate::collection::Collection;
use crate::driver::Panic;
use crate::marker::Marker;
use crate::report::Report;
use crate::satb::BUFFER_CAPACITY;

/// A mark cycle that owns its marker and shares the heap and the store
/// through `Arc`: the same cycle as [`MarkCycle`](super::MarkCycle) (one
/// implementation), for a runtime that starts a cycle in one call, lets
/// its mutator threads run with an [`OwnedMutator`] each, and finishes the
/// cycle later from another call.
///
/// # Thread rules
///
/// `OwnedCycle` is `Send` and `Sync`: every method takes `&self` and may
/// be called from any thread, also at the same time.
/// - [`start_background`](OwnedCycle::start_background) starts the GC
///   workers marking in the background; a second start while they run is
///   refused ([`CycleError::BackgroundRunning`]).
///   [`stop_background`](OwnedCycle::stop_background) stops them and waits
///   until no worker can reach the heap; [`wait_quiet`](OwnedCycle::wait_quiet)
///   blocks (no spinning) until they have nothing to do.
/// - [`step`](OwnedCycle::step) marks on the calling thread; while another
///   thread marks it returns `Ok(false)` at once.
/// - [`finish`](OwnedCycle::finish) is the remark: the runtime has stopped
///   its mutators, and each has [detached](OwnedMutator::detach) its
///   handle (or dropped it); otherwise it refuses, and the cycle goes on.
/// - [`abandon`](OwnedCycle::abandon) ends the cycle without a result and
///   gives the marker back.
///
/// The rules of the barrier (writes, allocation, weak referents) are
/// [`MarkCycle`](super::MarkCycle)'s. A panic of any part poisons the
/// cycle: every later call returns [`CycleError::Panicked`] (no call
/// re-raises it); [`abandon`](OwnedCycle::abandon) then gives the marker
/// back, usable.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
/// use stealmark_marker::{Collection, CycleOptions, MarkStore, Marker, MarkerConfig, ObjRef, ObjectModel, OwnedCycle, SlotKind};
///
/// /// Objects with one reference slot each (0: null, else index + 1).
/// struct Heap(Vec<AtomicUsize>);
/// impl ObjectModel for Heap {
///     fn size_bytes(&self, _: ObjRef) -> usize { 16 }
///     fn slot_count(&self, _: ObjRef) -> usize { 1 }
///     fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(&self, o: ObjRef, s: std::ops::Range<usize>, mut v: V) {
///         let w = self.0[o.index()].load(Relaxed);
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
/// // 0 -> 1 -> 2; object 3 is free space.
/// let heap = Arc::new(Heap([2, 3, 0, 0].into_iter().map(AtomicUsize::new).collect()));
/// let bits = Arc::new(Bits((0..4).map(|_| AtomicBool::new(false)).collect()));
/// let roots = [ObjRef::from_index(0)];
/// let marker = Marker::new(MarkerConfig::with_workers(2)).unwrap();
/// // The runtime's "start a cycle" call: the cycle lives in its state.
/// let cycle = Arc::new(OwnedCycle::start(marker, heap.clone(), bits.clone(), &roots[..], CycleOptions::default()));
/// cycle.start_background().unwrap();
/// // A mutator thread keeps its handle for as long as it likes.
/// let thread = {
///     let (cycle, heap) = (cycle.clone(), heap.clone());
///     std::thread::spawn(move || {
///         let mut barrier = cycle.mutator();
///         barrier.allocate_black(ObjRef::from_index(3)).unwrap();
///         barrier.pre_write(Some(ObjRef::from_index(1))).unwrap();
///         heap.0[0].store(4, Relaxed);
///         barrier.detach().unwrap(); // at its safepoint, before the remark
///         barrier // kept in the thread's state
///     })
/// };
/// let barrier = thread.join().unwrap();
/// cycle.wait_quiet(None);
/// // The runtime's "finish" call, from any thread: the remark.
/// let mut done = cycle.finish(&Collection::new(&roots[..])).unwrap();
/// assert!((0..4).all(|i| bits.0[i].load(Relaxed)));
/// assert_eq!(done.report().live_objects(), 3);
/// assert_eq!(done.stats().allocated_black, 1);
/// // A handle used after its cycle ended says so.
/// let mut barrier = barrier;
/// assert!(barrier.pre_write(Some(ObjRef::from_index(2))).is_err());
/// let _marker: Marker = done.into_marker(); // for the next collection
/// ```
pub struct OwnedCycle<H: ObjectModel, S: MarkStore<H>> {
    core: Arc<Core<Shared<H, S>>>,
    /// The background coordinator, while it runs.
    coordinator: Mutex<Option<JoinHandle<Result<(), Panic>>>>,
}

/// A finished cycle: the marker, whose report is the cycle's result, and
/// the cycle's figures.
pub struct Finished {
    marker: Marker,
    stats: CycleStats,
}

impl Finished {
    /// The cycle's result: marks, slots to clear, objects to finalize,
    /// live counts (objects allocated black are in
    /// [`CycleStats::allocated_black`], not in
    /// [`Report::live_objects`]).
    pub fn report(&mut self) -> Report<'_> {
        Report {
            stats: &*self.marker.stats_mut(),
        }
    }

    /// What the cycle did besides marking.
    pub fn stats(&self) -> &CycleStats {
        &self.stats
    }

    /// The marker, for the next collection or cycle.
    pub fn into_marker(self) -> Marker {
        self.marker
    }
}

impl<H, S> OwnedCycle<H, S>
where
    H: ObjectModel + Send + Sync + 'static,
    S: MarkStore<H> + Send + Sync + 'static,
{
    /// Starts a mark cycle of `heap` in `store` (cleared by the caller),
    /// taking `marker` for the cycle's length: the start's pause copies
    /// the roots and nothing more.
    pub fn start<R: RootSource + ?Sized>(
        marker: Marker,
        heap: Arc<H>,
        store: Arc<S>,
        roots: &R,
        options: CycleOptions,
    ) -> OwnedCycle<H, S> {
        OwnedCycle {
            core: Arc::new(Core::begin(marker, Shared { heap, store }, roots, options)),
            coordinator: Mutex::new(None),
        }
    }

    /// A barrier handle for a mutator thread (one per thread), attached
    /// (holding a buffer) from its first barrier call on.
    pub fn mutator(&self) -> OwnedMutator<H, S> {
        OwnedMutator {
            core: Arc::clone(&self.core),
            rec: Recorder::detached(),
        }
    }

    /// An incremental step on the calling thread (as
    /// [`MarkCycle::step`](super::MarkCycle::step)).
    ///
    /// # Errors
    ///
    /// [`CycleError::Panicked`] if this step or an earlier part panicked;
    /// [`CycleError::Ended`] after the remark.
    pub fn step(&self, budget: usize) -> Result<bool, CycleError> {
        self.core.step(budget).map_err(Failure::into_error)
    }

    /// Starts the background marking on the GC workers, until
    /// [`OwnedCycle::stop_background`] (or the remark).
    ///
    /// # Errors
    ///
    /// [`CycleError::BackgroundRunning`] while it runs;
    /// [`CycleError::Panicked`] once poisoned; [`CycleError::Ended`] after
    /// the remark; [`CycleError::Spawn`].
    pub fn start_background(&self) -> Result<(), CycleError> {
        let mut slot = self.coordinator.lock();
        self.core
            .queue
            .start()
            .map_err(|c| self.core.refusal(c).into_error())?;
        let core = Arc::clone(&self.core);
        match std::thread::Builder::new()
            .name("stealmark-gc-coordinator".into())
            .spawn(move || core.background())
        {
            Ok(handle) => {
                *slot = Some(handle);
                Ok(())
            }
            Err(e) => {
                self.core.queue.joined();
                Err(CycleError::Spawn {
                    message: e.to_string(),
                })
            }
        }
    }

    /// Stops the background marking and waits until its workers have
    /// finished their step; nothing to do if it does not run.
    ///
    /// # Errors
    ///
    /// [`CycleError::Panicked`] if the background marking panicked (it
    /// stopped then; the cycle is poisoned).
    pub fn stop_background(&self) -> Result<(), CycleError> {
        let mut slot = self.coordinator.lock();
        let Some(handle) = slot.take() else {
            return Ok(());
        };
        self.core.queue.stop();
        let joined = handle.join();
        self.core.queue.joined();
        match joined {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(self.core.refusal(crate::satb::Closed::Failed).into_error()),
            Err(payload) => Err(self.core.coordinator_lost(payload).into_error()),
        }
    }

    /// Whether the background marking has nothing left to do for now (or
    /// stopped because of a panic).
    pub fn is_quiet(&self) -> bool {
        self.core.queue.is_quiet()
    }

    /// Blocks (without spinning) until the background marking is quiet,
    /// or no longer runs, or `timeout` has passed; whether it is quiet.
    pub fn wait_quiet(&self, timeout: Option<Duration>) -> bool {
        self.core.queue.wait_quiet(timeout)
    }

    /// Runs `mutate` with the background marking on, as
    /// [`MarkCycle::concurrently`](super::MarkCycle::concurrently), built
    /// on [`OwnedCycle::start_background`] and
    /// [`OwnedCycle::stop_background`].
    ///
    /// # Errors
    ///
    /// As `start_background` (then `mutate` does not run), and
    /// [`CycleError::Panicked`] if the background marking panicked.
    pub fn concurrently<T>(&self, mutate: impl FnOnce() -> T) -> Result<T, CycleError> {
        self.start_background()?;
        let out = StopOnDrop(self);
        let value = mutate();
        std::mem::forget(out);
        self.stop_background().map(|()| value)
    }

    /// The remark (as [`MarkCycle::finish`](super::MarkCycle::finish)):
    /// stops the background marking first. On success the cycle has ended
    /// and the marker comes back in [`Finished`].
    ///
    /// # Errors
    ///
    /// [`CycleError::LeakedBuffers`] while handles are attached (the cycle
    /// goes on: detach them and finish again); [`CycleError::Panicked`]
    /// if a part panicked (then [`OwnedCycle::abandon`]);
    /// [`CycleError::Ended`] after a remark or an abandon.
    pub fn finish<R, F>(&self, collection: &Collection<'_, R, F>) -> Result<Finished, CycleError>
    where
        R: RootSource + ?Sized,
        F: RootSource + ?Sized,
    {
        self.stop_background()?;
        let (marker, stats) = self.core.finish(collection).map_err(Failure::into_error)?;
        Ok(Finished { marker, stats })
    }

    /// Ends the cycle without a result (after a failure, or when the
    /// runtime gives up) and gives the marker back; handles still attached
    /// report [`CycleError::Ended`] from their next hand-off on.
    ///
    /// # Errors
    ///
    /// [`CycleError::Ended`] if the marker was already given back.
    pub fn abandon(&self) -> Result<Marker, CycleError> {
        let _ = self.stop_background();
        self.core.abandon().map_err(Failure::into_error)
    }
}

impl<H: ObjectModel, S: MarkStore<H>> Drop for OwnedCycle<H, S> {
    fn drop(&mut self) {
        if let Some(handle) = self.coordinator.get_mut().take() {
            self.core.queue.stop();
            let _ = handle.join();
            self.core.queue.joined();
        }
    }
}

/// Stops the background marking if `mutate` unwinds.
struct StopOnDrop<'c, H, S>(&'c OwnedCycle<H, S>)
where
    H: ObjectModel + Send + Sync + 'static,
    S: MarkStore<H> + Send + Sync + 'static;

impl<H, S> Drop for StopOnDrop<'_, H, S>
where
    H: ObjectModel + Send + Sync + 'static,
    S: MarkStore<H> + Send + Sync + 'static,
{
    fn drop(&mut self) {
        let _ = self.0.stop_background();
    }
}

/// A mutator thread's barrier handle for an [`OwnedCycle`], which the
/// thread keeps in its own state for the whole cycle.
///
/// It is attached (holds a buffer, counted by the cycle) from its first
/// barrier call until [`detach`](OwnedMutator::detach), which hands the
/// entries off and gives the buffer back; the next barrier call attaches
/// again. A thread detaches at its safepoint before the remark, and on its
/// way into native code or a blocking call.
///
/// # Thread rules
///
/// One thread uses a handle at a time (its methods take `&mut self`; it is
/// `Send`). A handle used after its cycle ended (remarked or abandoned)
/// returns [`CycleError::Ended`]: attaching is refused, and a hand-off of
/// an abandoned cycle's buffer too. Entries recorded are never dropped
/// silently while the cycle can still report a result.
pub struct OwnedMutator<H: ObjectModel, S: MarkStore<H>> {
    core: Arc<Core<Shared<H, S>>>,
    rec: Recorder,
}

impl<H: ObjectModel, S: MarkStore<H>> OwnedMutator<H, S> {
    /// The write barrier: call it with a reference slot's old value before
    /// overwriting the slot (`None` for a null slot). The fast path reads
    /// the cycle's poisoned flag, skips a null (a detached handle's reads
    /// whether the cycle has ended), compares the length with the
    /// capacity (a detached handle has none), and appends.
    ///
    /// # Errors
    ///
    /// [`CycleError::Ended`] after the cycle ended; [`CycleError::Panicked`]
    /// once a part of the cycle panicked (also an assist's, on this thread).
    #[inline]
    pub fn pre_write(&mut self, old: Option<ObjRef>) -> Result<(), CycleError> {
        if self.core.queue.failed() {
            return Err(self.refused());
        }
        match old {
            Some(old) => self.record(Entry::shade(old)),
            None if !self.rec.attached => self.rec.check_attach(&self.core),
            None => Ok(()),
        }
    }

    /// The incremental-update barrier's forward half (as
    /// [`MutatorBuffer::shade`](super::MutatorBuffer::shade)).
    ///
    /// # Errors
    ///
    /// As [`OwnedMutator::pre_write`].
    #[inline]
    pub fn shade(&mut self, value: ObjRef) -> Result<(), CycleError> {
        if self.core.queue.failed() {
            return Err(self.refused());
        }
        self.record(Entry::shade(value))
    }

    /// The incremental-update barrier's backward half (as
    /// [`MutatorBuffer::rescan`](super::MutatorBuffer::rescan)).
    ///
    /// # Errors
    ///
    /// As [`OwnedMutator::pre_write`].
    #[inline]
    pub fn rescan(&mut self, holder: ObjRef) -> Result<(), CycleError> {
        if self.core.queue.failed() {
            return Err(self.refused());
        }
        self.record(Entry::rescan(holder))
    }

    /// Appends `entry`, attaching or handing off first when there is no
    /// room.
    #[inline(always)]
    fn record(&mut self, entry: Entry) -> Result<(), CycleError> {
        if !self.rec.attached || self.rec.entries.len() >= BUFFER_CAPACITY {
            self.make_room()?;
        }
        self.rec.entries.push(entry);
        Ok(())
    }

    /// Marks a newly allocated object black (as
    /// [`MutatorBuffer::allocate_black`](super::MutatorBuffer::allocate_black)).
    ///
    /// # Errors
    ///
    /// [`CycleError::Ended`] after the cycle ended (the object is not
    /// marked: the store may already serve the next cycle);
    /// [`CycleError::Panicked`] once a part of the cycle panicked;
    /// [`CycleError::BlackAllocationOff`] in a cycle started with
    /// [`CycleOptions::black_allocation`](crate::CycleOptions::black_allocation)
    /// off.
    #[inline]
    pub fn allocate_black(&mut self, obj: ObjRef) -> Result<(), CycleError> {
        if !self.core.allocates_black() {
            return Err(CycleError::BlackAllocationOff);
        }
        if self.core.queue.failed() {
            return Err(self.refused());
        }
        if !self.rec.attached {
            self.make_room()?;
        }
        self.rec.allocate_black(&self.core, obj);
        Ok(())
    }

    /// Hands the entries recorded so far to the marker, and stays attached.
    ///
    /// # Errors
    ///
    /// As [`OwnedMutator::pre_write`].
    pub fn flush(&mut self) -> Result<(), CycleError> {
        if self.rec.entries.is_empty() {
            return Ok(());
        }
        self.rec
            .hand_off(&self.core, true)
            .map_err(Failure::into_error)
    }

    /// Hands the entries off and gives the buffer back: the remark no
    /// longer waits for this thread. The next barrier call attaches again.
    ///
    /// # Errors
    ///
    /// As [`OwnedMutator::pre_write`]; the handle is detached anyway.
    pub fn detach(&mut self) -> Result<(), CycleError> {
        self.rec.detach(&self.core).map_err(Failure::into_error)
    }

    /// Whether the handle holds a buffer of its cycle.
    pub fn is_attached(&self) -> bool {
        self.rec.attached
    }

    /// The refusal of a poisoned cycle: [`CycleError::Ended`] once it has
    /// ended (abandoned or finished), as for any handle that outlived its
    /// cycle; [`CycleError::Panicked`] until then.
    #[cold]
    #[inline(never)]
    fn refused(&self) -> CycleError {
        let closed = if self.core.queue.ended() {
            crate::satb::Closed::Ended
        } else {
            crate::satb::Closed::Failed
        };
        self.core.refusal(closed).into_error()
    }

    #[cold]
    #[inline(never)]
    fn make_room(&mut self) -> Result<(), CycleError> {
        let r = if self.rec.attached {
            self.rec.hand_off(&self.core, false)
        } else {
            self.rec.attach(&self.core)
        };
        r.map_err(Failure::into_error)
    }
}

impl<H: ObjectModel, S: MarkStore<H>> Drop for OwnedMutator<H, S> {
    fn drop(&mut self) {
        let _ = self.rec.detach(&self.core);
    }
}
