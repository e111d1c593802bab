//! V8 snapshots worked out by hand: the type names of nodes without a name
//! (DevTools' labels), and WeakMap entries imported as ephemerons.

use stealmark_heap::{mark_sequential, HeapBuilder, HeapGraph, ObjectModel};
use stealmark_import as import;

/// A snapshot with the node fields and edge types of Node.js's, from
/// `nodes` rows `[type, name, id, self_size, edge_count]`, `edges` rows
/// `[type, name_or_index, to_node]` (`to_node` a node number, multiplied
/// here) and `strings`.
fn snapshot(nodes: &[[u64; 5]], edges: &[[u64; 3]], strings: &[&str]) -> String {
    let flat = |rows: Vec<u64>| {
        rows.iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    let node_rows = flat(nodes.iter().flatten().copied().collect());
    let edge_rows = flat(
        edges
            .iter()
            .flat_map(|&[t, n, to]| [t, n, to * 5])
            .collect(),
    );
    let strings: Vec<String> = strings.iter().map(|s| format!("{s:?}")).collect();
    format!(
        r#"{{"snapshot":{{"meta":{{"node_fields":["type","name","id","self_size","edge_count"],
"node_types":[["hidden","array","string","object","code","closure","regexp","number","native","synthetic","concatenated string","sliced string","symbol","bigint","object shape"],"string","number","number","number"],
"edge_fields":["type","name_or_index","to_node"],
"edge_types":[["context","element","property","internal","hidden","shortcut","weak"],"string_or_number","node"]}},
"node_count":{},"edge_count":{}}},
"nodes":[{node_rows}],"edges":[{edge_rows}],"strings":[{}]}}"#,
        nodes.len(),
        edges.len(),
        strings.join(",")
    )
}

/// Node types, by their index in the enum above.
const HIDDEN: u64 = 0;
const ARRAY: u64 = 1;
const OBJECT: u64 = 3;
const CODE: u64 = 4;
const SYNTHETIC: u64 = 9;
const OBJECT_SHAPE: u64 = 14;
/// Edge types.
const ELEMENT: u64 = 1;

fn import(json: &str) -> stealmark_heap::Heap {
    let mut builder = HeapBuilder::new();
    import::v8(json.as_bytes(), &mut builder).expect("imports");
    builder.finish().expect("builds")
}

/// The type name of every object, in node order.
fn type_names(heap: &stealmark_heap::Heap) -> Vec<String> {
    let view = heap.view();
    view.objects()
        .map(|o| heap.type_name(view.type_id(o)).unwrap().to_owned())
        .collect()
}

#[test]
fn nodes_without_a_name_get_devtools_labels() {
    // strings: 0 "", 1 "(root)", 2 "Foo", 3 "system / Map"
    let nodes = [
        [SYNTHETIC, 1, 1, 0, 6],
        [HIDDEN, 0, 3, 8, 0],
        [ARRAY, 0, 5, 8, 0],
        [OBJECT, 2, 7, 8, 0],
        [OBJECT_SHAPE, 0, 9, 8, 0],
        [CODE, 3, 11, 8, 0],
        [HIDDEN, 3, 13, 8, 0],
    ];
    let edges: Vec<[u64; 3]> = (1..=6).map(|i| [ELEMENT, i, i]).collect();
    let heap = import(&snapshot(
        &nodes,
        &edges,
        &["", "(root)", "Foo", "system / Map"],
    ));
    assert_eq!(
        type_names(&heap),
        [
            "(root)",
            "(system)",
            "(array)",
            "Foo",
            "(object shape)",
            "(compiled code)",
            "system / Map"
        ]
    );
    assert_eq!(mark_sequential(&heap.view(), heap.roots()).objects, 7);
}

const INTERNAL: u64 = 3;
const WEAK: u64 = 6;

/// A WeakMap whose table (node 3) has an entry with a live key (2 -> 4)
/// and one with a dead key (5 -> 6), as V8 writes them: weak edges from
/// the table to keys and values, and the entry's internal edges, from the
/// table and from the key, to the value. The table's other edge (to its
/// map, 7) is strong.
fn weak_map_snapshot() -> String {
    let nodes = [
        [SYNTHETIC, 1, 1, 0, 2],
        [OBJECT, 2, 3, 16, 1],
        [OBJECT, 3, 5, 16, 1],
        [ARRAY, 0, 7, 64, 7],
        [OBJECT, 4, 9, 16, 0],
        [OBJECT, 5, 11, 16, 1],
        [OBJECT, 4, 13, 16, 0],
        [HIDDEN, 6, 15, 40, 0],
    ];
    let edges = [
        [ELEMENT, 1, 1],
        [ELEMENT, 2, 2],
        [INTERNAL, 7, 3],
        [INTERNAL, 11, 4],
        [WEAK, 0, 2],
        [WEAK, 0, 4],
        [INTERNAL, 9, 4],
        [WEAK, 0, 5],
        [WEAK, 0, 6],
        [INTERNAL, 10, 6],
        [INTERNAL, 8, 7],
        [INTERNAL, 12, 6],
    ];
    let strings = [
        "",
        "(root)",
        "Holder",
        "K",
        "V",
        "D",
        "system / Map",
        "table",
        "map",
        "3 / part of key (K @5) -> value (V @9) pair in WeakMap (table @7)",
        "6 / part of key (D @11) -> value (V @13) pair in WeakMap (table @7)",
        "1 / part of key (K @5) -> value (V @9) pair in WeakMap (table @7)",
        "1 / part of key (D @11) -> value (V @13) pair in WeakMap (table @7)",
    ];
    snapshot(&nodes, &edges, &strings)
}

#[test]
fn weak_map_values_live_only_while_their_keys_do() {
    let json = weak_map_snapshot();
    let mut builder = HeapBuilder::new();
    let summary = import::v8(json.as_bytes(), &mut builder).expect("imports");
    let heap = builder.finish().expect("builds");
    let view = heap.view();
    let marked = mark_sequential(&view, heap.roots());
    let live: Vec<usize> = marked.marked.iter().collect();
    // The dead key's value (6) is not kept by the table.
    assert_eq!(marked.objects, 6, "marked {live:?}");
    let objects: Vec<_> = view.objects().collect();
    for i in [0, 1, 2, 3, 4, 7] {
        let index = stealmark_heap::MarkIndex::mark_index(&view, objects[i]);
        assert!(marked.marked.contains(index), "node {i} is live: {live:?}");
    }
    // The table is an ephemeron table: two entries, and its map edge as a
    // value keyed by the table itself.
    let table = view.type_id(objects[3]);
    assert_eq!(heap.type_name(table), Some("(ephemeron table)"));
    assert_eq!(
        view.type_kind(table),
        stealmark_heap::TypeKind::EphemeronTable
    );
    assert_eq!(view.slot_count(objects[3]), 14);
    assert_eq!(summary.ephemeron_references, 3);
    // Weak: the table's seven keys, and the keys' own edges to their values.
    assert_eq!(summary.weak_references, 9);
    assert_eq!(summary.references, 15);
    assert_eq!(summary.types, heap.type_count() as u64);
}
