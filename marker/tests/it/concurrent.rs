//! Mark cycles against the oracle, with randomized mutators running between
//! incremental steps or alongside the background workers
//! (`tests/it/common/mutable.rs`), through either barrier family. At the
//! end of every cycle the marked set must contain everything the oracle
//! marks in the end state and every object allocated black during the
//! cycle; with the snapshot barrier, also everything the oracle marks in a
//! frozen copy of the start state (the snapshot). With no mutation, the
//! cycle must equal the oracle exactly (marks, cleared slots, finalized
//! objects).
//!
//! `cargo test -p stealmark-marker --features inject-delays --test delays`
//! runs the same matrix with random delays inside the workers.

use crate::common;

use common::mutable::{Family, MutHeap, Mutator};
use common::Dyn;
use stealmark_heap::{
    generate_heap, oracle, GenConfig, HeapGraph, OracleInput, OracleResult, Shape,
};
use stealmark_marker::model::SoftRefs;
use stealmark_marker::{
    Collection, CycleError, CycleOptions, CycleStats, DequeKind, MarkBitmap, MarkIndex, Marker,
    MarkerConfig, ObjRef, Report, SlotKind,
};

const OBJECTS: usize = 3000;
const CAPACITY: usize = 6000;

/// The roots of `threads` mutators at the start: 12 random objects each.
fn start_roots(threads: usize, seed: u64) -> Vec<Vec<ObjRef>> {
    (0..threads)
        .map(|t| {
            (0..12)
                .map(|k| ObjRef::from_index((seed as usize * 31 + t * 977 + k * 131) % OBJECTS))
                .collect()
        })
        .collect()
}

fn finalizable() -> Vec<ObjRef> {
    (0..OBJECTS).step_by(17).map(ObjRef::from_index).collect()
}

fn run_oracle(heap: &MutHeap, roots: &[ObjRef], fin: &[ObjRef]) -> OracleResult {
    oracle(
        heap,
        &OracleInput {
            roots,
            finalizable: fin,
            soft_refs: SoftRefs::ClearAll,
        },
    )
}

/// Checks the cycle's marks against the oracles (the start's, if given;
/// the end's) and the allocations.
fn check(
    what: &str,
    marks: &MarkBitmap,
    start: Option<&OracleResult>,
    end: &OracleResult,
    allocated: &[ObjRef],
) {
    for (name, o) in start
        .map(|s| ("start", s))
        .into_iter()
        .chain([("end", end)])
    {
        if let Some(i) = o.marked.iter().find(|&i| !marks.contains(i)) {
            panic!("{what}: object {i}, marked by the oracle of the {name} state, is unmarked");
        }
    }
    if let Some(o) = allocated.iter().find(|o| !marks.contains(o.index())) {
        panic!(
            "{what}: object {} allocated during the cycle is unmarked",
            o.index()
        );
    }
}

fn config(workers: usize, deque: DequeKind) -> MarkerConfig {
    let mut c = MarkerConfig::with_workers(workers);
    c.set_deque(deque);
    c
}

/// Which barrier family a cycle's mutators use; with incremental update,
/// whether they may allocate black (`CycleOptions::black_allocation`: off,
/// they allocate white, and a step on one thread marks unshared).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Barrier {
    Satb,
    IncrementalUpdate { black_allocation: bool },
}

/// How a cycle marks: concurrently, or in incremental steps (on the
/// mutator's thread, or `parallel` on every worker).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Marking {
    Concurrent,
    Steps { parallel: bool },
}

