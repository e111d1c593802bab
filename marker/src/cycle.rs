//! [`MarkCycle`]: a mark cycle that runs while the mutator does, in steps on
//! the mutator's thread (incremental marking) or on the GC workers in the
//! background (concurrent marking), with a snapshot-at-the-beginning write
//! barrier ([`MutatorBuffer`]); and its remark, [`MarkCycle::finish`].

mod buffer;

use std::fmt;
use std::time::Instant;

use parking_lot::Mutex;
use stealmark_model::{MarkStore, ObjRef, ObjectModel, RootSource, SoftRefPolicy, SoftRefs};

pub use buffer::MutatorBuffer;

use crate::collection::Collection;
use crate::driver::{Action, Outcome, Panic};
use crate::marker::{Marker, Part};
use crate::report::Report;
use crate::roots::{Chunks, Erased};
use crate::satb::{Queue, Work};
use crate::stats::StepKind;

/// An empty root source.
const NO_REFS: &[ObjRef] = &[];

/// Why a mark cycle's remark could not complete the snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CycleError {
    /// Mutator buffers were never given back (leaked with
    /// `std::mem::forget`): the references they recorded are lost, so the
    /// marking may miss objects reachable at the cycle's start.
    LeakedBuffers {
        /// Buffers still counted as held.
        held: usize,
    },
}

impl fmt::Display for CycleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CycleError::LeakedBuffers { held } => write!(
                f,
                "the remark found {held} mutator buffer(s) of this mark cycle never given back \
                 (leaked, not dropped): the overwritten references they recorded are lost"
            ),
        }
    }
}

impl std::error::Error for CycleError {}

/// What a mark cycle did besides marking, for its caller's accounting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CycleStats {
    /// Steps the background workers ran (concurrent marking).
    pub background_steps: u64,
    /// Incremental steps ([`MarkCycle::step`] calls that ran).
    pub increments: u64,
    /// Wall time of the background steps and increments, in nanoseconds
    /// (marking outside the pauses).
    pub marking_ns: u64,
    /// The start's pause (the root snapshot), in nanoseconds.
    pub start_pause_ns: u64,
    /// The remark's pause, in nanoseconds.
    pub remark_ns: u64,
    /// Barrier buffers handed off (full, or flushed partly full).
    pub buffers: u64,
    /// Objects allocated black through [`MutatorBuffer::allocate_black`].
    pub allocated_black: u64,
}

/// A mark cycle in progress: from [`Marker::start`] to
/// [`MarkCycle::finish`]. Marking proceeds in incremental steps
/// ([`MarkCycle::step`], on the caller's thread) or in the background
/// ([`MarkCycle::concurrently`], on the GC workers) while the mutator runs;
/// each mutator thread records, through its own [`MutatorBuffer`], the old
/// value of every reference slot it overwrites, and allocates black.
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
/// });
/// let (report, _stats) = cycle.finish(&Collection::new(&roots[..])).unwrap();
/// // Everything reachable at the start (0, 1, 2) and the new object 3.
/// assert!((0..4).all(|i| bits.0[i].load(Relaxed)));
/// assert_eq!(report.live_objects(), 3); // scanned; 3 was allocated black
/// ```
pub struct MarkCycle<'m, H, S> {
    heap: &'m H,
    store: &'m S,
    queue: Queue,
    /// The marker and the entries waiting to be shaded: held by whoever
    /// marks (an increment, the background coordinator, the remark).
    inner: Mutex<Inner<'m>>,
}

/// The marking side of a cycle.
struct Inner<'m> {
    marker: &'m mut Marker,
    /// Entries to shade: the root snapshot, then the barrier's entries.
    pending: Vec<ObjRef>,
    start: Instant,
    stats: CycleStats,
}

/// The soft-reference policy that keeps every referent, asked at the
/// remark instead of tracing soft slots as strong (those found while the
/// cycle ran were recorded, not traced).
struct KeepEvery;

impl SoftRefPolicy for KeepEvery {
    fn keep(&self, _: ObjRef) -> bool {
        true
    }
}

