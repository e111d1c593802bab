//! The stealmark parallel mark engine.
//!
//! A [`Marker`] owns a pool of persistent GC worker threads, parked between
//! collections (the thread that calls [`Marker::mark`] is worker 0), and one work-stealing deque per worker. Each call to
//! [`Marker::mark`] traces a heap (any [`ObjectModel`]) from a set of roots,
//! in the style of Flood et al. (2001):
//!
//! - each worker marks its share of the roots, then pops grey objects from
//!   its private stack (else its deque), through a small prefetch FIFO, and
//!   scans them; each target's mark word is prefetched through a second
//!   FIFO, and the targets whose mark bit it set go on its private stack;
//! - a worker shares its oldest private objects through its deque: a small
//!   reserve while everyone is busy, generously while anyone is hungry;
//! - a worker whose deque is empty steals (one item or half a deque) from
//!   random victims; a worker with work may balance early, by the configured
//!   [`BalancePolicy`];
//! - large arrays are scanned in chunks claimed through an atomic counter,
//!   so one big array is marked in parallel;
//! - a bounded (`abp`) deque overflows into storage shared by all workers;
//! - termination is detected through one global status word; idle workers
//!   spin, yield, then park, and busy workers wake them in proportion to the
//!   work they have to spare.
//!
//! The engine is generic over the deque kind and the heap, and monomorphised:
//! the run-time [`MarkerConfig::deque`], any [`DequeKind`], picks the
//! instantiation through [`DequeKind::dispatch`], once in [`Marker::new`]
//! (which makes that kind's deques) and once per phase (which runs the mark
//! loop compiled for that kind).
//!
//! ```
//! use stealmark_marker::{MarkIndex, ObjRef, ObjectModel, SlotKind};
//! use stealmark_marker::{Marker, MarkerConfig};
//!
//! /// A heap of `n` objects where object `i` points to `2i+1` and `2i+2`.
//! struct Tree(usize);
//! impl ObjectModel for Tree {
//!     fn size_bytes(&self, _: ObjRef) -> usize { 24 }
//!     fn slot_count(&self, _: ObjRef) -> usize { 2 }
//!     fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(&self, o: ObjRef, s: std::ops::Range<usize>, mut v: V) {
//!         for k in s.start.min(2)..s.end.min(2) {
//!             let c = 2 * o.index() + 1 + k;
//!             if c < self.0 { v(k, ObjRef::from_index(c), SlotKind::Strong) }
//!         }
//!     }
//!     fn prefetch(&self, _: ObjRef) {}
//! }
//! impl MarkIndex for Tree {
//!     fn mark_index_bound(&self) -> usize { self.0 }
//!     fn mark_index(&self, o: ObjRef) -> usize { o.index() }
//! }
//!
//! let mut marker = Marker::new(MarkerConfig::with_workers(2)).unwrap();
//! let heap = Tree(1000);
//! let root = ObjRef::from_index(0);
//! let marking = marker.mark(&heap, &[root]);
//! assert_eq!(marking.bitmap.count(), 1000);
//! assert_eq!(marking.stats.objects_marked(), 1000);
//! ```

mod arrays;
#[cfg(feature = "bench")]
pub mod bench;
mod config;
mod fifo;
mod overflow;
mod pool;
mod private;
#[cfg(feature = "bench")]
pub mod sequential;
mod stats;
// std, parking_lot and crossbeam-utils primitives, loom's under `--cfg loom`,
// where the module is public for the loom models (`tests/loom.rs`).
#[cfg(not(loom))]
mod sync;
#[cfg(loom)]
#[doc(hidden)]
pub mod sync;
mod termination;
mod worker;

use std::any::Any;
use std::time::Instant;

use parking_lot::Mutex;
use stealmark_deques::{DequeVisitor, WorkDeque};

pub use config::{
    BalancePolicy, ConfigError, DequeKind, MarkerConfig, StealAmount, VictimSelection,
};
pub use stats::{MarkStats, Span, SpanKind, TimelineSample, WorkerRecord, WorkerStats};
pub use stealmark_model::{
    self as model, MarkBitmap, MarkIndex, MarkStore, ObjRef, ObjectModel, SlotKind, WeakRef,
};

use pool::Pool;
use termination::Termination;
use worker::{Engine, Phase};

/// The engine of the configured deque kind, an `Engine<D>` for the `D` that
/// [`DequeKind::dispatch`] picks for [`MarkerConfig::deque`], behind its
/// type. A phase dispatches on the kind again and recovers the
/// `Engine<D>` with one type check ([`Engines::get`]); everything after it
/// is monomorphised for `D`.
struct Engines(Box<dyn Any + Send + Sync>);

impl Engines {
    fn new(config: &MarkerConfig) -> Engines {
        /// Makes the engine of one deque kind.
        struct New<'a>(&'a MarkerConfig);
        impl DequeVisitor for New<'_> {
            type Output = Engines;
            fn visit<D: WorkDeque>(self) -> Engines {
                Engines(Box::new(Engine::<D>::new(self.0)))
            }
        }
        config.deque.dispatch(New(config))
    }

    /// The engine, which must be an `Engine<D>`: `D` is the type that
    /// dispatching on the kind these engines were made for gives.
    fn get<D: WorkDeque>(&mut self) -> &mut Engine<D> {
        self.0
            .downcast_mut()
            .expect("the engine was made for the configured deque kind")
    }
}