/// One cycle with `threads` mutator threads of `ops` operations each,
/// marking concurrently (or in steps: one mutator thread interleaved with
/// steps of 48 objects), through `barrier`. Returns the cycle's statistics
/// and the holders rescanned.
fn cycle(
    workers: usize,
    deque: DequeKind,
    threads: usize,
    ops: usize,
    (marking, barrier): (Marking, Barrier),
    seed: u64,
) -> (CycleStats, u64) {
    let incremental = marking != Marking::Concurrent;
    let mut heap = MutHeap::random(OBJECTS, CAPACITY, seed);
    heap.yield_every = 8;
    let frozen = heap.freeze();
    let mut mutators: Vec<Mutator> = start_roots(threads, seed)
        .into_iter()
        .enumerate()
        .map(|(t, roots)| Mutator::new(roots, seed * 100 + t as u64))
        .collect();
    let roots0: Vec<ObjRef> = mutators.iter().flat_map(|m| m.roots.clone()).collect();
    let fin = finalizable();
    let start = run_oracle(&frozen, &roots0, &fin);
    let marks = MarkBitmap::new(CAPACITY);
    let mut marker = Marker::new(config(workers, deque)).unwrap();
    let mut options = CycleOptions::default();
    options.parallel_steps = marking == (Marking::Steps { parallel: true });
    if let Barrier::IncrementalUpdate { black_allocation } = barrier {
        options.black_allocation = black_allocation;
    }
    let model = Dyn::of(&heap);
    let cycle = marker.start_with(&model, &marks, &roots0[..], options);
    // An incremental mutator runs between steps: it may skip the barrier
    // for unmarked holders. A concurrent one races the workers: always
    // through it.
    let family = match barrier {
        Barrier::Satb => Family::Satb,
        Barrier::IncrementalUpdate { black_allocation } => Family::IncrementalUpdate {
            marks: incremental.then_some(&marks),
            black_allocation,
        },
    };
    if incremental {
        let m = &mut mutators[0];
        let mut buffer = cycle.mutator();
        let mut done = false;
        for i in 0..ops {
            m.op(&heap, &mut buffer, family);
            if i % 16 == 0 {
                done = cycle.step(48).unwrap();
            }
        }
        drop(buffer);
        while !done {
            done = cycle.step(1000).unwrap();
        }
    } else {
        cycle
            .concurrently(|| {
                std::thread::scope(|s| {
                    for m in mutators.iter_mut() {
                        let (heap, cycle) = (&heap, &cycle);
                        s.spawn(move || {
                            let mut buffer = cycle.mutator();
                            for i in 0..ops {
                                m.op(heap, &mut buffer, family);
                                if i % 512 == 0 {
                                    // A thread entering native code: hands its
                                    // entries over and takes a new buffer later.
                                    drop(buffer);
                                    std::thread::yield_now();
                                    buffer = cycle.mutator();
                                }
                            }
                        });
                    }
                });
            })
            .unwrap();
    }
    let roots1: Vec<ObjRef> = mutators.iter().flat_map(|m| m.roots.clone()).collect();
    let (report, stats) = cycle
        .finish(&Collection::new(&roots1[..]).finalizable(&fin[..]))
        .unwrap();
    let allocated: Vec<ObjRef> = mutators.iter().flat_map(|m| m.allocated.clone()).collect();
    assert_eq!(stats.allocated_black, allocated.len() as u64);
    check_cleared(&report, &marks);
    check_no_dangling(&heap, &report, &marks);
    let end = run_oracle(&heap, &roots1, &fin);
    let what = format!(
        "{workers} workers, {deque}, {threads} mutators, {marking:?}, {barrier:?}, seed {seed}"
    );
    let snapshot = (barrier == Barrier::Satb).then_some(&start);
    check(&what, &marks, snapshot, &end, &allocated);
    let rescans: u64 = mutators.iter().map(|m| m.rescans).sum();
    if rescans > 0 {
        assert!(
            report.stats.total().rescans > 0,
            "{what}: {rescans} holders handed to the backward barrier, none rescanned"
        );
    }
    (stats, rescans)
}

