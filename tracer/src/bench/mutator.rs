//! The synthetic mutator of `stealmark bench --mode`: reference writes into
//! a copy-on-write mapping of the snapshot, and allocation into a side
//! arena of new objects that the heap model traces along with the
//! snapshot's (`MutHeap`).
//!
//! New objects have [`NEW_SLOTS`] strong slots and live in the side arena;
//! they may refer to snapshot objects and to each other. Snapshot slots
//! only ever receive snapshot objects
//! ([`HeapView::store_slot`](stealmark_heap::HeapView::store_slot) checks
//! that), so new objects are reachable from the mutator's own roots and
//! from other new objects.
//!
//! Writes into the snapshot keep its reachable set as it is, so that every
//! round marks the heap the benchmark names: a write exchanges the targets
//! of two strong slots, either of one object (the object keeps its
//! references) or of two snapshot roots (both stay reachable, whatever the
//! graph). Each exchange is two real overwrites, each through the barrier
//! of its mode's family ([`Gc`]): the snapshot barrier records the old
//! value, the incremental-update barrier the new one. Each snapshot object
//! is written by one mutator thread only (by a hash of its address), so
//! that two threads never exchange through the same slot at once, which
//! could lose a target.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use stealmark_heap::{ObjRef, ObjectModel};
use stealmark_marker::{MarkStore, MutatorBuffer};

use super::mut_heap::{MutHeap, NEW_SLOTS};

/// Roots a mutator thread keeps of each kind (snapshot objects, new ones).
const STACK: usize = 256;

/// Operations between two looks at the clock and the stop flag.
const BATCH: u64 = 64;

/// The mutator's rates.
#[derive(Clone, Copy, Debug)]
pub struct Rates {
    /// Reference writes per second per thread (0: as fast as it can).
    pub writes: u64,
    /// Allocations per second per thread.
    pub allocs: u64,
}

/// When a mutator thread stops.
pub enum Until<'s> {
    /// When the flag is set.
    Flag(&'s AtomicBool),
    /// After this long.
    Elapsed(Duration),
}

/// What marking the mutator serves while it runs: the write barrier of
/// its stores and allocations, and its stop.
pub trait Gc {
    /// The barrier of a store: `new` was just stored into a strong slot of
    /// `holder` that held `old` (`None`: null). Whether it called the mark
    /// cycle's buffer (each call may log an entry for the marking to take).
    fn write(&mut self, holder: ObjRef, old: Option<ObjRef>, new: ObjRef) -> bool;
    /// The barrier of an allocation: `obj` is new, its slots initialised,
    /// and no reference to it is stored yet.
    fn allocated(&mut self, obj: ObjRef);
    /// Called every [`BATCH`] operations: `true` to stop (the marking is
    /// done, as far as the mutator can tell). May run an increment. By
    /// default `false`: a barrier alone never stops the mutator.
    fn poll(&mut self) -> bool {
        false
    }
}

/// No marking: no barrier.
pub struct NoGc;

impl Gc for NoGc {
    #[inline(always)]
    fn write(&mut self, _: ObjRef, _: Option<ObjRef>, _: ObjRef) -> bool {
        false
    }
    #[inline(always)]
    fn allocated(&mut self, _: ObjRef) {}
}

/// One write-barrier family's calls into a mark cycle's
/// [`MutatorBuffer`]: a [`Gc`] that never stops the mutator by itself (a
/// marking's driver wraps it to poll, or to step).
pub trait Barrier: Gc {
    /// Hands the entries logged so far to the marker.
    fn flush(&mut self);
}

/// Snapshot at the beginning: the old value of every store
/// ([`MutatorBuffer::pre_write`]; the mutator calls it just after the store,
/// which is as sound: the entry is marked from before the remark), and
/// every new object black ([`MutatorBuffer::allocate_black`]).
pub struct Satb<'c, 'm, H: ObjectModel, S: MarkStore<H>>(pub MutatorBuffer<'c, 'm, H, S>);

impl<H: ObjectModel, S: MarkStore<H>> Gc for Satb<'_, '_, H, S> {
    #[inline(always)]
    fn write(&mut self, _: ObjRef, old: Option<ObjRef>, _: ObjRef) -> bool {
        self.0.pre_write(old);
        true
    }
    #[inline(always)]
    fn allocated(&mut self, obj: ObjRef) {
        self.0.allocate_black(obj);
    }
}

