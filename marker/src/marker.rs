//! [`Marker`]: the engine's handle, its worker pool, and the four ways to
//! run a collection.

use std::time::Instant;

use stealmark_model::{
    MarkBitmap, MarkIndex, MarkStore, ObjRef, ObjectModel, RootSource, SoftRefs,
};

use crate::collection::Collection;
use crate::config::{ConfigError, MarkerConfig};
use crate::cycle::spares::Spares;
use crate::driver::{Action, Collect, Outcome, Panic};
use crate::engines::Engines;
use crate::ephemeron::KeyIndex;
use crate::pool::Pool;
use crate::report::{Marking, Report};
use crate::roots::{Chunks, Erased};
use crate::stats::MarkStats;
use crate::termination::Termination;

/// The inputs of one part of a collection or mark cycle
/// ([`Marker::run_part`]).
pub(crate) struct Part<'a> {
    /// The chunks the part's marking step claims: the roots, or the
    /// entries of a cycle's barrier buffers.
    pub(crate) roots: &'a dyn Chunks,
    /// The holders a cycle's step scans again (the backward barrier's
    /// entries); none for a collection.
    pub(crate) rescans: &'a dyn Chunks,
    /// The registered finalizable objects.
    pub(crate) finalizable: &'a dyn Chunks,
    /// The soft-reference policy.
    pub(crate) soft: SoftRefs<'a>,
    /// What to run.
    pub(crate) action: Action,
    /// The collection's (or cycle's) time origin.
    pub(crate) start: Instant,
}

/// The parallel mark engine: persistent workers, their deques, and the
/// buffers of the last collection (reused by the next one).
///
/// See the [crate documentation](crate) for an embedding guide.
///
/// ```
/// use stealmark_marker::{MarkIndex, Marker, MarkerConfig, ObjRef, ObjectModel, SlotKind};
///
/// /// A heap of `n` objects where object `i` points to `2i+1` and `2i+2`.
/// struct Tree(usize);
/// impl ObjectModel for Tree {
///     fn size_bytes(&self, _: ObjRef) -> usize { 24 }
///     fn slot_count(&self, _: ObjRef) -> usize { 2 }
///     fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(&self, o: ObjRef, s: std::ops::Range<usize>, mut v: V) {
///         for k in s.start.min(2)..s.end.min(2) {
///             let c = 2 * o.index() + 1 + k;
///             if c < self.0 { v(k, ObjRef::from_index(c), SlotKind::Strong) }
///         }
///     }
///     fn prefetch(&self, _: ObjRef) {}
/// }
/// impl MarkIndex for Tree {
///     fn mark_index_bound(&self) -> usize { self.0 }
///     fn mark_index(&self, o: ObjRef) -> usize { o.index() }
/// }
///
/// let mut marker = Marker::new(MarkerConfig::with_workers(2)).unwrap();
/// let heap = Tree(1000);
/// let marking = marker.mark(&heap, &[ObjRef::from_index(0)]);
/// assert_eq!(marking.bitmap.count(), 1000);
/// assert_eq!(marking.report().live_bytes(), 24_000);
/// ```
pub struct Marker {
    config: MarkerConfig,
    pool: Pool,
    /// Boxed: its counters are padded to cache lines of their own, and a
    /// mark cycle that holds the marker inline stays a small allocation
    /// (see `cycle::spares::Spares`).
    term: Box<Termination>,
    engines: Engines,
    bitmap: MarkBitmap,
    stats: MarkStats,
    index: KeyIndex,
    /// Whether the last collection finished; if it panicked, the next one
    /// first empties every deque and stack (what the panicked one left).
    clean: bool,
    /// What the last mark cycle leaves for the next.
    pub(crate) spares: Spares,
}

impl Marker {
    /// Validates `config`, starts `config.workers - 1` worker threads (the
    /// thread that calls a collection is worker 0; the others are parked
    /// until the first step) and allocates their deques.
    pub fn new(config: MarkerConfig) -> Result<Marker, ConfigError> {
        config.validate()?;
        let engines = Engines::new(&config);
        Ok(Marker {
            pool: Pool::new(config.workers),
            term: Box::new(Termination::new()),
            engines,
            bitmap: MarkBitmap::default(),
            stats: MarkStats::default(),
            index: KeyIndex::new(),
            clean: true,
            spares: Spares::default(),
            config,
        })
    }

    /// The worker pool, for jobs other than a collection
    /// ([`Marker::run_tasks`]).
    pub(crate) fn pool(&self) -> &Pool {
        &self.pool
    }