/// No marked object keeps a reference to an unmarked one that the report
/// does not name: every non-strong slot of a marked holder whose target is
/// unmarked at the end is reported cleared, with that target. (A slot
/// written after its holder was scanned is reported only if the barrier
/// saw the write: shaded, its target is marked; rescanned, it is judged on
/// what it holds now.)
fn check_no_dangling(heap: &MutHeap, report: &Report<'_>, marks: &MarkBitmap) {
    let cleared: std::collections::HashSet<(ObjRef, usize, ObjRef)> = report
        .cleared()
        .map(|w| (w.holder, w.slot, w.target))
        .collect();
    for (holder, slot, target, kind) in heap.non_strong_slots() {
        if marks.contains(holder.index())
            && !marks.contains(target.index())
            && !cleared.contains(&(holder, slot, target))
        {
            panic!(
                "object {} keeps {kind:?} slot {slot} to unmarked object {}, not reported cleared",
                holder.index(),
                target.index()
            );
        }
    }
}

/// Every ephemeron slot reported cleared has an unmarked key (judged after
/// finalization, J2). Weak slots are judged before it (J1), so their
/// targets may since have been resurrected: the exact comparison without
/// mutation checks them.
fn check_cleared(report: &Report<'_>, marks: &MarkBitmap) {
    for w in report.cleared() {
        if let SlotKind::Ephemeron { key } = w.kind {
            assert!(
                !marks.contains(key.index()),
                "cleared entry {w:?} has a marked key"
            );
        }
    }
}

/// Concurrent cycles at 1, 2 and 8 workers through `barrier`: the
/// mutators must race the workers in most of them.
fn concurrent_cycles(barrier: Barrier) {
    let mut raced = 0;
    for workers in [1, 2, 8] {
        for seed in 0..4 {
            let deque =
                [DequeKind::StealHalf, DequeKind::ChaseLev, DequeKind::Abp][seed as usize % 3];
            let (stats, _) = cycle(
                workers,
                deque,
                3,
                6000,
                (Marking::Concurrent, barrier),
                seed,
            );
            // Buffers marked from in the background: the mutators raced
            // the workers.
            raced += usize::from(stats.background_steps > 1);
        }
    }
    assert!(
        raced >= 6,
        "{barrier:?}: only {raced} of 12 cycles had background steps after the first"
    );
}

#[test]
fn concurrent_cycles_keep_the_snapshot_and_the_end_state() {
    concurrent_cycles(Barrier::Satb);
}

#[test]
fn concurrent_incremental_update_cycles_keep_the_end_state() {
    concurrent_cycles(Barrier::IncrementalUpdate {
        black_allocation: true,
    });
}

#[test]
fn incremental_cycles_keep_the_snapshot_and_the_end_state() {
    for workers in [1, 2, 8] {
        for seed in 10..14 {
            let marking = Marking::Steps {
                parallel: seed % 2 == 1,
            };
            cycle(
                workers,
                DequeKind::StealHalf,
                1,
                8000,
                (marking, Barrier::Satb),
                seed,
            );
        }
    }
}

/// Incremental steps (on the mutator's thread, or on every worker) with a
/// mutator that barriers only stores into marked holders: some holders
/// must be rescanned in every cycle. Without black allocation, the steps
/// that run on one thread (on the mutator's, or at one worker) mark
/// unshared.
#[test]
fn incremental_update_steps_keep_the_end_state() {
    for black_allocation in [true, false] {
        for workers in [1, 2, 8] {
            for seed in 20..24 {
                let deque = [DequeKind::StealHalf, DequeKind::ChaseLev][seed as usize % 2];
                let marking = Marking::Steps {
                    parallel: seed >= 22,
                };
                let barrier = Barrier::IncrementalUpdate { black_allocation };
                let (_, rescans) = cycle(workers, deque, 1, 8000, (marking, barrier), seed);
                assert!(
                    rescans > 0,
                    "{workers} workers, seed {seed}, {barrier:?}: no holder rescanned"
                );
            }
        }
    }
}

