//! Every generator shape: determinism, object counts, and the reachable count
//! it claims, checked against the sequential oracle.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use stealmark_heap::{
    generate_heap, mark_sequential, oracle, ArenaLayout, GenConfig, HeapGraph, MarkIndex,
    ObjectModel, OracleInput, Shape, SlotKind,
};

fn fingerprint(config: &GenConfig) -> u64 {
    let g = generate_heap(config).unwrap();
    let mut h = DefaultHasher::new();
    g.heap.view().to_words().hash(&mut h);
    for r in g.heap.roots() {
        g.heap.view().pos(*r).hash(&mut h);
    }
    h.finish()
}

#[test]
fn shape_names_round_trip() {
    let names: Vec<&str> = Shape::ALL.iter().map(|s| s.name()).collect();
    assert_eq!(
        names,
        [
            "random",
            "power-law",
            "binary-tree",
            "list",
            "wide",
            "big-array",
            "dag",
            "runtime",
            "weak",
            "ephemeron-chain"
        ]
    );
    for s in Shape::ALL {
        assert_eq!(s.to_string().parse::<Shape>().unwrap(), *s);
    }
    let err = "tree".parse::<Shape>().unwrap_err();
    assert!(err.to_string().contains("binary-tree"));
}

#[test]
fn every_shape_matches_its_claims() {
    for &shape in Shape::ALL {
        let fractions: &[f64] = if shape == Shape::EphemeronChain {
            &[0.0]
        } else {
            &[0.0, 0.3]
        };
        for &garbage in fractions {
            let config = GenConfig::new(shape, 20_000).seed(11).garbage(garbage);
            let g = generate_heap(&config).unwrap();
            let view = g.heap.view();
            assert_eq!(view.object_count(), g.info.objects, "{shape}");
            assert_eq!(
                view.mark_index_bound() as u64,
                g.info.arena_words.div_ceil(2),
                "{shape}"
            );
            assert_eq!(g.heap.roots().len() as u64, g.info.roots, "{shape}");
            if shape != Shape::Dag {
                assert_eq!(g.info.objects, 20_000, "{shape}");
            }
            let input = OracleInput {
                finalizable: g.heap.finalizable(),
                ..OracleInput::roots(g.heap.roots())
            };
            let oracle = oracle(&view, &input);
            assert_eq!(oracle.marked.count(), oracle.objects);
            assert_eq!(
                g.heap.finalizable().len() as u64,
                g.info.finalizable,
                "{shape}"
            );
            if let Some(reachable) = g.info.reachable {
                assert_eq!(oracle.objects, reachable, "{shape} garbage {garbage}");
            }
            assert!(oracle.objects + g.info.garbage <= g.info.objects, "{shape}");
            if garbage > 0.0 && shape != Shape::Dag {
                let expected = (20_000.0 * garbage) as u64;
                let slack = if shape == Shape::Runtime { 400 } else { 0 };
                assert!(
                    g.info.garbage.abs_diff(expected) <= slack,
                    "{shape}: {}",
                    g.info.garbage
                );
            }
        }
    }
}

#[test]
fn generators_are_deterministic_and_seeded() {
    for &shape in Shape::ALL {
        let a = fingerprint(&GenConfig::new(shape, 5_000).seed(3));
        let b = fingerprint(&GenConfig::new(shape, 5_000).seed(3));
        assert_eq!(a, b, "{shape}");
    }
    for shape in [Shape::Random, Shape::PowerLaw, Shape::Dag, Shape::Runtime] {
        let a = fingerprint(&GenConfig::new(shape, 5_000).seed(3));
        let b = fingerprint(&GenConfig::new(shape, 5_000).seed(4));
        assert_ne!(a, b, "{shape}");
    }
}

#[test]
fn big_array_has_a_million_slots() {
    let g = generate_heap(&GenConfig::new(Shape::BigArray, 1000)).unwrap();
    let view = g.heap.view();
    let max = view.objects().map(|o| view.slot_count(o)).max().unwrap();
    assert!(max >= 1 << 20);
    assert_eq!(mark_sequential(&view, g.heap.roots()).objects, 1000);
}