    /// The current configuration.
    pub fn config(&self) -> &MarkerConfig {
        &self.config
    }

    /// Switches to `config`. Keeps the worker threads when the worker count
    /// is unchanged and the deques when their kind and capacity are too.
    pub fn reconfigure(&mut self, config: MarkerConfig) -> Result<(), ConfigError> {
        config.validate()?;
        let old = &self.config;
        if config.workers != old.workers
            || config.deque != old.deque
            || config.deque_capacity != old.deque_capacity
        {
            self.engines = Engines::new(&config);
            self.clean = true;
        }
        if config.workers != self.pool.workers() {
            self.pool = Pool::new(config.workers);
        }
        self.config = config;
        Ok(())
    }

    /// Marks everything reachable from `roots` (ephemerons included; soft
    /// references cleared, nothing finalizable) in the marker's own side
    /// bitmap: [`Marker::collect`] with [`Collection::new`].
    ///
    /// # Panics
    ///
    /// If a worker panicked (a heap whose [`ObjectModel`] breaks its
    /// contract), re-raising the worker's panic. The marker stays usable.
    pub fn mark<H: ObjectModel + MarkIndex>(&mut self, heap: &H, roots: &[ObjRef]) -> Marking<'_> {
        self.collect(heap, &Collection::new(roots))
    }

    /// Marks everything reachable from `roots` in `store` (for example mark
    /// bits in object headers), which the caller has cleared:
    /// [`Marker::collect_with`] with [`Collection::new`].
    ///
    /// # Panics
    ///
    /// As [`Marker::mark`].
    pub fn mark_with<H: ObjectModel, S: MarkStore<H>>(
        &mut self,
        heap: &H,
        roots: &[ObjRef],
        store: &S,
    ) -> Report<'_> {
        self.collect_with(heap, store, &Collection::new(roots))
    }

    /// Runs a whole collection (the strong closure, then the soft, weak,
    /// ephemeron and phantom slots and finalization, in the steps that
    /// [`StepKind`](crate::StepKind) lists in their order) in the
    /// marker's own side bitmap, which the workers clear first (each its own
    /// part, so that the bitmap's lines start out in the caches of the cores
    /// that mark).
    ///
    /// # Panics
    ///
    /// As [`Marker::mark`].
    pub fn collect<H, R, F>(&mut self, heap: &H, collection: &Collection<'_, R, F>) -> Marking<'_>
    where
        H: ObjectModel + MarkIndex,
        R: RootSource + ?Sized,
        F: RootSource + ?Sized,
    {
        let start = Instant::now();
        let mut bitmap = std::mem::take(&mut self.bitmap);
        bitmap.resize_uncleared(heap.mark_index_bound());
        let result = self.run(heap, &bitmap, collection, Some(&bitmap));
        self.bitmap = bitmap;
        self.finish(result, start);
        Marking {
            bitmap: &self.bitmap,
            stats: &self.stats,
        }
    }

    /// Runs a whole collection in `store`, the runtime's own mark bits (for
    /// example in object headers), which the caller has cleared. With one
    /// worker it marks through [`MarkStore::try_mark_unshared`]: no other
    /// thread may mark in `store` until it returns.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// use stealmark_marker::{Collection, MarkStore, Marker, MarkerConfig, ObjRef, ObjectModel, SlotKind};
    ///
    /// /// Object `i` has a mark flag and a weak reference to `i + 1`.
    /// struct Heap(Vec<AtomicBool>);
    /// impl ObjectModel for Heap {
    ///     fn size_bytes(&self, _: ObjRef) -> usize { 16 }
    ///     fn slot_count(&self, _: ObjRef) -> usize { 1 }
    ///     fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(&self, o: ObjRef, s: std::ops::Range<usize>, mut v: V) {
    ///         if s.start == 0 && s.end > 0 && o.index() + 1 < self.0.len() {
    ///             v(0, ObjRef::from_index(o.index() + 1), SlotKind::Weak);
    ///         }
    ///     }
    ///     fn prefetch(&self, _: ObjRef) {}
    /// }
    /// /// The mark bits are the heap's own flags.
    /// struct Flags;
    /// impl MarkStore<Heap> for Flags {
    ///     fn try_mark(&self, h: &Heap, o: ObjRef) -> bool {
    ///         !h.0[o.index()].swap(true, Ordering::Relaxed)
    ///     }
    ///     fn is_marked(&self, h: &Heap, o: ObjRef) -> bool {
    ///         h.0[o.index()].load(Ordering::Relaxed)
    ///     }
    /// }
    ///
    /// let heap = Heap((0..3).map(|_| AtomicBool::new(false)).collect());
    /// let mut marker = Marker::new(MarkerConfig::with_workers(2)).unwrap();
    /// let roots = [ObjRef::from_index(0)];
    /// let report = marker.collect_with(&heap, &Flags, &Collection::new(&roots[..]));
    /// // Only the root is marked; its weak field to object 1 is cleared.
    /// assert_eq!(report.live_objects(), 1);
    /// let cleared: Vec<_> = report.cleared().map(|w| (w.holder.index(), w.slot)).collect();
    /// assert_eq!(cleared, [(0, 0)]);
    /// ```
    ///
    /// # Panics
    ///
    /// As [`Marker::mark`].
    pub fn collect_with<H, S, R, F>(
        &mut self,
        heap: &H,
        store: &S,
        collection: &Collection<'_, R, F>,
    ) -> Report<'_>
    where
        H: ObjectModel,
        S: MarkStore<H>,
        R: RootSource + ?Sized,
        F: RootSource + ?Sized,
    {
        let start = Instant::now();
        let result = self.run(heap, store, collection, None);
        self.finish(result, start);
        Report { stats: &self.stats }
    }

    /// Runs the collection's steps; the payload of a worker's panic, if one
    /// panicked.
    fn run<H, S, R, F>(
        &mut self,
        heap: &H,
        store: &S,
        collection: &Collection<'_, R, F>,
        clear: Option<&MarkBitmap>,
    ) -> Result<(), Panic>
    where
        H: ObjectModel,
        S: MarkStore<H>,
        R: RootSource + ?Sized,
        F: RootSource + ?Sized,
    {
        let roots = Erased(collection.roots);
        let finalizable = Erased(collection.finalizable);
        let part = Part {
            roots: &roots,
            rescans: &Erased(&[] as &[ObjRef]),
            finalizable: &finalizable,
            soft: collection.soft_refs,
            action: Action::Collect,
            start: Instant::now(),
        };
        self.run_part(heap, store, part, clear, collection.solo)
            .map(|_| ())
    }

    /// Runs a whole collection or one part of a mark cycle (`crate::cycle`),
    /// on the calling thread alone if `solo` (`Collection::solo`, or
    /// `CycleOptions::solo` for every part of a cycle). A collection or a
    /// cycle's `Begin` first empties what a panicked one left behind; until
    /// a `Complete` (or a whole collection) succeeds, the marker counts as
    /// not clean.
    pub(crate) fn run_part<H, S>(
        &mut self,
        heap: &H,
        store: &S,
        part: Part<'_>,
        clear: Option<&MarkBitmap>,
        solo: bool,
    ) -> Result<Outcome, Panic>
    where
        H: ObjectModel,
        S: MarkStore<H>,
    {
        let drain = !self.clean;
        if matches!(part.action, Action::Collect | Action::Begin) {
            self.clean = false;
        }
        self.config.deque.dispatch(Collect {
            engines: &mut self.engines,
            pool: &self.pool,
            term: &self.term,
            index: &mut self.index,
            config: &self.config,
            stats: &mut self.stats,
            heap,
            store,
            roots: part.roots,
            rescans: part.rescans,
            finalizable: part.finalizable,
            soft: part.soft,
            clear,
            drain,
            action: part.action,
            start: part.start,
            solo,
        })
    }

    /// The report of the last collection (what [`Marker::collect_with`]
    /// returned), for a caller that could not keep the borrow: a binding
    /// that hands results out across calls. Empty before the first
    /// collection; after a collection that panicked, the partial records of
    /// that collection (do not trust them).
    pub fn last_report(&self) -> Report<'_> {
        Report { stats: &self.stats }
    }

    /// The side-bitmap form of [`Marker::last_report`]: the marker's bitmap
    /// as the last [`Marker::collect`] or [`Marker::mark`] left it (after a
    /// [`Marker::collect_with`], a bitmap that collection did not use).
    pub fn last_marking(&self) -> Marking<'_> {
        Marking {
            bitmap: &self.bitmap,
            stats: &self.stats,
        }
    }

    /// The statistics of the last collection (or of the cycle so far).
    pub(crate) fn stats_mut(&mut self) -> &mut MarkStats {
        &mut self.stats
    }

    /// Records the pause, or re-raises a worker's panic.
    pub(crate) fn finish(&mut self, result: Result<(), Panic>, start: Instant) {
        if let Err(payload) = result {
            std::panic::resume_unwind(payload);
        }
        self.clean = true;
        self.stats.pause_ns = start.elapsed().as_nanos() as u64;
    }
}
