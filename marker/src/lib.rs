//! The stealmark parallel mark engine, and how a runtime embeds it as its
//! mark phase.
//!
//! A [`Marker`] owns a pool of persistent GC worker threads, parked between
//! collections (the thread that calls a collection is worker 0), and one
//! work-stealing deque per worker. A collection traces a heap from its
//! roots in parallel, in the style of Flood et al. (2001), and implements
//! the whole runtime contract: soft, weak and phantom references,
//! ephemerons (WeakMap entries) and finalization with resurrection, in the
//! order that [`Marker::collect`] gives.
//!
//! # Embedding guide
//!
//! A runtime's binding supplies four things and gets one report back.
//!
//! 1. **The object model** ([`ObjectModel`]): each object's size, its
//!    reference slots and their [`SlotKind`]s (strong, soft, weak, phantom,
//!    or an ephemeron's value with its key), and optionally its type, for a
//!    live-object histogram. The engine is generic over it and
//!    monomorphised, so `scan_slots` inlines into the mark loop. Slots are
//!    reported with their index, and that index comes back in the report of
//!    cleared slots.
//! 2. **Mark bits.** Either the marker's own side bitmap ([`Marker::collect`],
//!    [`Marker::mark`]: the heap also implements [`MarkIndex`], dense
//!    indices), or the runtime's own bits, for example in object headers
//!    ([`Marker::collect_with`], [`Marker::mark_with`]: implement
//!    [`MarkStore`], whose `try_mark` is an atomic read-modify-write and
//!    `is_marked` an atomic load of the same bit; clear the bits before each
//!    collection). A collection with one worker marks through
//!    `try_mark_unshared` instead (no other thread marks then; the default
//!    calls `try_mark`, and [`MarkBitmap`] sets the bit with a plain load
//!    and store).
//! 3. **Roots and finalizable objects**, each a [`RootSource`]: chunks the
//!    workers claim in parallel (one per thread stack, per block of
//!    handles, ...). A slice of references is split into chunks of
//!    [`ROOT_CHUNK`]. Registered finalizable objects are
//!    the runtime's list of objects with finalizers that have not run yet.
//! 4. **A soft-reference policy** ([`SoftRefs`]): clear
//!    every soft referent that is not strongly reachable (when memory is
//!    short), keep them all, or ask the runtime per referent
//!    ([`SoftRefPolicy`], called from the workers in
//!    parallel).
//!
//! They go into a [`Collection`]; the result is a [`Report`] (with the
//! bitmap, a [`Marking`]), borrowed from the marker until the next
//! collection. It gives
//!
//! - the slots to clear ([`Report::cleared`], or [`Report::cleared_by_worker`]
//!   to clear them with several threads): `holder`'s field `slot`, exactly;
//! - the objects whose finalizers should run ([`Report::to_finalize`]): they
//!   are marked, with everything they reach, and the runtime unregisters
//!   them (a finalizer runs once);
//! - live objects and bytes, in total and per type ([`Report::live_bytes`],
//!   [`Report::live_by_type`]), counted by the workers while they mark;
//! - statistics ([`MarkStats`]): per worker, per step.
//!
//! Then the runtime sweeps: everything unmarked is garbage.
//!
//! ```
//! use std::ops::Range;
//! use stealmark_marker::{Collection, MarkIndex, Marker, MarkerConfig, ObjRef, ObjectModel, SlotKind};
//!
//! /// Object `i` has the slots `self.0[i]`: (target, kind).
//! struct Heap(Vec<Vec<(usize, Kind)>>);
//! #[derive(Clone, Copy)]
//! enum Kind { Strong, Weak, Value { key: usize } }
//!
//! impl ObjectModel for Heap {
//!     fn size_bytes(&self, o: ObjRef) -> usize { 16 + 8 * self.0[o.index()].len() }
//!     fn slot_count(&self, o: ObjRef) -> usize { self.0[o.index()].len() }
//!     fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(&self, o: ObjRef, s: Range<usize>, mut visit: V) {
//!         let slots = &self.0[o.index()];
//!         for i in s.start..s.end.min(slots.len()) {
//!             let (target, kind) = slots[i];
//!             let kind = match kind {
//!                 Kind::Strong => SlotKind::Strong,
//!                 Kind::Weak => SlotKind::Weak,
//!                 Kind::Value { key } => SlotKind::Ephemeron { key: ObjRef::from_index(key) },
//!             };
//!             visit(i, ObjRef::from_index(target), kind);
//!         }
//!     }
//!     fn prefetch(&self, _: ObjRef) {} // the words are not addresses
//! }
//! impl MarkIndex for Heap {
//!     fn mark_index_bound(&self) -> usize { self.0.len() }
//!     fn mark_index(&self, o: ObjRef) -> usize { o.index() }
//! }
//!
//! use Kind::*;
//! let heap = Heap(vec![
//!     vec![(1, Strong), (2, Strong), (5, Weak)],                           // 0: the root
//!     vec![(2, Weak), (3, Value { key: 2 }), (4, Weak), (5, Value { key: 4 })], // 1: a WeakMap
//!     vec![], vec![], vec![], vec![],
//!     vec![(7, Strong)], // 6: finalizable, unreachable
//!     vec![],
//! ]);
//! let roots = [ObjRef::from_index(0)];
//! let finalizable = [ObjRef::from_index(6)];
//! let mut marker = Marker::new(MarkerConfig::with_workers(2)).unwrap();
//! let m = marker.collect(&heap, &Collection::new(&roots[..]).finalizable(&finalizable[..]));
//! // Key 2 is live, so value 3 is too; key 4 is dead, so is 5; 6 is
//! // resurrected for its finalizer, with 7.
//! assert_eq!(m.bitmap.iter().collect::<Vec<_>>(), [0, 1, 2, 3, 6, 7]);
//! let report = m.report();
//! let mut cleared: Vec<(usize, usize)> =
//!     report.cleared().map(|w| (w.holder.index(), w.slot)).collect();
//! cleared.sort();
//! // The root's weak field to 5, and the dead entry (4 -> 5): its key slot
//! // and its value slot.
//! assert_eq!(cleared, [(0, 2), (1, 2), (1, 3)]);
//! assert_eq!(report.to_finalize().collect::<Vec<_>>(), [ObjRef::from_index(6)]);
//! assert_eq!(report.live_objects(), 6);
//! ```
//!
//! A whole runtime built this way keeps its mark bits in object headers
//! ([`Marker::collect_with`]), clears the weak fields and dead WeakMap
//! entries the report lists, runs the finalizers it names, sweeps every
//! unmarked object, and may check after each collection that no live
//! object points to a swept one.
//!
//! ## Threads, memory and failure
//!
//! - Every callback (`scan_slots`, `RootSource::scan_chunk`,
//!   `SoftRefPolicy::keep`, the mark store) runs on the GC workers, in
//!   parallel; the heap must not change during a collection.
//! - Buffers (deques, stacks, records, the key index) grow to the largest
//!   collection seen and are reused: a steady state allocates nothing.
//! - A heap that breaks its contract (a reference outside the heap, a
//!   `type_id` out of range) makes a worker panic; the collection re-raises
//!   the panic on the calling thread. The marker stays usable: the next
//!   collection first empties whatever the failed one left in the deques.
//!
//! ## Marking while the mutator runs
//!
//! [`Marker::start`] begins a [`MarkCycle`] (a pause that copies the
//! roots); marking then proceeds in increments on the caller's thread
//! ([`MarkCycle::step`]) or on the GC workers in the background
//! ([`MarkCycle::concurrently`]), while each mutator thread records the old
//! value of every reference slot it overwrites through its own
//! [`MutatorBuffer`] (a snapshot-at-the-beginning barrier) and allocates
//! black. [`MarkCycle::finish`] is the remark: it completes the closure and
//! runs the contract's steps. [`MarkCycle`] and [`MutatorBuffer`] say what
//! a runtime must do while a cycle runs.
//!
//! # Features
//!
//! With no feature, the crate depends on the model and deques crates and
//! on what marking needs (`parking_lot`, `crossbeam-utils`, a PCG
//! generator), and offers the mission's deque kinds (StealHalf, Chase-Lev,
//! ABP) and the knobs a runtime sets. Each feature adds:
//!
//! - `baselines`: the `locked` and `crossbeam` baseline deque kinds and the
//!   `idempotent` (at-least-once) mode;
//! - `research`: the research knobs of [`MarkerConfig`] (balancing policy
//!   and its parameters, steal amount, victim selection, prefetch depth,
//!   private work and reserve, frozen ephemeron rounds, timeline, spans,
//!   seed);
//! - `serde`: `Serialize` for the configuration and the statistics, under
//!   the command-line names;
//! - `strum`: strum's `VariantArray` and `VariantNames` for the named
//!   options;
//! - `bench` (with `serde`): the sequential marker with the engine's
//!   prefetching, the replay floor and the paired-comparison harness
//!   (modules `sequential` and `bench`);
//! - `inject-delays` (tests only): random yields and sleeps inside workers.
//!
//! [`OwnedCycle`] is the same cycle holding the marker, and the heap and
//! the store through `Arc`, for a runtime that keeps the cycle in its
//! global state and an [`OwnedMutator`] in each mutator thread's state.
//! A cycle whose marking panicked is poisoned: its later calls refuse, and
//! its remark returns [`CycleError::Panicked`], never a result. The barrier
//! queue is bounded, with back-pressure on a mutator that outruns the
//! markers ([`CycleOptions`]).
//!
//! # The engine
//!
//! A collection is a sequence of *steps* (`StepKind`), each one parallel
//! job of every worker with its own termination; a step that has nothing
//! to do does not run, so a heap with only strong slots costs one step.
//! In each marking step:
//!
//! - workers claim root chunks through an atomic counter, mark their
//!   references and trace from them; then pop grey objects from a private
//!   stack (else their deque), through a small prefetch FIFO, and scan
//!   them; each target's mark word is prefetched through a delay line,
//!   and the targets whose mark bit a worker set go on its private stack;
//! - a worker shares its oldest private objects through its deque: a small
//!   reserve while everyone is busy, generously while anyone is hungry;
//! - a worker whose deque is empty steals (one item or half a deque) from
//!   random victims; a worker with work may balance early, by the configured
//!   [`BalancePolicy`];
//! - large arrays are scanned in chunks claimed through an atomic counter,
//!   so one big array is marked in parallel;
//! - a bounded (`abp`) deque overflows into storage shared by all workers;
//! - with the `idempotent` deque (no fence or CAS in the owner's push and
//!   pop; an item may come out twice) an object may be scanned twice, and
//!   the results stay exact: live objects are counted when scanned, a
//!   copy that may have a twin (its deque ticket says so) only through a
//!   claim (`stealmark_deques::copies`), holders
//!   of non-strong slots are claimed before their records count, and array
//!   descriptors are not reused within a collection
//!   ([`MarkStats::duplicate_scans`] counts the extra scans);
//! - termination is detected through one global status word; idle workers
//!   spin, yield, then park, and busy workers wake them in proportion to the
//!   work they have to spare;
//! - non-strong slots are recorded by the worker that finds them and judged
//!   by it, in parallel with the others; ephemerons whose keys are not yet
//!   marked wait in a key index, so that marking a key releases exactly its
//!   values (linear in the number of entries, chains included).
//!
//! The engine is generic over the deque kind and the heap, and monomorphised:
//! the run-time [`MarkerConfig::deque`], any [`DequeKind`], picks the
//! instantiation through [`DequeKind::dispatch`], once in [`Marker::new`]
//! (which makes that kind's deques) and once per collection (which runs the
//! mark loop compiled for that kind).

