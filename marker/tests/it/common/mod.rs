//! Test support shared by the marker's integration tests: the heap crate's
//! slot-list heap under short names, header-style mark bits, random graphs,
//! a model wrapper that counts the slots each object had visited, and the
//! comparison of a collection with the sequential oracle.

#![allow(dead_code)] // each test binary uses its own part

pub mod erased;
pub mod mutable;

use std::ops::Range;
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use stealmark_heap::{oracle, OracleInput, OracleResult};
use stealmark_marker::model::{SoftRefPolicy, SoftRefs};
use stealmark_marker::{
    Collection, DequeKind, MarkIndex, MarkStore, Marker, ObjRef, ObjectModel, SlotKind, WeakRef,
};
use strum::VariantArray;

/// The heap the tests write by hand: slot lists with every slot kind.
pub use stealmark_heap::{ListGraph as Graph, ListKind as Kind};

pub use erased::{Dyn, DynStore};

/// The deque kinds the tests run: every kind, and under Miri every kind but
/// the crossbeam peer, whose slot reads race by design (a thief reads a slot
/// the owner may be writing, and discards the read if its CAS fails) and
/// whose epoch reclamation fails Stacked Borrows (crossbeam issue #545;
/// docs/design.md, "How it is checked").
pub fn deques() -> impl Iterator<Item = DequeKind> {
    DequeKind::VARIANTS
        .iter()
        .copied()
        .filter(|&d| !(cfg!(miri) && d == DequeKind::Crossbeam))
}

/// The worker counts of `counts` that the tests run: all of them, and under
/// Miri (which runs one thread at a time, slowly) those up to 3.
pub fn workers(counts: &[usize]) -> impl Iterator<Item = usize> + '_ {
    counts.iter().copied().filter(|&w| !cfg!(miri) || w <= 3)
}

/// Every deque kind of [`deques`] with every worker count of `counts`.
/// Under Miri, where every collection is slow, each kind once, at the
/// counts up to 3 in turn, starting from the second (so that the first
/// kinds, StealHalf and Chase-Lev, run with thieves).
pub fn matrix(counts: &[usize]) -> Vec<(DequeKind, usize)> {
    if cfg!(miri) {
        let small: Vec<usize> = workers(counts).collect();
        deques()
            .enumerate()
            .map(|(i, d)| (d, small[(i + 1) % small.len()]))
            .collect()
    } else {
        deques()
            .flat_map(|d| counts.iter().map(move |&w| (d, w)))
            .collect()
    }
}

pub fn r(i: usize) -> ObjRef {
    ObjRef::from_index(i)
}

/// Mark bits in a byte per object, as a runtime keeps them in headers.
pub struct HeaderMarks(pub Vec<AtomicU8>);

impl HeaderMarks {
    pub fn new(n: usize) -> HeaderMarks {
        HeaderMarks((0..n).map(|_| AtomicU8::new(0)).collect())
    }
    pub fn marked(&self) -> Vec<usize> {
        (0..self.0.len())
            .filter(|&i| self.0[i].load(Ordering::Relaxed) != 0)
            .collect()
    }
}

impl<H: ObjectModel> MarkStore<H> for HeaderMarks {
    fn try_mark(&self, _: &H, obj: ObjRef) -> bool {
        let h = &self.0[obj.index()];
        h.load(Ordering::Relaxed) == 0 && h.fetch_or(1, Ordering::Relaxed) == 0
    }
    fn is_marked(&self, _: &H, obj: ObjRef) -> bool {
        self.0[obj.index()].load(Ordering::Relaxed) != 0
    }
}

/// Keeps the soft referents whose index is divisible by 3.
pub struct KeepThirds;

impl SoftRefPolicy for KeepThirds {
    fn keep(&self, referent: ObjRef) -> bool {
        referent.index() % 3 == 0
    }
}

/// Every soft-reference policy: clear all, keep all, ask ([`KeepThirds`]).
pub fn policies() -> [SoftRefs<'static>; 3] {
    [
        SoftRefs::ClearAll,
        SoftRefs::KeepAll,
        SoftRefs::Ask(&KeepThirds),
    ]
}

/// The soft-reference policies a test's `n`th configuration runs: all of
/// [`policies`], and under Miri (where every collection is slow) the
/// `n mod 3`th.
pub fn policies_for(n: usize) -> Vec<SoftRefs<'static>> {
    let all = policies();
    if cfg!(miri) {
        vec![all[n % all.len()]]
    } else {
        all.to_vec()
    }
}

/// The oracle's inputs for a heap with `roots` and `finalizable` objects,
/// one under each soft-reference policy of [`policies`].
pub fn inputs<'a>(
    roots: &'a [ObjRef],
    finalizable: &'a [ObjRef],
) -> impl Iterator<Item = OracleInput<'a>> {
    policies().into_iter().map(move |soft_refs| OracleInput {
        roots,
        finalizable,
        soft_refs,
    })
}

