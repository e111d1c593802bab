//! The one implementation of a mark cycle, under both of its forms: the
//! borrowed [`MarkCycle`](super::MarkCycle) (references to the marker, the
//! heap and the store) and the owned [`OwnedCycle`](super::OwnedCycle) (the
//! marker by value, the heap and the store through `Arc`). [`Parts`] says
//! how a form holds them; everything else (steps, the background loop, the
//! barrier's hand-off and back-pressure, poisoning, the remark) is here.

use std::borrow::BorrowMut;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use stealmark_model::{MarkStore, ObjRef, ObjectModel, RootSource, SoftRefPolicy, SoftRefs};

use super::entry::Entry;
use super::error::panic_message;
use super::spares::Spares;
use super::{Backpressure, CycleError, CycleOptions, CycleStats};
use crate::collection::Collection;
use crate::driver::{Action, Outcome, Panic};
use crate::marker::{Marker, Part};
use crate::roots::{Chunks, Erased};
use crate::satb::{Closed, HandOff, Queue, Work, BUFFER_CAPACITY};
use crate::stats::StepKind;

/// An empty root source.
const NO_REFS: &[ObjRef] = &[];

/// How a form of the cycle holds the heap, the store and the marker.
pub(crate) trait Parts {
    type Heap: ObjectModel;
    type Store: MarkStore<Self::Heap>;
    /// `&mut Marker` or `Marker`.
    type Marker: BorrowMut<Marker>;
    fn heap(&self) -> &Self::Heap;
    fn store(&self) -> &Self::Store;
}

/// The borrowed form's parts.
pub(crate) struct Borrowed<'m, H, S> {
    pub(crate) heap: &'m H,
    pub(crate) store: &'m S,
    pub(crate) marker: std::marker::PhantomData<&'m mut Marker>,
}

impl<'m, H: ObjectModel, S: MarkStore<H>> Parts for Borrowed<'m, H, S> {
    type Heap = H;
    type Store = S;
    type Marker = &'m mut Marker;
    fn heap(&self) -> &H {
        self.heap
    }
    fn store(&self) -> &S {
        self.store
    }
}

/// The owned form's parts.
pub(crate) struct Shared<H, S> {
    pub(crate) heap: Arc<H>,
    pub(crate) store: Arc<S>,
}

impl<H: ObjectModel, S: MarkStore<H>> Parts for Shared<H, S> {
    type Heap = H;
    type Store = S;
    type Marker = Marker;
    fn heap(&self) -> &H {
        &self.heap
    }
    fn store(&self) -> &S {
        &self.store
    }
}

/// Why a call failed: refused (the cycle is poisoned, ended, busy), or a
/// panic of this call's own marking, whose payload the caller re-raises or
/// turns into [`CycleError::Panicked`].
pub(crate) enum Failure {
    Refused(CycleError),
    Panicked(Panic),
}

impl Failure {
    /// As an error (a panic's payload becomes its message).
    pub(crate) fn into_error(self) -> CycleError {
        match self {
            Failure::Refused(e) => e,
            Failure::Panicked(p) => CycleError::Panicked {
                message: panic_message(&p),
            },
        }
    }

    /// Re-raises a panic; returns a refusal.
    pub(crate) fn raise(self) -> CycleError {
        match self {
            Failure::Refused(e) => e,
            Failure::Panicked(p) => std::panic::resume_unwind(p),
        }
    }
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

/// A mark cycle's state, whichever form holds it.
pub(crate) struct Core<P: Parts> {
    pub(crate) parts: P,
    pub(crate) queue: Queue<Entry>,
    options: CycleOptions,
    /// The marker and the entries waiting to be shaded: held by whoever
    /// marks (an increment, the background coordinator, the remark).
    inner: Mutex<Inner<P::Marker>>,
    /// The first panic's message (set before the queue fails).
    panic: Mutex<Option<String>>,
}

/// The marking side of a cycle.
struct Inner<M> {
    /// `None` once the remark has taken it (or the cycle was abandoned).
    marker: Option<M>,
    /// Objects to shade: the root snapshot, then the barrier's entries.
    pending: Vec<ObjRef>,
    /// Holders to scan again: the backward barrier's entries, kept for the
    /// remark (as Lua's `grayagain` list): a holder written all cycle long
    /// would otherwise be scanned again at every step. Sorted and without
    /// repeats up to `distinct`.
    rescans: Vec<ObjRef>,
    distinct: usize,
    start: Instant,
    stats: CycleStats,
}

impl<M> Inner<M> {
    /// Takes the entries of the buffers `full`, handed off: the objects to
    /// shade, and the holders to rescan, whose repeats are dropped each
    /// time they have doubled (so that they take memory in proportion to
    /// the distinct holders, not to the writes).
    fn take(&mut self, full: &[Vec<Entry>]) {
        for e in full.iter().flatten() {
            if e.is_rescan() {
                self.rescans.push(e.obj());
            } else {
                self.pending.push(e.obj());
            }
        }
        if self.rescans.len() > 2 * self.distinct + BUFFER_CAPACITY {
            self.drop_repeated_rescans();
        }
    }