impl<H: ObjectModel, S: MarkStore<H>> Barrier for Satb<'_, '_, H, S> {
    fn flush(&mut self) {
        self.0.flush();
    }
}

/// Incremental update, on every store: the value stored is shaded
/// ([`MutatorBuffer::shade`]), whatever its holder. The barrier of a
/// mutator whose stores run beside marking on another thread (the
/// background workers, or another thread's steps and assists): a holder
/// unmarked at the test may be marked and scanned before the store lands.
///
/// The forward (Dijkstra) half everywhere, also for stores into the new
/// objects, where the backward (Steele) half, [`MutatorBuffer::rescan`] of
/// the holder, would do too: its entries are the snapshot barrier's kind
/// (an object to shade, dropped at hand-off once marked), so that the two
/// families differ only in which value they log and when, not in what the
/// marker does with an entry; and a rescan saves nothing on the new
/// objects, whose two slots a rescan scans again whole, while the mutator
/// rarely writes one new object twice in a row (the repeats a rescan
/// entry absorbs).
///
/// New objects are allocated white (no call): each is one of the
/// mutator's roots (its stack of new objects) when allocated, which the
/// remark shades as they are then, and is reached afterwards through a
/// barriered store if at all. Its initial values are stored before it is
/// published, into an object no marker can reach yet.
pub struct Update<'c, 'm, H: ObjectModel, S: MarkStore<H>>(pub MutatorBuffer<'c, 'm, H, S>);

impl<H: ObjectModel, S: MarkStore<H>> Gc for Update<'_, '_, H, S> {
    #[inline(always)]
    fn write(&mut self, _: ObjRef, _: Option<ObjRef>, new: ObjRef) -> bool {
        self.0.shade(new);
        true
    }
    #[inline(always)]
    fn allocated(&mut self, _: ObjRef) {}
}

impl<H: ObjectModel, S: MarkStore<H>> Barrier for Update<'_, '_, H, S> {
    fn flush(&mut self) {
        self.0.flush();
    }
}

/// Incremental update on stores into marked holders only: [`Update`]'s
/// barrier behind a test of the holder's mark in the cycle's marks, just
/// after the store. Sound only while no marking runs at the same time as
/// the mutator's stores: for a mutator that marks in steps on its own
/// thread between its operations, with no other thread to mark meanwhile.
pub struct UpdateMarked<'c, 'm, H: ObjectModel, S: MarkStore<H>> {
    /// The cycle's buffer.
    pub buffer: MutatorBuffer<'c, 'm, H, S>,
    /// The heap the cycle marks.
    pub heap: &'c H,
    /// The cycle's marks, which the test reads.
    pub marks: &'c S,
}

impl<H: ObjectModel, S: MarkStore<H>> Gc for UpdateMarked<'_, '_, H, S> {
    #[inline(always)]
    fn write(&mut self, holder: ObjRef, _: Option<ObjRef>, new: ObjRef) -> bool {
        let marked = self.marks.is_marked(self.heap, holder);
        if marked {
            self.buffer.shade(new);
        }
        marked
    }
    #[inline(always)]
    fn allocated(&mut self, _: ObjRef) {}
}

impl<H: ObjectModel, S: MarkStore<H>> Barrier for UpdateMarked<'_, '_, H, S> {
    fn flush(&mut self) {
        self.buffer.flush();
    }
}

/// Which of several mutator threads this is: each writes the snapshot
/// objects of its own share only.
#[derive(Clone, Copy, Debug)]
pub struct Share {
    /// This thread's index, below `of`.
    pub index: usize,
    /// The number of mutator threads.
    pub of: usize,
}