/// A random heap of `n` objects with every slot kind, a few large ones (so
/// that arrays are scanned in chunks when `array_chunk` is small), and
/// ephemeron chains; with its roots and finalizable objects.
pub fn random_graph(seed: u64, n: usize) -> (Graph, Vec<ObjRef>, Vec<ObjRef>) {
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut objects = Vec::with_capacity(n);
    for _ in 0..n {
        let slots = if rng.random_bool(0.02) {
            rng.random_range(40..200)
        } else {
            rng.random_range(0..6)
        };
        let mut v = Vec::with_capacity(slots);
        for _ in 0..slots {
            let t = rng.random_range(0..n);
            let kind = match rng.random_range(0..100) {
                0..60 => Kind::Strong,
                60..68 => Kind::Weak,
                68..76 => Kind::Soft,
                76..82 => Kind::Phantom,
                // Chains through the heap (value t waits for key t - 1), or
                // any key.
                82..91 => Kind::Ephemeron(t.saturating_sub(1)),
                _ => Kind::Ephemeron(rng.random_range(0..n)),
            };
            v.push((t, kind));
        }
        objects.push(v);
    }
    let roots = (0..rng.random_range(1..4))
        .map(|_| r(rng.random_range(0..n)))
        .collect();
    let finalizable = (0..rng.random_range(0..n / 4 + 1))
        .map(|_| r(rng.random_range(0..n)))
        .collect();
    (Graph(objects), roots, finalizable)
}

/// In the `ObjectModel` impl of a test model that reads the heap through
/// its field `inner`: every method but `scan_slots`, forwarded to `inner`.
macro_rules! forward_reads {
    () => {
        fn size_bytes(&self, obj: stealmark_marker::ObjRef) -> usize {
            self.inner.size_bytes(obj)
        }
        fn footprint_bytes(&self, obj: stealmark_marker::ObjRef) -> usize {
            self.inner.footprint_bytes(obj)
        }
        fn slot_count(&self, obj: stealmark_marker::ObjRef) -> usize {
            self.inner.slot_count(obj)
        }
        fn type_count(&self) -> usize {
            self.inner.type_count()
        }
        fn type_id(&self, obj: stealmark_marker::ObjRef) -> usize {
            self.inner.type_id(obj)
        }
        fn prefetch(&self, obj: stealmark_marker::ObjRef) {
            self.inner.prefetch(obj);
        }
    };
}
#[allow(unused_imports)] // the delays binary shares this module
pub(crate) use forward_reads;

/// In the `MarkIndex` impl of such a model: both methods, forwarded to
/// `inner`.
macro_rules! forward_mark_index {
    () => {
        fn mark_index_bound(&self) -> usize {
            self.inner.mark_index_bound()
        }
        fn mark_index(&self, obj: stealmark_marker::ObjRef) -> usize {
            self.inner.mark_index(obj)
        }
    };
}
#[allow(unused_imports)] // the delays binary shares this module
pub(crate) use forward_mark_index;

/// A model that counts, per object, the slots it had visited.
pub struct Counting<'m, M> {
    pub inner: &'m M,
    pub visits: Vec<AtomicU32>,
}

impl<'m, M: ObjectModel + MarkIndex> Counting<'m, M> {
    pub fn new(inner: &'m M) -> Self {
        Counting {
            inner,
            visits: (0..inner.mark_index_bound())
                .map(|_| AtomicU32::new(0))
                .collect(),
        }
    }
    pub fn counts(&self) -> Vec<u32> {
        self.visits
            .iter()
            .map(|v| v.load(Ordering::Relaxed))
            .collect()
    }
}

impl<M: ObjectModel + MarkIndex> ObjectModel for Counting<'_, M> {
    const LEAF_SLOTS: bool = M::LEAF_SLOTS;
    forward_reads!();
    fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        obj: ObjRef,
        slots: Range<usize>,
        mut visit: V,
    ) {
        let count = &self.visits[self.inner.mark_index(obj)];
        self.inner.scan_slots(obj, slots, |i, t, k| {
            count.fetch_add(1, Ordering::Relaxed);
            visit(i, t, k);
        });
    }
}

impl<M: ObjectModel + MarkIndex> MarkIndex for Counting<'_, M> {
    forward_mark_index!();
}

/// What a collection must produce: the oracle's result and its per-object
/// slot visits (each marked object scanned once, whole).
pub struct Expect {
    pub oracle: OracleResult,
    pub visits: Vec<u32>,
}

pub fn expect<M: ObjectModel + MarkIndex>(model: &M, input: &OracleInput<'_>) -> Expect {
    let counting = Counting::new(model);
    let oracle = oracle(&counting, input);
    Expect {
        oracle,
        visits: counting.counts(),
    }
}

fn sorted<T: Ord + Clone>(v: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut v: Vec<T> = v.into_iter().collect();
    v.sort_unstable();
    v
}

/// Runs the collection of `input` with `marker` (side bitmap) and compares
/// everything with `expect`: the marked set, the slots scanned per object
/// (an array chunk scanned twice shows), the slots to clear, the objects
/// to finalize, live objects, bytes and types, the live ephemerons, the
/// non-strong slots found, and the counters. Returns the duplicate scans
/// and the duplicate holder scans (only an `idempotent` deque makes any).
pub fn check<M: ObjectModel + MarkIndex>(
    marker: &mut Marker,
    model: &M,
    input: &OracleInput<'_>,
    expect: &Expect,
    what: &str,
) -> (u64, u64) {
    check_as(marker, model, input, expect, what, false)
}

