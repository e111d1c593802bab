//! The oracle implements the runtime contract of `docs/design.md`: each
//! step of the order (strong closure, soft policy, J1, finalization, J2) on
//! small graphs whose expected result is worked out by hand.

use stealmark_heap::{
    oracle, ListGraph as Graph, ListKind as Kind, ObjRef, OracleInput, SlotKind, SoftRefPolicy,
    SoftRefs, WeakRef,
};

fn r(i: usize) -> ObjRef {
    ObjRef::from_index(i)
}

fn marked(g: &Graph, input: &OracleInput<'_>) -> Vec<usize> {
    oracle(g, input).marked.iter().collect()
}

fn cleared(g: &Graph, input: &OracleInput<'_>) -> Vec<(usize, usize, SlotKind)> {
    oracle(g, input)
        .cleared
        .iter()
        .map(|w: &WeakRef| (w.holder.index(), w.slot, w.kind))
        .collect()
}

#[test]
fn weak_slots_are_cleared_exactly_when_the_referent_is_dead() {
    // 0 -> 1 (strong), 0 -w-> 1, 0 -w-> 2; 2 is dead.
    let g = Graph(vec![
        vec![(1, Kind::Strong), (1, Kind::Weak), (2, Kind::Weak)],
        vec![],
        vec![],
    ]);
    let input = OracleInput::roots(&[]);
    assert!(marked(&g, &input).is_empty());
    let roots = [r(0)];
    let input = OracleInput::roots(&roots);
    assert_eq!(marked(&g, &input), vec![0, 1]);
    assert_eq!(cleared(&g, &input), vec![(0, 2, SlotKind::Weak)]);
    let res = oracle(&g, &input);
    assert_eq!(res.weak_refs.len(), 2);
    assert_eq!(res.references, 3);
    assert_eq!((res.objects, res.bytes), (2, 16 + 24 + 16));
    assert_eq!(res.live_by_type, vec![(1, 40), (1, 16)]);
}

/// Keeps odd-numbered referents.
struct KeepOdd;
impl SoftRefPolicy for KeepOdd {
    fn keep(&self, referent: ObjRef) -> bool {
        referent.index() % 2 == 1
    }
}

#[test]
fn the_soft_policy_decides_and_kept_referents_are_traced() {
    // 0 -s-> 1 -> 2 -s-> 3; 0 -s-> 4; 2 -w-> 4.
    let g = Graph(vec![
        vec![(1, Kind::Soft), (4, Kind::Soft)],
        vec![(2, Kind::Strong)],
        vec![(3, Kind::Soft), (4, Kind::Weak)],
        vec![],
        vec![],
    ]);
    let roots = [r(0)];
    let mut input = OracleInput::roots(&roots);
    assert_eq!(marked(&g, &input), vec![0]);
    assert_eq!(
        cleared(&g, &input),
        vec![(0, 0, SlotKind::Soft), (0, 1, SlotKind::Soft)]
    );
    input.soft_refs = SoftRefs::KeepAll;
    assert_eq!(marked(&g, &input), vec![0, 1, 2, 3, 4]);
    assert!(cleared(&g, &input).is_empty());
    // Ask: 1 is kept, so 2 is marked and its soft slot to 3 is asked too
    // (kept); 4 is refused, so both the soft and the weak slot to it clear.
    input.soft_refs = SoftRefs::Ask(&KeepOdd);
    assert_eq!(marked(&g, &input), vec![0, 1, 2, 3]);
    assert_eq!(
        cleared(&g, &input),
        vec![(0, 1, SlotKind::Soft), (2, 1, SlotKind::Weak)]
    );
}

#[test]
fn an_ephemeron_value_is_traced_if_and_only_if_its_key_is_marked() {
    // Table 0 has entries (key 1 -> value 2) and (key 3 -> value 4); key 1 is
    // reachable from the root 5 only after the table was scanned, key 3 never.
    let g = Graph(vec![
        vec![
            (1, Kind::Weak),
            (2, Kind::Ephemeron(1)),
            (3, Kind::Weak),
            (4, Kind::Ephemeron(3)),
        ],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![(1, Kind::Strong)],
    ]);
    // Both orders: the table scanned before key 1 is marked (the value
    // waits for it) and after.
    for roots in [[r(0), r(5)], [r(5), r(0)]] {
        let input = OracleInput::roots(&roots);
        assert_eq!(marked(&g, &input), vec![0, 1, 2, 5]);
        assert_eq!(
            cleared(&g, &input),
            vec![
                (0, 2, SlotKind::Weak),
                (0, 3, SlotKind::Ephemeron { key: r(3) })
            ]
        );
        assert_eq!(oracle(&g, &input).ephemeron_values_traced, 1);
    }
}