impl Share {
    /// Whether this thread writes `obj`'s slots.
    fn owns(self, obj: ObjRef) -> bool {
        let hash = ((obj.word() >> 3) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
        self.of <= 1 || hash as usize % self.of == self.index
    }
}

/// The target of strong slot `i` of the snapshot object `obj`, if the slot
/// is strong and not null (so that a store into it is accepted).
fn strong_slot(heap: &MutHeap<'_>, obj: ObjRef, i: usize) -> Option<ObjRef> {
    let mut found = None;
    heap.view.scan_slots(obj, i..i + 1, |_, t, kind| {
        if kind.is_strong() {
            found = Some(t);
        }
    });
    found
}

/// One mutator thread: its roots and random stream (xorshift: no
/// allocation, a few instructions).
pub struct Mutator {
    old: Vec<ObjRef>,
    new: Vec<ObjRef>,
    /// The snapshot roots with slots that this thread writes.
    owned_roots: Vec<ObjRef>,
    share: Share,
    rng: u64,
    /// Reference writes done.
    pub writes: u64,
    /// Objects allocated.
    pub allocs: u64,
}

impl Mutator {
    /// A mutator whose roots are a sample of those of `roots` that have
    /// slots (a write stores into a root's slot), writing the objects of
    /// `share`.
    pub fn new(heap: &MutHeap<'_>, roots: &[ObjRef], seed: u64, share: Share) -> Mutator {
        let roots: Vec<ObjRef> = roots
            .iter()
            .copied()
            .filter(|&r| heap.view.slot_count(r) > 0)
            .collect();
        let mut m = Mutator {
            old: Vec::with_capacity(STACK),
            new: Vec::with_capacity(STACK),
            owned_roots: roots.iter().copied().filter(|&r| share.owns(r)).collect(),
            share,
            rng: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            writes: 0,
            allocs: 0,
        };
        for _ in 0..STACK.min(roots.len()) {
            let r = roots[m.below(roots.len())];
            m.old.push(r);
        }
        m
    }

    fn below(&mut self, n: usize) -> usize {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        ((self.rng >> 32) as usize * n) >> 32
    }

    /// A snapshot object this thread can reach: a root, or up to `depth`
    /// strong edges from one.
    fn reach(&mut self, heap: &MutHeap<'_>, depth: usize) -> Option<ObjRef> {
        if self.old.is_empty() {
            return None;
        }
        let i = self.below(self.old.len());
        let mut o = self.old[i];
        for _ in 0..self.below(depth + 1) {
            let n = heap.view.slot_count(o);
            if n == 0 {
                break;
            }
            let k = self.below(n);
            let mut next = None;
            heap.view.scan_slots(o, k..k + 1, |_, t, kind| {
                if kind.is_strong() {
                    next = Some(t);
                }
            });
            match next {
                Some(t) => o = t,
                None => break,
            }
        }
        Some(o)
    }

    /// One reference write. One time in four (once this thread has new
    /// objects) a random slot of a new object gets a snapshot object at
    /// most one edge from a root; else two strong slots exchange their
    /// targets ([`Mutator::exchange`]): of two snapshot roots one time in
    /// four, else of one object at most one edge from one of this thread's
    /// roots, one of whose targets sometimes becomes a root (if it has
    /// slots): the roots drift through the heap. Skipped (not counted) when
    /// the slots are not strong ones, or the object is another thread's.
    fn write(&mut self, heap: &MutHeap<'_>, gc: &mut impl Gc) {
        if !self.new.is_empty() && self.below(4) == 0 {
            let Some(target) = self.reach(heap, 1) else {
                return;
            };
            let i = self.below(self.new.len());
            let obj = self.new[i];
            let slot = heap.side.slot(obj, self.below(NEW_SLOTS));
            // Relaxed: see `MutHeap::scan_slots`.
            let old = slot.swap(target.word(), Relaxed);
            gc.write(obj, ObjRef::from_word(old), target);
            self.writes += 1;
            return;
        }
        if self.below(4) == 0 {
            if self.owned_roots.is_empty() {
                return;
            }
            let (i, j) = (
                self.below(self.owned_roots.len()),
                self.below(self.owned_roots.len()),
            );
            let (a, b) = (self.owned_roots[i], self.owned_roots[j]);
            let i = self.below(heap.view.slot_count(a));
            let j = self.below(heap.view.slot_count(b));
            self.exchange(heap, (a, i), (b, j), gc);
            return;
        }
        let Some(obj) = self.reach(heap, 1) else {
            return;
        };
        let n = heap.view.slot_count(obj);
        if n < 2 || !self.share.owns(obj) {
            return;
        }
        let i = self.below(n);
        let j = (i + 1 + self.below(n - 1)) % n;
        if let Some(moved) = self.exchange(heap, (obj, i), (obj, j), gc) {
            if self.below(8) == 0 {
                self.push_root(heap, moved);
            }
        }
    }