#[test]
fn dag_follows_branch_and_depth() {
    let g = generate_heap(&GenConfig::new(Shape::Dag, 10_000_000).dag(4, 6)).unwrap();
    let view = g.heap.view();
    // Depth 6 with branch 4: at most 1 + 4 + 4*3.33.. nodes per level; every
    // node has at most 4 children and the DAG is finite and fully reachable.
    assert!(view.objects().all(|o| view.slot_count(o) <= 4));
    assert!(g.info.objects < 1 + 4 + 16 + 64 + 256 + 1024 + 4096);
    assert_eq!(
        Some(mark_sequential(&view, g.heap.roots()).objects),
        g.info.reachable
    );
    // Capped by the object count.
    let g = generate_heap(&GenConfig::new(Shape::Dag, 3000)).unwrap();
    assert_eq!(g.info.objects, 3000);
}

#[test]
fn runtime_has_weak_refs_cycles_arrays_and_size_classes() {
    let g = generate_heap(&GenConfig::new(Shape::Runtime, 100_000).garbage(0.25)).unwrap();
    let view = g.heap.view();
    let oracle = mark_sequential(&view, g.heap.roots());
    assert_eq!(Some(oracle.objects), g.info.reachable);
    // Weak references, some to unmarked (garbage) referents.
    assert!(!oracle.weak_refs.is_empty());
    assert!(oracle
        .weak_refs
        .iter()
        .any(|w| !oracle.marked.contains(view.mark_index(w.target))));
    // Parent pointers: some marked object points back at an object that
    // points at it (a cycle of length 2).
    let has_cycle = view.objects().take(10_000).any(|o| {
        let mut back = false;
        view.scan_slots(o, 0..usize::MAX, |_, t, k| {
            if k.is_strong() && t != o {
                view.scan_slots(t, 0..usize::MAX, |_, u, _| back |= u == o);
            }
        });
        back
    });
    assert!(has_cycle);
    let mut sizes: Vec<usize> = view.objects().map(|o| view.size_bytes(o)).collect();
    sizes.sort_unstable();
    sizes.dedup();
    assert!(sizes.len() >= 10, "size classes: {sizes:?}");
    let names: Vec<&str> = (0..g.heap.type_count() as u32)
        .map(|t| g.heap.type_name(t).unwrap())
        .collect();
    assert!(names.contains(&"Object[]") && names.contains(&"WeakReference"));
}

#[test]
fn bad_configurations_are_errors() {
    for config in [
        GenConfig::new(Shape::Random, 0),
        GenConfig::new(Shape::Random, 10).garbage(1.0),
        GenConfig::new(Shape::Random, 10).garbage(-0.5),
        GenConfig::new(Shape::Random, 10).degree(0),
        GenConfig::new(Shape::BigArray, 1),
        GenConfig::new(Shape::Dag, 10).dag(0, 3),
        GenConfig::new(Shape::List, 1 << 33),
    ] {
        assert!(generate_heap(&config).is_err(), "{config:?}");
    }
}

#[test]
fn gen_info_serialises_with_shape_names() {
    let g = generate_heap(&GenConfig::new(Shape::BinaryTree, 7)).unwrap();
    let json = serde_json::to_value(&g.info).unwrap();
    assert_eq!(json["shape"], "binary-tree");
    assert_eq!(json["reachable"], 7);
    assert_eq!(json["objects"], 7);
}

/// The whole contract's input for a heap: its roots and finalizable
/// objects, soft references cleared.
fn contract<G: HeapGraph>(g: &G) -> stealmark_heap::OracleResult {
    stealmark_heap::oracle(
        &g.view(),
        &stealmark_heap::OracleInput {
            roots: g.roots(),
            finalizable: g.finalizable(),
            soft_refs: stealmark_heap::SoftRefs::ClearAll,
        },
    )
}