/// As [`check`], marked on the calling thread alone if `solo`
/// ([`Collection::solo`]).
pub fn check_as<M: ObjectModel + MarkIndex>(
    marker: &mut Marker,
    model: &M,
    input: &OracleInput<'_>,
    expect: &Expect,
    what: &str,
    solo: bool,
) -> (u64, u64) {
    let counting = Counting::new(model);
    let c = Collection::new(input.roots)
        .finalizable(input.finalizable)
        .soft_refs(input.soft_refs)
        .solo(solo);
    let m = marker.collect(&counting, &c);
    let o = &expect.oracle;
    if *m.bitmap != o.marked {
        let first = m.bitmap.first_difference(&o.marked);
        panic!(
            "{what}: marked {} objects, oracle {}; first difference at {first:?}",
            m.bitmap.count(),
            o.objects
        );
    }
    // Only a deque that may deliver an item twice may scan an object
    // twice (whole, each time), and only then may scans exceed marks.
    let once = m
        .stats
        .config
        .as_ref()
        .expect("config")
        .deque()
        .exactly_once();
    let visits = counting.counts();
    let wrong = |got: u32, want: u32| {
        if once || want == 0 {
            got != want
        } else {
            got < want || got % want != 0
        }
    };
    if let Some(i) = (0..visits.len()).find(|&i| wrong(visits[i], expect.visits[i])) {
        panic!(
            "{what}: object {i} had {} slots visited, the oracle {} (a chunk scanned twice or skipped)",
            visits[i], expect.visits[i]
        );
    }
    let report = m.report();
    let t = m.stats.total();
    assert_eq!(t.objects_marked, o.objects, "{what}: objects_marked");
    if once {
        assert_eq!(t.objects_scanned, o.objects, "{what}: objects_scanned");
        assert_eq!(t.slots_scanned, o.references, "{what}: slots scanned");
        assert_eq!(t.duplicate_holders, 0, "{what}: duplicate holders");
    } else {
        assert!(t.objects_scanned >= o.objects, "{what}: objects_scanned");
        assert!(t.slots_scanned >= o.references, "{what}: slots scanned");
    }
    assert_eq!(
        m.stats.duplicate_scans,
        t.objects_scanned - o.objects,
        "{what}: duplicate scans"
    );
    assert_eq!(
        (
            report.live_objects(),
            report.live_bytes(),
            report.live_footprint_bytes()
        ),
        (o.objects, o.bytes, o.footprint_bytes),
        "{what}: live objects, bytes and footprint bytes"
    );
    let by_type: Vec<(u64, u64)> = report
        .live_by_type()
        .iter()
        .map(|t| (t.objects, t.bytes))
        .collect();
    assert_eq!(by_type, o.live_by_type, "{what}: live by type");
    assert_eq!(
        sorted(report.cleared().copied()),
        o.cleared,
        "{what}: cleared slots"
    );
    let by_worker: Vec<WeakRef> = report
        .cleared_by_worker()
        .flat_map(|l| {
            assert_eq!(l.iter().len(), l.len(), "{what}: a worker's count");
            l.into_iter().copied()
        })
        .collect();
    assert_eq!(sorted(by_worker), o.cleared, "{what}: cleared by worker");
    assert_eq!(
        sorted(report.to_finalize()),
        o.to_finalize,
        "{what}: to finalize"
    );
    assert_eq!(
        report.ephemerons().values_traced,
        o.ephemeron_values_traced,
        "{what}: ephemeron values traced"
    );
    assert_eq!(
        sorted(report.weak_refs().copied()),
        sorted(o.weak_refs.iter().copied()),
        "{what}: non-strong slots found"
    );
    (m.stats.duplicate_scans, t.duplicate_holders)
}

/// As [`check`], through header mark bits (`collect_with`), for a
/// [`Graph`] (as a [`Dyn`]).
pub fn check_with_headers(
    marker: &mut Marker,
    g: &Graph,
    input: &OracleInput<'_>,
    expect: &Expect,
    what: &str,
) {
    let marks = HeaderMarks::new(g.0.len());
    let c = Collection::new(input.roots)
        .finalizable(input.finalizable)
        .soft_refs(input.soft_refs);
    let report = marker.collect_with(&Dyn::of(g), &DynStore(&marks), &c);
    let o = &expect.oracle;
    assert_eq!(
        marks.marked(),
        o.marked.iter().collect::<Vec<_>>(),
        "{what}: header marks"
    );
    assert_eq!(
        sorted(report.cleared().copied()),
        o.cleared,
        "{what}: cleared (headers)"
    );
    assert_eq!(
        sorted(report.to_finalize()),
        o.to_finalize,
        "{what}: to finalize (headers)"
    );
    assert_eq!(report.live_bytes(), o.bytes, "{what}: live bytes (headers)");
}