    /// Exchanges the targets of strong slot `a.1` of `a.0` and strong slot
    /// `b.1` of `b.0` (two slots of one object, or of two snapshot roots:
    /// either way every object stays reachable), through the barrier;
    /// returns the target moved into `b`, or `None` when a slot is not a
    /// non-null strong one of an object of this thread's share (nothing
    /// written).
    fn exchange(
        &mut self,
        heap: &MutHeap<'_>,
        (a, i): (ObjRef, usize),
        (b, j): (ObjRef, usize),
        gc: &mut impl Gc,
    ) -> Option<ObjRef> {
        if (a, i) == (b, j) || !self.share.owns(a) || !self.share.owns(b) {
            return None;
        }
        let x = strong_slot(heap, a, i)?;
        let y = strong_slot(heap, b, j)?;
        // Both slots are strong (so stores are accepted) and only this
        // thread writes them (`Share`), so they still hold `x` and `y`.
        let old = heap.view.store_slot(a, i, Some(y)).ok()?;
        gc.write(a, old, y);
        let old = heap
            .view
            .store_slot(b, j, Some(x))
            .expect("a strong slot of a snapshot object takes a snapshot object");
        gc.write(b, old, x);
        self.writes += 2;
        Some(x)
    }

    /// Makes `obj` a root, in place of a random one once the roots are
    /// [`STACK`]; not if it has no slots (nothing could be written into it).
    /// This thread's roots (its "stack"): the snapshot objects and the new
    /// objects it holds. A collection must mark from them as well as from the
    /// snapshot's roots, as a runtime scans its threads' stacks: a root may
    /// have become unreachable from the snapshot's roots, and the thread may
    /// still store it into the heap.
    pub fn roots(&self) -> Vec<ObjRef> {
        self.old.iter().chain(&self.new).copied().collect()
    }

    fn push_root(&mut self, heap: &MutHeap<'_>, obj: ObjRef) {
        if heap.view.slot_count(obj) == 0 {
            return;
        }
        if self.old.len() < STACK {
            self.old.push(obj);
        } else {
            let i = self.below(STACK);
            self.old[i] = obj;
        }
    }

    /// One allocation, through the barrier, kept as a root.
    fn allocate(&mut self, heap: &MutHeap<'_>, gc: &mut impl Gc) {
        let init = [self.reach(heap, 1), self.new.last().copied()];
        if let Some(obj) = heap.side.allocate(init) {
            gc.allocated(obj);
            self.allocs += 1;
            if self.new.len() < STACK {
                self.new.push(obj);
            } else {
                let i = self.below(STACK);
                self.new[i] = obj;
            }
        }
    }