    /// Sorts the holders to rescan and drops their repeats.
    fn drop_repeated_rescans(&mut self) {
        self.rescans.sort_unstable();
        self.rescans.dedup();
        self.distinct = self.rescans.len();
    }

    /// Takes the holders to rescan, each once, and leaves the list empty.
    fn take_rescans(&mut self) -> Vec<ObjRef> {
        self.drop_repeated_rescans();
        self.distinct = 0;
        std::mem::take(&mut self.rescans)
    }
}

impl<P: Parts> Core<P> {
    /// The start's pause: copies the roots (the snapshot's roots) and
    /// empties the workers' records.
    pub(crate) fn begin<R: RootSource + ?Sized>(
        mut marker: P::Marker,
        parts: P,
        roots: &R,
        options: CycleOptions,
    ) -> Core<P> {
        let start = Instant::now();
        let m: &mut Marker = marker.borrow_mut();
        let spares = std::mem::take(&mut m.spares);
        let mut pending = spares.pending;
        for chunk in 0..roots.chunk_count() {
            roots.scan_chunk(chunk, |r| pending.push(r));
        }
        let part = Part {
            roots: &Erased(NO_REFS),
            rescans: &Erased(NO_REFS),
            finalizable: &Erased(NO_REFS),
            soft: SoftRefs::ClearAll,
            action: Action::Begin,
            start,
        };
        // `Begin` runs no step: nothing can panic.
        let _ = m.run_part(parts.heap(), parts.store(), part, None, options.solo);
        let workers = m.config().workers;
        let stats = CycleStats {
            start_pause_ns: start.elapsed().as_nanos() as u64,
            ..CycleStats::default()
        };
        Core {
            parts,
            queue: Queue::new(workers, options.buffers_per_thread, spares.buffers),
            options,
            inner: Mutex::new(Inner {
                marker: Some(marker),
                pending,
                rescans: spares.rescans,
                distinct: 0,
                start,
                stats,
            }),
            panic: Mutex::new(None),
        }
    }

    /// Whether mutator threads may allocate black in this cycle
    /// ([`CycleOptions::black_allocation`]).
    #[inline]
    pub(crate) fn allocates_black(&self) -> bool {
        self.options.black_allocation
    }

    /// Records a panic of this cycle: it is poisoned from now on.
    fn poison(&self, payload: Panic) -> Failure {
        self.panic
            .lock()
            .get_or_insert_with(|| panic_message(&payload));
        self.queue.fail();
        Failure::Panicked(payload)
    }

    /// The refusal for a closed queue.
    pub(crate) fn refusal(&self, closed: Closed) -> Failure {
        Failure::Refused(match closed {
            Closed::Failed => CycleError::Panicked {
                message: self.panic.lock().clone().unwrap_or_default(),
            },
            Closed::Ended => CycleError::Ended,
            Closed::Running => CycleError::BackgroundRunning,
        })
    }

    /// Refuses if the cycle is poisoned.
    fn healthy(&self) -> Result<(), Failure> {
        if self.queue.failed() {
            return Err(self.refusal(Closed::Failed));
        }
        Ok(())
    }

    /// An incremental step (`MarkCycle::step`); `Ok(false)` at once while
    /// another thread marks.
    pub(crate) fn step(&self, budget: usize) -> Result<bool, Failure> {
        self.healthy()?;
        let Some(mut inner) = self.inner.try_lock() else {
            return Ok(false);
        };
        let done = self.step_locked(&mut inner, budget);
        drop(inner);
        self.queue.progressed();
        done
    }