mod arrays;
mod barrier;
#[cfg(feature = "bench")]
pub mod bench;
mod collection;
mod config;
mod cycle;
mod delay;
mod driver;
mod engines;
mod ephemeron;
mod fifo;
mod holders;
mod marker;
mod options;
mod overflow;
mod pool;
mod private;
mod report;
mod roots;
mod satb;
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
mod tasks;
mod termination;
mod worker;
mod zeroed;

pub use collection::Collection;
pub use config::{
    BalancePolicy, ConfigError, DequeKind, MarkerConfig, StealAmount, VictimSelection,
};
pub use cycle::{
    Backpressure, CycleError, CycleOptions, CycleStats, Finished, MarkCycle, MutatorBuffer,
    OwnedCycle, OwnedMutator,
};
pub use marker::Marker;
pub use report::{ClearedIter, ClearedSlots, Marking, Report};
pub use stats::{
    EphemeronStats, MarkStats, Span, SpanKind, StepKind, StepRecord, TimelineSample, TypeCount,
    WorkerRecord, WorkerStats,
};
pub use stealmark_deques::UnknownDequeKind;
pub use stealmark_model::{
    self as model, MarkBitmap, MarkIndex, MarkStore, ObjRef, ObjectModel, RootSource, SlotKind,
    SoftRefPolicy, SoftRefs, WeakRef, ROOT_CHUNK,
};
