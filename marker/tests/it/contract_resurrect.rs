//! Soft references found only while resurrecting get the soft-reference
//! policy, as HotSpot's Parallel GC does (`docs/design.md`, "Runtime
//! contract", step 4): the engine against the oracle on a graph built for
//! it, under every policy, and the expected outcome worked out by hand.

use crate::common;

use common::{check, expect, matrix, policies, r, Dyn, Graph, Kind};
use stealmark_heap::{oracle, OracleInput};
use stealmark_marker::model::SoftRefs;
use stealmark_marker::{Collection, Marker, MarkerConfig};

/// Root 0 holds a soft reference to 7. The finalizable 1 is unreachable; it
/// holds a soft reference to 2 (which reaches 3, and soft 4), a weak one to
/// 5 and a phantom one to 6. Nothing else reaches 2 to 6. The finalizable 8
/// is unreachable and holds a soft reference to 9, whose index the `Ask`
/// policy of the tests keeps (a multiple of 3).
fn graph() -> Graph {
    use Kind::*;
    Graph(vec![
        vec![(7, Soft)],
        vec![(2, Soft), (5, Weak), (6, Phantom)],
        vec![(3, Strong), (4, Soft)],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![(9, Soft)],
        vec![],
    ])
}

#[test]
fn soft_references_found_while_resurrecting_get_the_policy() {
    let g = graph();
    let roots = [r(0)];
    let finalizable = [r(1), r(8)];
    let mut n = 0;
    for (deque, workers) in matrix(&[1, 2, 3, 8]) {
        for soft_refs in policies() {
            n += 1;
            let mut config = MarkerConfig::with_workers(workers);
            config.set_deque(deque).set_seed(n);
            let mut marker = Marker::new(config).unwrap();
            let input = OracleInput {
                roots: &roots,
                finalizable: &finalizable,
                soft_refs,
            };
            let e = expect(&g, &input);
            check(
                &mut marker,
                &Dyn::of(&g),
                &input,
                &e,
                &format!("{deque} w={workers} {soft_refs:?}"),
            );
        }
    }
}

/// A policy, the objects a collection under it marks, and the (holder,
/// slot) pairs it clears.
type Case<'a> = (SoftRefs<'a>, Vec<usize>, Vec<(usize, usize)>);

/// The outcome under each policy, by hand, for the oracle and the engine.
#[test]
fn keep_all_keeps_what_a_resurrected_object_softly_holds() {
    let g = graph();
    let roots = [r(0)];
    let finalizable = [r(1), r(8)];
    let cases: [Case<'_>; 3] = [
        (
            SoftRefs::KeepAll,
            vec![0, 1, 2, 3, 4, 7, 8, 9],
            vec![(1, 1), (1, 2)],
        ),
        (
            SoftRefs::ClearAll,
            vec![0, 1, 8],
            vec![(0, 0), (1, 0), (1, 1), (1, 2), (8, 0)],
        ),
        (
            SoftRefs::Ask(&common::KeepThirds),
            vec![0, 1, 8, 9],
            vec![(0, 0), (1, 0), (1, 1), (1, 2)],
        ),
    ];
    for (soft_refs, marked, cleared) in cases {
        let input = OracleInput {
            roots: &roots,
            finalizable: &finalizable,
            soft_refs,
        };
        let o = oracle(&g, &input);
        assert_eq!(o.marked.iter().collect::<Vec<_>>(), marked, "{soft_refs:?}");
        let got: Vec<(usize, usize)> = o
            .cleared
            .iter()
            .map(|w| (w.holder.index(), w.slot))
            .collect();
        assert_eq!(got, cleared, "oracle, {soft_refs:?}");
        for workers in [1, 2] {
            let mut marker = Marker::new(MarkerConfig::with_workers(workers)).unwrap();
            let c = Collection::new(&roots[..])
                .finalizable(&finalizable[..])
                .soft_refs(soft_refs);
            let m = marker.collect(&Dyn::of(&g), &c);
            let mut got: Vec<(usize, usize)> = m
                .report()
                .cleared()
                .map(|w| (w.holder.index(), w.slot))
                .collect();
            got.sort_unstable();
            assert_eq!(got, cleared, "engine w={workers} {soft_refs:?}");
            for &i in &marked {
                assert!(m.is_marked(&g, r(i)), "{i} w={workers} {soft_refs:?}");
            }
        }
    }
}