#[test]
fn contract_shapes_match_their_claims_in_both_layouts_and_strengths() {
    for &shape in &[Shape::Weak, Shape::EphemeronChain] {
        for layout in ArenaLayout::ALL {
            for all_strong in [false, true] {
                let config = GenConfig::new(shape, 30_000)
                    .seed(11)
                    .layout(Some(layout))
                    .all_strong(all_strong);
                let g = generate_heap(&config).unwrap();
                let what = format!("{shape} {layout} all_strong={all_strong}");
                let view = g.heap.view();
                assert_eq!(view.layout(), layout, "{what}");
                assert_eq!(g.info.layout, layout, "{what}");
                assert_eq!(view.object_count(), 30_000, "{what}");
                assert_eq!(
                    view.mark_index_bound() as u64,
                    g.info.arena_words.div_ceil(2),
                    "{what}"
                );
                assert_eq!(g.heap.finalizable().len() as u64, g.info.finalizable);
                let r = contract(&g.heap);
                assert_eq!(Some(r.objects), g.info.reachable, "{what}");
                if all_strong {
                    assert!(r.weak_refs.is_empty() && r.to_finalize.is_empty(), "{what}");
                    assert!(g.heap.finalizable().is_empty(), "{what}");
                }
            }
        }
    }
}

#[test]
fn weak_has_every_kind_chains_and_every_kind_of_finalizable_object() {
    let g = generate_heap(&GenConfig::new(Shape::Weak, 200_000).seed(3)).unwrap();
    let r = contract(&g.heap);
    let count = |k: fn(&SlotKind) -> bool| r.weak_refs.iter().filter(|w| k(&w.kind)).count();
    assert!(count(|k| *k == SlotKind::Soft) > 100);
    assert!(count(|k| *k == SlotKind::Phantom) > 100);
    assert!(count(|k| *k == SlotKind::Weak) > 1000);
    let ephemerons = count(|k| matches!(k, SlotKind::Ephemeron { .. }));
    // 5% of the objects are ephemeron values; spare entries of the live
    // tables hold live values too.
    assert!((10_000..13_000).contains(&ephemerons), "{ephemerons}");
    assert!(
        r.ephemeron_values_traced > 3_000,
        "{}",
        r.ephemeron_values_traced
    );
    // Values whose key is dead are cleared, and so are weak references to
    // dead and to finalizable objects.
    assert!(r
        .cleared
        .iter()
        .any(|w| matches!(w.kind, SlotKind::Ephemeron { .. })));
    assert!(r
        .cleared
        .iter()
        .any(|w| w.kind == SlotKind::Weak && r.to_finalize.binary_search(&w.target).is_ok()));
    // Finalizable objects: reachable ones (not finalized), dead ones, and
    // ones reachable only from other finalizable objects.
    let finalizable: std::collections::BTreeSet<_> = g.heap.finalizable().iter().collect();
    assert!(finalizable.len() > r.to_finalize.len());
    let only_from_finalizable = r.to_finalize.iter().filter(|&&f| {
        r.to_finalize
            .iter()
            .any(|&h| h != f && g.heap.view().slots(h).flatten().any(|(t, _)| t == f))
    });
    assert!(only_from_finalizable.count() > 100);
    // Chains: a value that is the key of another entry.
    let keys: std::collections::HashSet<_> = r
        .weak_refs
        .iter()
        .filter_map(|w| match w.kind {
            SlotKind::Ephemeron { key } => Some(key),
            _ => None,
        })
        .collect();
    let chained = r
        .weak_refs
        .iter()
        .filter(|w| matches!(w.kind, SlotKind::Ephemeron { .. }) && keys.contains(&w.target))
        .count();
    assert!(chained > 1000, "{chained}");
    // Histogram by type.
    assert_eq!(r.live_by_type.len(), g.heap.type_count());
}

#[test]
fn ephemeron_chain_is_as_long_as_the_heap() {
    let g = generate_heap(&GenConfig::new(Shape::EphemeronChain, 10_000)).unwrap();
    let r = contract(&g.heap);
    assert_eq!(r.objects, 10_000);
    assert_eq!(r.ephemeron_values_traced, 10_000 - 3);
    assert!(r.cleared.is_empty());
    assert!(generate_heap(&GenConfig::new(Shape::EphemeronChain, 10).garbage(0.1)).is_err());
    assert!(generate_heap(&GenConfig::new(Shape::Weak, 99)).is_err());
    assert!(generate_heap(&GenConfig::new(Shape::List, 99).all_strong(true)).is_err());
}