impl Marker {
    /// Starts a mark cycle of `heap` in `store` (cleared by the caller, as
    /// for [`Marker::collect_with`]): the start's pause copies the roots
    /// (the snapshot's roots) and nothing more. See [`MarkCycle`].
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
        let start = Instant::now();
        let mut pending = Vec::new();
        for chunk in 0..roots.chunk_count() {
            roots.scan_chunk(chunk, |r| pending.push(r));
        }
        let part = Part {
            roots: &Erased(NO_REFS),
            finalizable: &Erased(NO_REFS),
            soft: SoftRefs::ClearAll,
            action: Action::Begin,
            start,
        };
        // `Begin` runs no step: nothing can panic.
        let _ = self.run_part(heap, store, part, None);
        let stats = CycleStats {
            start_pause_ns: start.elapsed().as_nanos() as u64,
            ..CycleStats::default()
        };
        MarkCycle {
            heap,
            store,
            queue: Queue::new(),
            inner: Mutex::new(Inner {
                marker: self,
                pending,
                start,
                stats,
            }),
        }
    }
}

impl<'m, H: ObjectModel, S: MarkStore<H>> MarkCycle<'m, H, S> {
    /// A write-barrier buffer for the calling mutator thread (one per
    /// thread; give it back, by dropping it, before a thread blocks outside
    /// the runtime, and before the remark).
    pub fn mutator(&self) -> MutatorBuffer<'_, 'm, H, S> {
        MutatorBuffer::new(self)
    }