    fn step_locked(&self, inner: &mut Inner<P::Marker>, budget: usize) -> Result<bool, Failure> {
        self.healthy()?;
        if inner.marker.is_none() {
            return Err(Failure::Refused(CycleError::Ended));
        }
        let full = self.queue.take_full();
        inner.take(&full);
        self.queue.recycle(full.into_iter());
        // The step shades the last `budget` entries in place (a split-off
        // tail would be an allocation per step), and they leave the list
        // after it.
        let mut pending = std::mem::take(&mut inner.pending);
        let cut = pending.len().saturating_sub(budget);
        let t0 = Instant::now();
        let outcome = self.run(
            inner,
            &pending[cut..],
            Action::Increment {
                budget: budget.max(1),
                parallel: self.options.parallel_steps,
                exclusive: !self.options.black_allocation,
            },
        );
        pending.truncate(cut);
        inner.pending = pending;
        let outcome = outcome.map_err(|p| self.poison(p))?;
        inner.stats.increments += 1;
        inner.stats.marking_ns += t0.elapsed().as_nanos() as u64;
        Ok(outcome == Outcome::Done && inner.pending.is_empty())
    }

    /// The background coordinator: a `satb` step over the waiting entries,
    /// then one per batch of buffers handed off, parking in between, until
    /// stopped. Started after [`Queue::start`]; its caller joins it, then
    /// calls [`Queue::joined`].
    pub(crate) fn background(&self) -> Result<(), Panic> {
        let mut guard = self.inner.lock();
        let inner = &mut *guard;
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
                // Poisoned before the queue says quiet: a thread waiting
                // for quiet sees the failure with it.
                self.panic
                    .lock()
                    .get_or_insert_with(|| panic_message(&payload));
                self.queue.fail();
                break Err(payload);
            }
            match self.queue.next_work() {
                Work::Stop => break Ok(()),
                Work::Buffers(full) => {
                    inner.take(&full);
                    self.queue.recycle(full.into_iter());
                }
            }
        };
        drop(guard);
        self.queue.exited();
        result
    }

    /// Records a panic of the coordinator thread outside the marking (its
    /// join failed).
    pub(crate) fn coordinator_lost(&self, payload: Panic) -> Failure {
        self.queue.exited();
        self.poison(payload)
    }

    /// Hands off a mutator's `entries`: filters out the objects to shade
    /// that are already marked (grey or black, so scanned by this cycle;
    /// never a holder to rescan, which is marked by definition) and the
    /// repeats of the entry before (a thread that writes into one holder
    /// over and over records it as often), keeps filling a buffer filtered
    /// to half its capacity or less unless `force`, and queues the rest,
    /// with back-pressure while the queue is at its bound.
    pub(crate) fn hand_off(&self, entries: &mut Vec<Entry>, force: bool) -> Result<(), Failure> {
        let (heap, store) = (self.parts.heap(), self.parts.store());
        entries.retain(|&e| e.is_rescan() || !store.is_marked(heap, e.obj()));
        entries.dedup();
        if entries.is_empty() || (!force && entries.len() <= BUFFER_CAPACITY / 2) {
            return Ok(());
        }
        loop {
            match self.queue.hand_off(entries) {
                HandOff::Queued => return Ok(()),
                HandOff::Dropped => {
                    return Err(self.refusal(if self.queue.failed() {
                        Closed::Failed
                    } else {
                        Closed::Ended
                    }))
                }
                HandOff::Full { taken } => self.back_pressure(taken)?,
            }
        }
    }

    /// A mutator thread beyond the queue's bound: assists (an increment on
    /// its own thread, if no other thread marks) or waits for the markers
    /// to take buffers (`taken`, from the refused hand-off).
    fn back_pressure(&self, taken: u64) -> Result<(), Failure> {
        if self.options.backpressure == Backpressure::Assist {
            if let Some(mut inner) = self.inner.try_lock() {
                let r = self.step_locked(&mut inner, self.options.assist_budget);
                if r.is_ok() {
                    inner.stats.assists += 1;
                }
                drop(inner);
                self.queue.progressed();
                return r.map(|_| ());
            }
        }
        self.queue.wait_room(taken, None);
        Ok(())
    }

    /// The remark (`MarkCycle::finish`): refuses while buffers are held or
    /// once poisoned; otherwise the cycle ends, and the marker comes back
    /// with the cycle's figures. A panic poisons the cycle and leaves the
    /// marker in it (`OwnedCycle::abandon` takes it).
    pub(crate) fn finish<R, F>(
        &self,
        collection: &Collection<'_, R, F>,
    ) -> Result<(P::Marker, CycleStats), Failure>
    where
        R: RootSource + ?Sized,
        F: RootSource + ?Sized,
    {
        let remark = Instant::now();
        let mut guard = self.inner.lock();
        self.healthy()?;
        if guard.marker.is_none() {
            return Err(Failure::Refused(CycleError::Ended));
        }
        let full = self
            .queue
            .close()
            .map_err(|held| Failure::Refused(CycleError::LeakedBuffers { held }))?;
        let inner = &mut *guard;
        inner.take(&full);
        self.queue.recycle(full.into_iter());
        let soft = match collection.soft_refs {
            SoftRefs::KeepAll => SoftRefs::Ask(&KeepEvery),
            other => other,
        };
        let pending = std::mem::take(&mut inner.pending);
        let rescans = inner.take_rescans();
        let roots = Erased(collection.roots);
        let finalizable = Erased(collection.finalizable);
        let mut marker = inner
            .marker
            .take()
            .ok_or(Failure::Refused(CycleError::Ended))?;
        let m: &mut Marker = marker.borrow_mut();
        let (pending_refs, rescan_refs) = (Erased(&pending[..]), Erased(&rescans[..]));
        let none = Erased(NO_REFS);
        for (source, rescan, action) in [
            (
                &pending_refs as &dyn Chunks,
                &rescan_refs as &dyn Chunks,
                Action::Trace(StepKind::Satb),
            ),
            (&roots, &none, Action::Trace(StepKind::Roots)),
            (&roots, &none, Action::Complete),
        ] {
            let part = Part {
                roots: source,
                rescans: rescan,
                finalizable: &finalizable,
                soft,
                action,
                start: inner.start,
            };
            if let Err(payload) = m.run_part(
                self.parts.heap(),
                self.parts.store(),
                part,
                None,
                self.options.solo,
            ) {
                inner.marker = Some(marker);
                return Err(self.poison(payload));
            }
        }
        m.spares = Spares::new(self.queue.take_free(), pending, rescans);
        m.finish(Ok(()), remark);
        let totals = self.queue.totals();
        let mut stats = inner.stats;
        stats.remark_ns = remark.elapsed().as_nanos() as u64;
        stats.allocated_black = totals.allocated.0;
        stats.allocated_black_bytes = totals.allocated.1;
        stats.buffers = totals.handed_off;
        stats.waits = totals.refused;
        stats.peak_buffers = totals.peak_buffers as u64;
        Ok((marker, stats))
    }

    /// Ends the cycle without a remark and gives the marker back (it
    /// empties what the cycle left at its next collection). The caller has
    /// stopped the background marking.
    pub(crate) fn abandon(&self) -> Result<P::Marker, Failure> {
        let mut inner = self.inner.lock();
        self.queue.abandon();
        let mut marker = inner
            .marker
            .take()
            .ok_or(Failure::Refused(CycleError::Ended))?;
        let (pending, rescans) = (
            std::mem::take(&mut inner.pending),
            std::mem::take(&mut inner.rescans),
        );
        inner.distinct = 0;
        marker.borrow_mut().spares = Spares::new(self.queue.take_free(), pending, rescans);
        Ok(marker)
    }

    /// Runs one part of the cycle over the objects to shade (no holder is
    /// rescanned before the remark); re-raises nothing. Soft slots are
    /// recorded, not traced, and counted for a policy to ask (`KeepEvery`
    /// stands for whichever the remark gets; no step of these parts asks
    /// it).
    fn run(
        &self,
        inner: &mut Inner<P::Marker>,
        shade: &[ObjRef],
        action: Action,
    ) -> Result<Outcome, Panic> {
        let part = Part {
            roots: &Erased(shade),
            rescans: &Erased(NO_REFS),
            finalizable: &Erased(NO_REFS),
            soft: SoftRefs::Ask(&KeepEvery),
            action,
            start: inner.start,
        };
        let Some(marker) = inner.marker.as_mut() else {
            return Ok(Outcome::Done);
        };
        let m: &mut Marker = marker.borrow_mut();
        m.run_part(
            self.parts.heap(),
            self.parts.store(),
            part,
            None,
            self.options.solo,
        )
    }
}