/// Without mutation, a cycle is a collection: it equals the oracle exactly.
#[test]
fn a_cycle_without_mutation_equals_the_oracle() {
    let runs = [
        (1, Marking::Steps { parallel: false }),
        (2, Marking::Concurrent),
        (8, Marking::Concurrent),
        (4, Marking::Steps { parallel: false }),
        (4, Marking::Steps { parallel: true }),
    ];
    for (workers, marking) in runs {
        let incremental = marking != Marking::Concurrent;
        let heap = MutHeap::random(OBJECTS, CAPACITY, 7);
        let roots: Vec<ObjRef> = start_roots(2, 7).concat();
        let fin = finalizable();
        let want = run_oracle(&heap, &roots, &fin);
        let marks = MarkBitmap::new(CAPACITY);
        let mut marker = Marker::new(MarkerConfig::with_workers(workers)).unwrap();
        let mut options = CycleOptions::default();
        options.parallel_steps = marking == (Marking::Steps { parallel: true });
        let model = Dyn::of(&heap);
        let cycle = marker.start_with(&model, &marks, &roots[..], options);
        if incremental {
            let mut steps = 1;
            while !cycle.step(100).unwrap() {
                steps += 1;
            }
            assert!(steps > 3, "small budgets take several steps");
        } else {
            cycle
                .concurrently(|| {
                    while !cycle.is_quiet() {
                        std::thread::yield_now();
                    }
                })
                .unwrap();
        }
        let (report, stats) = cycle
            .finish(&Collection::new(&roots[..]).finalizable(&fin[..]))
            .unwrap();
        assert_eq!(marks.first_difference(&want.marked), None);
        let mut cleared: Vec<_> = report.cleared().copied().collect();
        cleared.sort();
        assert_eq!(cleared, want.cleared);
        let mut fin_got: Vec<_> = report.to_finalize().collect();
        fin_got.sort();
        assert_eq!(fin_got, want.to_finalize);
        assert_eq!(report.live_objects(), want.objects);
        assert_eq!(stats.increments > 0, incremental);
        assert_eq!(stats.background_steps > 0, !incremental);
    }
}

/// Steps on every worker share the scanning (worker 0 shares its work as a
/// trace does, and the others wait for it while it scans); steps on the
/// mutator's thread scan on worker 0 alone. A tree of strong slots, no
/// finalizable object: the steps mark everything, and the remark scans
/// nothing more.
#[test]
fn parallel_steps_share_the_scanning() {
    let g = generate_heap(&GenConfig::new(Shape::BinaryTree, 20_000).seed(3)).unwrap();
    let view = g.heap.view();
    let roots = g.heap.roots();
    let want = oracle(&view, &OracleInput::roots(roots));
    for parallel in [false, true] {
        let marks = MarkBitmap::new(view.mark_index_bound());
        let mut marker = Marker::new(MarkerConfig::with_workers(4)).unwrap();
        let mut options = CycleOptions::default();
        options.parallel_steps = parallel;
        let model = Dyn::of(&view);
        let cycle = marker.start_with(&model, &marks, roots, options);
        let mut steps = 1;
        while !cycle.step(2000).unwrap() {
            steps += 1;
        }
        let (report, _) = cycle.finish(&Collection::new(roots)).unwrap();
        assert_eq!(marks.first_difference(&want.marked), None);
        assert!(steps > 4, "{steps} steps");
        let scanned: Vec<u64> = report
            .stats
            .workers
            .iter()
            .map(|w| w.stats.objects_scanned)
            .collect();
        assert_eq!(scanned.iter().sum::<u64>(), want.objects);
        let others: u64 = scanned[1..].iter().sum();
        assert_eq!(
            others > 0,
            parallel,
            "parallel steps {parallel}: scanned per worker {scanned:?}"
        );
    }
}

/// A buffer leaked with `mem::forget` makes the remark fail (its entries are
/// lost), and the marker stays usable.
#[test]
fn a_leaked_buffer_fails_the_remark() {
    let heap = MutHeap::random(100, 200, 3);
    let roots = [ObjRef::from_index(0)];
    let marks = MarkBitmap::new(200);
    let mut marker = Marker::new(MarkerConfig::with_workers(2)).unwrap();
    let model = Dyn::of(&heap);
    let cycle = marker.start(&model, &marks, &roots[..]);
    let mut buffer = cycle.mutator();
    buffer.pre_write(Some(ObjRef::from_index(5)));
    std::mem::forget(buffer);
    let err = cycle.finish(&Collection::new(&roots[..])).err();
    assert_eq!(err, Some(CycleError::LeakedBuffers { held: 1 }));
    let fresh = MarkBitmap::new(200);
    let again = marker.collect_with(&model, &fresh, &Collection::new(&roots[..]));
    assert_eq!(
        again.live_objects(),
        oracle(&heap, &OracleInput::roots(&roots)).objects
    );
}