    /// An incremental step on the calling thread: shades up to `budget`
    /// waiting entries (roots, then barrier entries handed off), then scans
    /// up to `budget` objects, then precleans up to what is left of the
    /// budget (sets aside non-strong slots whose referents are marked, so
    /// that the remark judges fewer). Returns `true` when no work is left
    /// for now (barrier buffers still held by threads may add more; the
    /// remark takes those). While [`MarkCycle::concurrently`] runs, the
    /// background workers mark and this returns `false` at once.
    ///
    /// # Panics
    ///
    /// As [`Marker::mark`]; the marker stays usable, the cycle is lost.
    pub fn step(&self, budget: usize) -> bool {
        let Some(mut inner) = self.inner.try_lock() else {
            return false;
        };
        let inner = &mut *inner;
        let full = self.queue.take_full();
        for b in &full {
            inner.pending.extend_from_slice(b);
        }
        self.queue.recycle(full.into_iter());
        let cut = inner.pending.len().saturating_sub(budget);
        let shade = inner.pending.split_off(cut);
        let t0 = Instant::now();
        let outcome = match self.run(inner, &shade, Action::Increment(budget.max(1))) {
            Ok(outcome) => outcome,
            Err(payload) => std::panic::resume_unwind(payload),
        };
        inner.stats.increments += 1;
        inner.stats.marking_ns += t0.elapsed().as_nanos() as u64;
        outcome == Outcome::Done && inner.pending.is_empty()
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
    /// # Panics
    ///
    /// If `mutate` panics, or a worker did (re-raised once `mutate` has
    /// returned; [`MarkCycle::is_quiet`] holds from the panic on).
    pub fn concurrently<T>(&self, mutate: impl FnOnce() -> T) -> T {
        self.queue.restart();
        let (out, background) = std::thread::scope(|s| {
            let worker = std::thread::Builder::new()
                .name("stealmark-gc-coordinator".into())
                .spawn_scoped(s, || self.background())
                .expect("failed to spawn the GC coordinator thread");
            let stop = StopOnDrop(&self.queue);
            let out = mutate();
            drop(stop);
            (out, worker.join())
        });
        match background {
            Ok(Ok(())) => out,
            Ok(Err(payload)) | Err(payload) => std::panic::resume_unwind(payload),
        }
    }

    /// Whether the background marking has nothing left to do for now:
    /// every entry handed off is marked from and traced. A good moment for
    /// the remark; buffers that threads still hold may add work.
    pub fn is_quiet(&self) -> bool {
        self.queue.is_quiet()
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
    /// [`CycleError::LeakedBuffers`] if buffers were leaked instead of
    /// dropped; the marker stays usable.
    ///
    /// # Panics
    ///
    /// As [`Marker::mark`].
    pub fn finish<R, F>(
        self,
        collection: &Collection<'_, R, F>,
    ) -> Result<(Report<'m>, CycleStats), CycleError>
    where
        R: RootSource + ?Sized,
        F: RootSource + ?Sized,
    {
        let remark = Instant::now();
        let mut inner = self.inner.into_inner();
        let full = self
            .queue
            .take_remaining()
            .map_err(|held| CycleError::LeakedBuffers { held })?;
        for b in &full {
            inner.pending.extend_from_slice(b);
        }
        let (allocated, buffers) = self.queue.totals();
        let soft = match collection.soft_refs {
            SoftRefs::KeepAll => SoftRefs::Ask(&KeepEvery),
            other => other,
        };
        let pending = std::mem::take(&mut inner.pending);
        let roots = Erased(collection.roots);
        let finalizable = Erased(collection.finalizable);
        let mut result = Ok(());
        for (source, action) in [
            (
                &Erased(&pending[..]) as &dyn Chunks,
                Action::Trace(StepKind::Satb),
            ),
            (&roots, Action::Trace(StepKind::Roots)),
            (&roots, Action::Complete),
        ] {
            let part = Part {
                roots: source,
                finalizable: &finalizable,
                soft,
                action,
                start: inner.start,
            };
            if let Err(payload) = inner.marker.run_part(self.heap, self.store, part, None) {
                result = Err(payload);
                break;
            }
        }
        let marker = inner.marker;
        marker.finish(result, remark);
        let mut stats = inner.stats;
        stats.remark_ns = remark.elapsed().as_nanos() as u64;
        stats.allocated_black = allocated;
        stats.buffers = buffers;
        Ok((
            Report {
                stats: &*marker.stats_mut(),
            },
            stats,
        ))
    }

    /// The background coordinator: a `satb` step over the waiting entries,
    /// then one per batch of buffers handed off, parking in between, until
    /// stopped.
    fn background(&self) -> Result<(), Panic> {
        let mut inner = self.inner.lock();
        let inner = &mut *inner;
        let result = loop {
            let t0 = Instant::now();
            let pending = std::mem::take(&mut inner.pending);
            let r = self
                .run(inner, &pending, Action::Trace(StepKind::Satb))
                .and_then(|_| self.run(inner, NO_REFS, Action::Trace(StepKind::Preclean)));
            inner.pending = pending;
            inner.pending.clear();
            inner.stats.background_steps += 1;
            inner.stats.marking_ns += t0.elapsed().as_nanos() as u64;
            if let Err(payload) = r {
                break Err(payload);
            }
            match self.queue.next_work() {
                Work::Stop => break Ok(()),
                Work::Buffers(full) => {
                    for b in &full {
                        inner.pending.extend_from_slice(b);
                    }
                    self.queue.recycle(full.into_iter());
                }
            }
        };
        // A worker's panic ends the background marking: the queue is told
        // to stop, so that `is_quiet` holds and the mutator can return.
        self.queue.stop();
        result
    }

    /// Runs one part of the cycle over `entries`; re-raises nothing (the
    /// background returns the panic to `concurrently`). Soft slots are
    /// recorded, not traced, and counted for a policy to ask (`KeepEvery`
    /// stands for whichever the remark gets; no step of these parts asks
    /// it).
    fn run(
        &self,
        inner: &mut Inner<'m>,
        entries: &[ObjRef],
        action: Action,
    ) -> Result<Outcome, Panic> {
        let part = Part {
            roots: &Erased(entries),
            finalizable: &Erased(NO_REFS),
            soft: SoftRefs::Ask(&KeepEvery),
            action,
            start: inner.start,
        };
        inner.marker.run_part(self.heap, self.store, part, None)
    }
}

/// Stops the background marking when dropped (also when the mutator's
/// closure unwinds, so that the scope's join cannot wait forever).
struct StopOnDrop<'q>(&'q Queue);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}