#[test]
fn an_ephemeron_chain_resolves_link_by_link() {
    // Table 0: entry k has key k+1 and value k+2, so marking key 1 (a root)
    // releases value 2, which is the next key, and so on.
    let n = 1000;
    let mut table = Vec::new();
    for k in 0..n {
        table.push((k + 2, Kind::Ephemeron(k + 1)));
    }
    let mut objects = vec![table];
    objects.extend((0..n + 1).map(|_| Vec::new()));
    let g = Graph(objects);
    let roots = [r(0), r(1)];
    let res = oracle(&g, &OracleInput::roots(&roots));
    assert_eq!(res.objects as usize, n + 2);
    assert_eq!(res.ephemeron_values_traced as usize, n);
    assert!(res.cleared.is_empty());
}

#[test]
fn finalization_resurrects_after_weak_clearing_and_before_phantom_clearing() {
    // Root 0 holds weak and phantom references to the finalizable 1, which
    // reaches 2 (also finalizable) and holds a weak reference to 3 (dead)
    // and to 2. 4 is finalizable and reachable, so it is not finalized.
    let g = Graph(vec![
        vec![(1, Kind::Weak), (1, Kind::Phantom), (4, Kind::Strong)],
        vec![(2, Kind::Strong), (3, Kind::Weak), (2, Kind::Weak)],
        vec![(3, Kind::Phantom)],
        vec![],
        vec![],
    ]);
    let roots = [r(0)];
    let finalizable = [r(4), r(2), r(1), r(2)];
    let input = OracleInput {
        roots: &roots,
        finalizable: &finalizable,
        soft_refs: SoftRefs::ClearAll,
    };
    let res = oracle(&g, &input);
    assert_eq!(res.to_finalize, vec![r(1), r(2)]);
    assert_eq!(res.marked.iter().collect::<Vec<_>>(), vec![0, 1, 2, 4]);
    // J1 clears the weak reference to 1 even though 1 is resurrected; the
    // phantom reference to 1 survives (1 is marked at J2). 1's own weak
    // slots were found while resurrecting: judged at J2 against M3, so the
    // one to 3 clears and the one to 2 (resurrected) does not. 2's phantom
    // reference to 3 clears.
    assert_eq!(
        cleared(&g, &input),
        vec![
            (0, 0, SlotKind::Weak),
            (1, 1, SlotKind::Weak),
            (2, 0, SlotKind::Phantom)
        ]
    );
}

#[test]
fn soft_slots_found_while_resurrecting_get_the_policy() {
    // The finalizable 0 is unreachable (no roots); it holds a soft slot to
    // 1 (which reaches 2) and a weak one to 3. HotSpot's Parallel GC keeps
    // the soft referent when soft references are kept, clears it when they
    // are not, and clears the weak one either way.
    let g = Graph(vec![
        vec![(1, Kind::Soft), (3, Kind::Weak)],
        vec![(2, Kind::Strong)],
        vec![],
        vec![],
    ]);
    let finalizable = [r(0)];
    let mut input = OracleInput {
        roots: &[],
        finalizable: &finalizable,
        soft_refs: SoftRefs::KeepAll,
    };
    assert_eq!(marked(&g, &input), vec![0, 1, 2]);
    assert_eq!(cleared(&g, &input), vec![(0, 1, SlotKind::Weak)]);
    input.soft_refs = SoftRefs::ClearAll;
    assert_eq!(marked(&g, &input), vec![0]);
    assert_eq!(
        cleared(&g, &input),
        vec![(0, 0, SlotKind::Soft), (0, 1, SlotKind::Weak)]
    );
    // Ask: 1 is odd, so kept.
    input.soft_refs = SoftRefs::Ask(&KeepOdd);
    assert_eq!(marked(&g, &input), vec![0, 1, 2]);
}