/// An overwritten reference reaches the marker through a full buffer
/// (handed off) and through a partial one (given back at the remark): the
/// objects only its old values reached stay marked.
#[test]
fn entries_of_full_and_partial_buffers_are_marked() {
    let heap = MutHeap::random(OBJECTS, CAPACITY, 5);
    let frozen = heap.freeze();
    let roots = [ObjRef::from_index(1)];
    let start = run_oracle(&frozen, &roots, &[]);
    let marks = MarkBitmap::new(CAPACITY);
    let mut marker = Marker::new(MarkerConfig::with_workers(2)).unwrap();
    let model = Dyn::of(&heap);
    let cycle = marker.start(&model, &marks, &roots[..]);
    let mut buffer = cycle.mutator();
    // Cut every strong edge of the start state, recording each old value:
    // the snapshot survives only through the buffers.
    let reached: Vec<ObjRef> = start.marked.iter().map(ObjRef::from_index).collect();
    let mut entries = 0usize;
    for &o in &reached {
        for s in [0, 1, 3] {
            if let Some(old) = heap.load(o, s) {
                buffer.pre_write(Some(old));
                entries += 1;
                heap.clear_slot(o, s);
            }
        }
    }
    assert!(
        entries > 1024 && entries % 1024 != 0,
        "{entries}: full and partial buffers"
    );
    drop(buffer);
    let (_, stats) = cycle.finish(&Collection::new(&[] as &[ObjRef])).unwrap();
    assert_eq!(stats.buffers as usize, entries.div_ceil(1024));
    check("cut edges", &marks, Some(&start), &start, &[]);
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

/// Without mutation, a cycle over random graphs with every slot kind
/// equals the oracle in everything the contract reports, under every soft
/// policy, incremental (small budgets) and concurrent (with `preclean`
/// steps setting slots aside): the remark runs the collection's steps.
#[test]
fn cycles_over_every_slot_kind_equal_the_oracle() {
    for seed in 0..24u64 {
        let (graph, roots, fin) = common::random_graph(seed, 300);
        for input in common::inputs(&roots, &fin) {
            let soft_refs = input.soft_refs;
            let want = oracle(&graph, &input);
            let incremental = seed % 2 == 0;
            let workers = 1 + seed as usize % 3;
            let marks = MarkBitmap::new(graph.0.len());
            let mut marker = Marker::new(MarkerConfig::with_workers(workers)).unwrap();
            let model = Dyn::of(&graph);
            let cycle = marker.start(&model, &marks, &roots[..]);
            if incremental {
                while !cycle.step(7).unwrap() {}
            } else {
                cycle
                    .concurrently(|| {
                        while !cycle.is_quiet() {
                            std::thread::yield_now();
                        }
                    })
                    .unwrap();
            }
            let c = Collection::new(&roots[..])
                .finalizable(&fin[..])
                .soft_refs(soft_refs);
            let (report, _) = cycle.finish(&c).unwrap();
            let what = format!("seed {seed}, {soft_refs:?}, incremental {incremental}");
            assert_eq!(marks.first_difference(&want.marked), None, "{what}");
            assert_eq!(
                sorted(report.cleared().copied().collect()),
                want.cleared,
                "{what}"
            );
            assert_eq!(
                sorted(report.to_finalize().collect()),
                want.to_finalize,
                "{what}"
            );
            assert_eq!(
                sorted(report.weak_refs().copied().collect()),
                sorted(want.weak_refs.clone()),
                "{what}"
            );
            assert_eq!(
                report.ephemerons().values_traced,
                want.ephemeron_values_traced,
                "{what}"
            );
            assert_eq!(report.live_objects(), want.objects, "{what}");
        }
    }
}