/// One phase of [`Marker::run`], run over the configured deque kind: the
/// marker's parts it uses and the phase's arguments. Returns the payload of
/// a worker's panic, if one panicked.
struct RunPhase<'a, H, S> {
    engines: &'a mut Engines,
    pool: &'a Pool,
    term: &'a Termination,
    config: &'a MarkerConfig,
    records: &'a mut Vec<WorkerRecord>,
    heap: &'a H,
    store: &'a S,
    roots: &'a [ObjRef],
    clear: Option<&'a MarkBitmap>,
    start: Instant,
}

impl<H: ObjectModel, S: MarkStore<H>> DequeVisitor for RunPhase<'_, H, S> {
    type Output = Option<Box<dyn Any + Send>>;

    fn visit<D: WorkDeque>(self) -> Self::Output {
        let engine = self.engines.get::<D>();
        engine.reset();
        let phase = Phase {
            engine: &*engine,
            heap: self.heap,
            store: self.store,
            roots: self.roots,
            config: self.config,
            term: self.term,
            start: self.start,
            clear: self.clear,
            cleared: std::sync::atomic::AtomicUsize::new(0),
            panic: Mutex::new(None),
        };
        self.pool.broadcast(&|i| phase.run_worker(i));
        let panic = phase.panic.into_inner();
        // Hand the records to the stats, keeping both sets of buffers.
        self.records
            .resize_with(self.config.workers, WorkerRecord::default);
        engine.finish_phase(self.records);
        panic
    }
}

/// The parallel mark engine: persistent workers, their deques, and the
/// buffers of the last phase (reused by the next one).
pub struct Marker {
    config: MarkerConfig,
    pool: Pool,
    term: Termination,
    engines: Engines,
    bitmap: MarkBitmap,
    stats: MarkStats,
}

/// The result of [`Marker::mark`]: borrowed from the marker until its next
/// phase.
#[derive(Debug, Clone, Copy)]
pub struct Marking<'m> {
    /// One bit per mark index, set for every reachable object.
    pub bitmap: &'m MarkBitmap,
    /// The phase's statistics.
    pub stats: &'m MarkStats,
}

impl Marking<'_> {
    /// Whether `obj` was marked.
    pub fn is_marked<H: ObjectModel + MarkIndex>(&self, heap: &H, obj: ObjRef) -> bool {
        self.bitmap.contains(heap.mark_index(obj))
    }

    /// Every weak reference found in a reachable object (not traced).
    pub fn weak_refs(&self) -> impl Iterator<Item = &WeakRef> + '_ {
        self.stats.workers.iter().flat_map(|r| r.weak_refs.iter())
    }
}

impl Marker {
    /// Validates `config`, starts `config.workers - 1` worker threads (the
    /// thread that calls `mark` is worker 0; the others are parked
    /// until the first phase) and allocates their deques.
    pub fn new(config: MarkerConfig) -> Result<Marker, ConfigError> {
        config.validate()?;
        let engines = Engines::new(&config);
        Ok(Marker {
            pool: Pool::new(config.workers),
            term: Termination::new(),
            engines,
            bitmap: MarkBitmap::default(),
            stats: MarkStats::default(),
            config,
        })
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
        }
        if config.workers != self.pool.workers() {
            self.pool = Pool::new(config.workers);
        }
        self.config = config;
        Ok(())
    }

    /// Marks everything reachable from `roots` in the marker's own side
    /// bitmap, which the workers clear first (each its own part, so that the
    /// bitmap's lines start out in the caches of the cores that mark), and
    /// returns it with the statistics.
    ///
    /// Panics if a worker panicked (a heap whose [`ObjectModel`] breaks its
    /// contract), re-raising the worker's panic.
    pub fn mark<H: ObjectModel + MarkIndex>(&mut self, heap: &H, roots: &[ObjRef]) -> Marking<'_> {
        let start = Instant::now();
        let mut bitmap = std::mem::take(&mut self.bitmap);
        bitmap.resize_uncleared(heap.mark_index_bound());
        self.run(heap, roots, &bitmap, Some(&bitmap), start);
        self.bitmap = bitmap;
        Marking {
            bitmap: &self.bitmap,
            stats: &self.stats,
        }
    }

    /// Marks everything reachable from `roots` in `store` (for example mark
    /// bits in object headers), which the caller has cleared. Returns the
    /// phase's statistics.
    pub fn mark_with<H: ObjectModel, S: MarkStore<H>>(
        &mut self,
        heap: &H,
        roots: &[ObjRef],
        store: &S,
    ) -> &MarkStats {
        self.run(heap, roots, store, None, Instant::now());
        &self.stats
    }

    fn run<H: ObjectModel, S: MarkStore<H>>(
        &mut self,
        heap: &H,
        roots: &[ObjRef],
        store: &S,
        clear: Option<&MarkBitmap>,
        start: Instant,
    ) {
        self.term.reset(self.config.workers);
        let phase_start = Instant::now();
        let panic = self.config.deque.dispatch(RunPhase {
            engines: &mut self.engines,
            pool: &self.pool,
            term: &self.term,
            config: &self.config,
            records: &mut self.stats.workers,
            heap,
            store,
            roots,
            clear,
            start: phase_start,
        });
        let end = Instant::now();
        if let Some(payload) = panic {
            std::panic::resume_unwind(payload);
        }
        let phase_ns = (end - phase_start).as_nanos() as u64;
        let last_work = self
            .stats
            .workers
            .iter()
            .map(|r| r.stats.last_work_ns)
            .max()
            .unwrap_or(0);
        self.stats.config = Some(self.config.clone());
        self.stats.pause_ns = (end - start).as_nanos() as u64;
        self.stats.phase_ns = phase_ns;
        self.stats.termination_latency_ns = phase_ns.saturating_sub(last_work);
        self.stats.roots = roots.len() as u64;
    }
}
