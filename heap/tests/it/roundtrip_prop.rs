//! Property: any graph built through `HeapSink`, in either layout, gives the
//! same arena in memory and in a snapshot file, and the oracle marks exactly
//! what a naive reachability over the graph's indices finds.

use proptest::prelude::*;
use stealmark_heap::{
    mark_sequential, ArenaFormat, ArenaLayout, HeapBuilder, HeapGraph, HeapSink, Layout, MarkIndex,
    Slot, Snapshot, SnapshotWriter,
};

/// An object: type id, payload words, slots as (target index, weak).
type Object = (u32, u32, Vec<Option<(usize, bool)>>);

#[derive(Debug, Clone)]
struct Graph {
    layout: ArenaLayout,
    types: usize,
    objects: Vec<Object>,
    roots: Vec<usize>,
}

fn graph() -> impl Strategy<Value = Graph> {
    (1usize..40, 0usize..4, any::<bool>()).prop_flat_map(|(n, types, compressed)| {
        let layout = if compressed {
            ArenaLayout::Compressed
        } else {
            ArenaLayout::Wide
        };
        let object = (
            0..types.max(1) as u32,
            0u32..3,
            prop::collection::vec(prop::option::of((0..n, any::<bool>())), 0..6),
        );
        (
            prop::collection::vec(object, n),
            prop::collection::vec(0..n, 0..4),
        )
            .prop_map(move |(objects, roots)| Graph {
                layout,
                types,
                objects,
                roots,
            })
    })
}

fn emit<S: HeapSink>(g: &Graph, sink: &mut S) {
    sink.set_format(ArenaFormat::new(g.layout)).unwrap();
    let mut layout = Layout::with_layout(g.layout);
    let pos: Vec<_> = g
        .objects
        .iter()
        .map(|(_, p, s)| layout.push(s.len() as u32, *p))
        .collect();
    for t in 0..g.types {
        sink.type_name(&format!("T{t}")).unwrap();
    }
    for (ty, payload, slots) in &g.objects {
        let slots: Vec<Slot> = slots
            .iter()
            .map(|s| s.map_or(Slot::NULL, |(t, weak)| Slot::new(pos[t], weak)))
            .collect();
        sink.object(*ty, &slots, *payload).unwrap();
    }
    for &r in &g.roots {
        sink.root(pos[r]).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn memory_and_file_agree_with_naive_reachability(g in graph()) {
        let mut b = HeapBuilder::new();
        emit(&g, &mut b);
        let heap = b.finish().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.smh");
        let mut w = SnapshotWriter::create(&path).unwrap();
        emit(&g, &mut w);
        w.finish().unwrap();
        let snap = Snapshot::open(&path).unwrap();
        prop_assert_eq!(snap.view().to_words(), heap.view().to_words());

        // Naive reachability over indices.
        let n = g.objects.len();
        let mut reached = vec![false; n];
        let mut stack: Vec<usize> = g.roots.clone();
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut reached[i], true) {
                continue;
            }
            for &(t, weak) in g.objects[i].2.iter().flatten() {
                if !weak {
                    stack.push(t);
                }
            }
        }
        let weak_seen: usize = (0..n)
            .filter(|&i| reached[i])
            .map(|i| g.objects[i].2.iter().flatten().filter(|s| s.1).count())
            .sum();
        for graph in [&heap as &dyn Check, &snap as &dyn Check] {
            let (objects, weak, marked_objects) = graph.mark();
            prop_assert_eq!(objects, reached.iter().filter(|&&r| r).count() as u64);
            prop_assert_eq!(weak, weak_seen);
            prop_assert_eq!(marked_objects, reached.clone());
        }
    }
}

/// Marks a heap and reports (objects, weak refs, which objects are marked).
trait Check {
    fn mark(&self) -> (u64, usize, Vec<bool>);
}

impl<G: HeapGraph> Check for G {
    fn mark(&self) -> (u64, usize, Vec<bool>) {
        let view = self.view();
        let r = mark_sequential(&view, self.roots());
        let marked = view
            .objects()
            .map(|o| r.marked.contains(view.mark_index(o)))
            .collect();
        (r.objects, r.weak_refs.len(), marked)
    }
}