    /// Runs at `rates` until `until`, or until `gc` says to stop; counts
    /// the writes and allocations done in `self`. Both rates are kept in
    /// time: the writes done (not the attempts, some of which are skipped)
    /// against `rates.writes`, the allocations tried against
    /// `rates.allocs`, so that either holds whatever the other is.
    pub fn run(&mut self, heap: &MutHeap<'_>, rates: Rates, until: &Until<'_>, gc: &mut impl Gc) {
        let start = Instant::now();
        let writes0 = self.writes;
        let (mut allocs_tried, mut allocs_due) = (0u64, 0u64);
        loop {
            for _ in 0..BATCH {
                self.write(heap, gc);
                if allocs_tried < allocs_due {
                    allocs_tried += 1;
                    self.allocate(heap, gc);
                }
            }
            if gc.poll() {
                return;
            }
            let mut elapsed = start.elapsed();
            match until {
                Until::Flag(f) if f.load(Relaxed) => return,
                Until::Elapsed(d) if elapsed >= *d => return,
                _ => {}
            }
            if rates.writes > 0 {
                // Ahead of schedule: sleep until the schedule catches up
                // (in steps of at least 200 µs, so the sleeps are few).
                let done = self.writes - writes0;
                let due = Duration::from_secs_f64(done as f64 / rates.writes as f64);
                if due > elapsed + Duration::from_micros(200) {
                    std::thread::sleep(due - elapsed);
                    elapsed = start.elapsed();
                }
            }
            allocs_due = (elapsed.as_secs_f64() * rates.allocs as f64) as u64;
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::mut_heap::Side;
    use super::*;
    use stealmark_heap::{generate_heap, mark_sequential, GenConfig, HeapGraph, Shape};

    /// A single mutator thread: it writes every object.
    const ALL: Share = Share { index: 0, of: 1 };

    /// A runtime-shaped heap: many of its objects have no slots, so a
    /// mutator whose roots drifted onto them would skip most writes.
    pub(crate) fn runtime_heap() -> stealmark_heap::Heap {
        generate_heap(&GenConfig::new(Shape::Runtime, 20_000))
            .unwrap()
            .heap
    }

    fn run_for(m: &mut Mutator, heap: &MutHeap<'_>, rates: Rates, ms: u64) -> f64 {
        let start = Instant::now();
        m.run(
            heap,
            rates,
            &Until::Elapsed(Duration::from_millis(ms)),
            &mut NoGc,
        );
        start.elapsed().as_secs_f64()
    }

    #[test]
    fn roots_keep_slots_and_the_write_rate_counts_writes_done() {
        let built = runtime_heap();
        let leaves: u64 = built
            .view()
            .objects()
            .filter(|&o| built.view().slot_count(o) == 0)
            .count() as u64;
        assert!(leaves > built.view().object_count() / 4, "{leaves} leaves");
        let side = Side::new(1000);
        let heap = MutHeap::new(built.view(), &side);
        let mut m = Mutator::new(&heap, built.roots(), 7, ALL);
        let rate = 20_000;
        let rates = Rates {
            writes: rate,
            allocs: 0,
        };
        let secs = run_for(&mut m, &heap, rates, 300);
        assert!(!m.old.is_empty());
        assert!(m.old.iter().all(|&r| heap.view.slot_count(r) > 0));
        // Paced on writes done: never ahead of the schedule by more than a
        // batch of attempts (an exchange is two writes), and not far behind
        // it (each write takes well under 1 µs, so half the rate leaves room
        // for a loaded machine). Pacing on attempts, or roots without
        // slots, wrote about a third of it.
        let asked = rate as f64 * secs;
        assert!(
            m.writes as f64 <= asked + 2.0 * BATCH as f64,
            "{} > {asked}",
            m.writes
        );
        assert!(m.writes as f64 >= asked / 2.0, "{} < {asked} / 2", m.writes);
    }

    /// Every strong target of every snapshot object, in order.
    fn targets(heap: &MutHeap<'_>) -> Vec<usize> {
        let mut all = Vec::new();
        for o in heap.view.objects() {
            heap.view
                .scan_slots(o, 0..heap.view.slot_count(o), |_, t, _| all.push(t.word()));
        }
        all
    }

    #[test]
    fn writes_move_references_without_changing_what_is_reachable() {
        let built = runtime_heap();
        let roots = built.roots();
        let reachable = mark_sequential(&built.view(), roots).objects;
        let side = Side::new(1 << 16);
        let heap = MutHeap::new(built.view(), &side);
        let before = targets(&heap);
        let rates = Rates {
            writes: 0,
            allocs: 1000,
        };
        let writes: u64 = std::thread::scope(|sc| {
            let threads: Vec<_> = (0..3)
                .map(|index| {
                    let heap = &heap;
                    sc.spawn(move || {
                        let mut m = Mutator::new(heap, roots, index as u64, Share { index, of: 3 });
                        run_for(&mut m, heap, rates, 100);
                        m.writes
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).sum()
        });
        assert!(writes > 10_000, "{writes} writes");
        let after = targets(&heap);
        let moved = before.iter().zip(&after).filter(|(a, b)| a != b).count();
        assert!(moved > 1000, "{moved} slots changed");
        // Storing objects near the roots over whatever a slot held cut
        // most of the heap off.
        assert_eq!(mark_sequential(&heap.view, roots).objects, reachable);
        let mut sorted = (before, after);
        sorted.0.sort_unstable();
        sorted.1.sort_unstable();
        assert_eq!(sorted.0, sorted.1, "every reference is still in the heap");
    }

    #[test]
    fn allocations_keep_their_own_rate_when_writes_are_unpaced() {
        let built = runtime_heap();
        let side = Side::new(1 << 16);
        let heap = MutHeap::new(built.view(), &side);
        let mut m = Mutator::new(&heap, built.roots(), 9, ALL);
        let rates = Rates {
            writes: 0,
            allocs: 1000,
        };
        let secs = run_for(&mut m, &heap, rates, 100);
        // Unpaced writes number in the thousands at least; the allocations
        // follow the clock, not one per write.
        assert!(m.writes > 10_000, "{} writes", m.writes);
        assert!(
            m.allocs as f64 <= 1000.0 * secs + 1.0,
            "{} allocations",
            m.allocs
        );
    }
}
