//! The V8 importer against real heap snapshots written by Node.js at test
//! time, checked against counts that a separate Node.js script makes from the
//! same file with `JSON.parse`.

use crate::import_common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use import_common::{assert_same_heap, corrupt, count, have, read, run, tempdir, Counts};
use stealmark_heap::{ArenaLayout, HeapBuilder, HeapGraph, ObjectModel, SlotKind};
use stealmark_import::test_support::Chunked;
use stealmark_import::{self as import, ImportError, ImportOptions, Malformed};

/// Builds an object graph with lists, trees, cycles, arrays, maps, closures
/// and weak references, then writes a heap snapshot to `argv[2]`.
const GENERATE: &str = include_str!("import_common/generate.js");

/// Counts nodes, edges and weak edges, and the nodes reachable from node 0
/// through non-weak edges, straight from the JSON, following `snapshot.meta`.
const COUNT: &str = include_str!("import_common/count.js");

/// Writes a snapshot of a Node.js process once per test run, or returns
/// `None` (the tests say they are skipped) without node.
fn snapshot() -> Option<&'static Path> {
    static SNAPSHOT: OnceLock<Option<PathBuf>> = OnceLock::new();
    SNAPSHOT
        .get_or_init(|| {
            if !have("node", "the V8 import tests") {
                return None;
            }
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("import_v8");
            std::fs::create_dir_all(&dir).unwrap();
            let script = dir.join("generate.js");
            std::fs::write(&script, GENERATE).unwrap();
            let out = dir.join("test.heapsnapshot");
            run(Command::new("node").arg(&script).arg(&out));
            Some(out)
        })
        .as_deref()
}

/// Counts the snapshot with the independent Node.js script; also returns
/// its whole output.
fn independent_counts(dir: &Path, snap: &Path) -> (Counts, serde_json::Value) {
    let script = dir.join("count.js");
    std::fs::write(&script, COUNT).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&run(Command::new("node").arg(&script).arg(snap))).unwrap();
    let get = |k: &str| {
        json[k]
            .as_u64()
            .unwrap_or_else(|| panic!("count.js gave no {k}: {json}"))
    };
    let counts = Counts {
        objects: get("objects"),
        references: get("references"),
        weak: get("weak"),
        roots: get("roots"),
        reachable: get("reachable"),
    };
    (counts, json)
}

#[test]
fn node_snapshot_matches_independent_counts() {
    let Some(snap) = snapshot() else {
        return;
    };
    let dir = tempdir();
    let (expected, json) = independent_counts(dir.path(), snap);

    let mut builder = HeapBuilder::new();
    let file = std::fs::File::open(snap).unwrap();
    let summary = import::v8(std::io::BufReader::new(file), &mut builder).unwrap();
    let heap = builder.finish().unwrap();
    let got = count(&heap);
    eprintln!("node snapshot: {got:?}, summary {summary:?}");
    assert_eq!(got, expected);
    assert_eq!(
        (
            summary.objects,
            summary.references,
            summary.weak_references,
            summary.roots
        ),
        (expected.objects, expected.references, expected.weak, 1)
    );
    assert_eq!(summary.input_bytes, std::fs::metadata(snap).unwrap().len());
    // V8 collects garbage before it writes a snapshot, so nodes that are
    // only weakly reachable are usually gone: the reachable count may equal
    // the object count. The weak edges are there.
    assert!(expected.weak > 0, "the script makes weak references");
    // WeakMap and WeakSet entries are ephemerons (DevTools' rule: a value
    // is reached through its table and its key together), and the
    // reachable set is DevTools' (`count.js`: `reachable`).
    assert_eq!(
        Some(summary.ephemeron_references),
        json["ephemerons"].as_u64()
    );
    assert!(
        summary.ephemeron_references >= 25,
        "the live keys' entries, at least: {json}"
    );
    // Shortcut edges (imported weak) reach nothing that other edges do not.
    assert_eq!(
        json["reachable"], json["reachable_without_shortcuts"],
        "{json}"
    );

    // Type names: constructor names for objects, `(type)` for the others.
    let names: Vec<&str> = (0..heap.type_count() as u32)
        .filter_map(|t| heap.type_name(t))
        .collect();
    for want in ["Node", "Map", "WeakRef", "(string)", "(closure)"] {
        assert!(names.contains(&want), "no type {want} in {names:?}");
    }
}

/// Read through tiny buffers (a few sizes) from a reader that returns
/// short, uneven chunks, the node snapshot imports to exactly the heap
/// the default buffer gives: every token crosses a refill somewhere.
#[test]
fn node_snapshot_through_tiny_buffers_imports_the_same() {
    let Some(snap) = snapshot() else {
        return;
    };
    let bytes = read(snap);
    let mut b = HeapBuilder::new();
    let summary = import::v8(bytes.as_slice(), &mut b).unwrap();
    let heap = b.finish().unwrap();
    for len in [1, 16, 61, 64, 4093] {
        let options = ImportOptions::default().with_buffer_len(len);
        let mut b = HeapBuilder::new();
        let got = import::v8_with(Chunked::new(&bytes), &mut b, &options).unwrap();
        assert_eq!(got, summary, "buffer of {len} bytes");
        assert_same_heap(&heap, &b.finish().unwrap());
    }
}

#[test]
fn node_snapshot_truncated_or_corrupted_never_panics() {
    let Some(snap) = snapshot() else {
        return;
    };
    let bytes = read(snap);
    corrupt(&bytes, bytes.len() / 31, 40, |input| {
        import::v8(input, &mut HeapBuilder::new())
            .map(|_| ())
            .map_err(|e| {
                let off = e.offset();
                (e, off)
            })
    });
}

/// Imports a literal snapshot into a fresh builder.
fn import_str(json: &str) -> Result<import::ImportSummary, ImportError> {
    import::v8(json.as_bytes(), &mut HeapBuilder::new())
}

/// The kind and offset of a malformed-input error.
fn malformed(json: &str) -> (Malformed, u64) {
    match import_str(json) {
        Err(ImportError::Malformed { kind, offset, .. }) => (kind, offset),
        other => panic!("expected a malformed-input error, got {other:?}"),
    }
}

const META: &str = r#"{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count"],
"node_types":[["hidden","object"],"string","number","number","number"],
"edge_fields":["type","name_or_index","to_node"],
"edge_types":[["property","weak"],"string_or_number","node"]},"#;

#[test]
fn field_layout_comes_from_meta() {
    // Reordered fields and an extra one: the importer must follow the meta.
    let json = r#"{"snapshot":{"meta":{"node_fields":["edge_count","extra","self_size","type","name"],
        "node_types":["number","number","number",["object","hidden"],"string"],
        "edge_fields":["to_node","type"],"edge_types":["node",["weak","strong"]]},
        "node_count":2,"edge_count":2},
        "nodes":[2,9,64,1,0, 0,9,24,0,1],
        "edges":[5,1, 5,0],
        "strings":["root","Thing"]}"#;
    let mut b = HeapBuilder::new();
    let wide = ImportOptions::layout(Some(ArenaLayout::Wide));
    let s = import::v8_with(json.as_bytes(), &mut b, &wide).unwrap();
    assert_eq!((s.objects, s.references, s.weak_references), (2, 2, 1));
    let heap = b.finish().unwrap();
    let view = heap.view();
    let objs: Vec<_> = view.objects().collect();
    // Sizes follow self_size: 64 bytes = header + 2 slots + 4 payload words.
    assert_eq!(view.header(objs[0]).payload_words, 4);
    assert_eq!(heap.type_name(view.type_id(objs[1])), Some("Thing"));
    assert_eq!(heap.type_name(view.type_id(objs[0])), Some("root"));
    // Compressed (the default): 12 header bytes, 8 of slots, the rest
    // payload; the runtime sizes are self_size.
    let mut b = HeapBuilder::new();
    let s = import::v8(json.as_bytes(), &mut b).unwrap();
    assert_eq!(s.layout, ArenaLayout::Compressed);
    let heap = b.finish().unwrap();
    let view = heap.view();
    let objs: Vec<_> = view.objects().collect();
    assert_eq!(view.header(objs[0]).payload_words, 5);
    assert_eq!(
        objs.iter().map(|&o| view.size_bytes(o)).collect::<Vec<_>>(),
        [64, 24]
    );
    assert_eq!(view.runtime_bytes(), 88);
}

#[test]
fn malformed_inputs_name_the_problem_and_offset() {
    let ok = format!(
        r#"{META}"node_count":2,"edge_count":1}},"nodes":[0,0,1,0,1, 1,1,3,16,0],"edges":[0,1,5],"strings":["a","b"]}}"#
    );
    import_str(&ok).unwrap();

    // to_node not a multiple of the node field count.
    let bad = ok.replace(r#""edges":[0,1,5]"#, r#""edges":[0,1,4]"#);
    let (kind, off) = malformed(&bad);
    assert_eq!(kind, Malformed::BadToNode(4));
    assert_eq!(&bad[off as usize..off as usize + 1], "4");

    // An edge type outside its enum.
    let (kind, _) = malformed(&ok.replace(r#""edges":[0,1,5]"#, r#""edges":[7,1,5]"#));
    assert!(matches!(
        kind,
        Malformed::BadEnum {
            field: "edge type",
            value: 7,
            ..
        }
    ));

    // Counts that disagree.
    let (kind, _) = malformed(&ok.replace(r#""node_count":2"#, r#""node_count":3"#));
    assert!(matches!(
        kind,
        Malformed::CountMismatch {
            what: "node count",
            ..
        }
    ));
    let (kind, _) = malformed(&ok.replace(r#""edges":[0,1,5]"#, r#""edges":[0,1,5,0,1,0]"#));
    assert!(matches!(kind, Malformed::CountMismatch { .. }));

    // Non-integers in the arrays, and a node array cut mid-node.
    let bad = ok.replace("1,3,16,0]", "1,3,-16,0]");
    let (kind, off) = malformed(&bad);
    assert!(matches!(
        kind,
        Malformed::UnexpectedByte { found: b'-', .. }
    ));
    assert_eq!(&bad[off as usize..off as usize + 1], "-");
    let (kind, _) = malformed(&ok.replace("1,3,16,0]", "1,3,16.5,0]"));
    assert!(matches!(kind, Malformed::NumberOutOfRange { .. }));
    let (kind, _) = malformed(&ok.replace("1,1,3,16,0]", "1,1,3,16]"));
    assert!(matches!(kind, Malformed::BadMeta(_)));

    // Sections out of order, missing or repeated; a meta without to_node.
    let (kind, _) = malformed(r#"{"nodes":[]}"#);
    assert!(matches!(
        kind,
        Malformed::SectionOrder {
            section: "nodes",
            ..
        }
    ));
    let (kind, _) = malformed(&format!(
        r#"{META}"node_count":1,"edge_count":0}},"nodes":[0,0,1,0,0]}}"#
    ));
    assert_eq!(kind, Malformed::MissingSection("edges"));
    let (kind, _) = malformed(&ok.replace(r#","strings""#, r#","edges":[],"strings""#));
    assert!(matches!(
        kind,
        Malformed::SectionOrder {
            section: "edges",
            ..
        }
    ));
    let (kind, _) = malformed(&ok.replace("\"to_node\"", "\"to\""));
    assert!(matches!(kind, Malformed::BadMeta(_)));
    let (kind, _) = malformed(&format!(
        r#"{META}"node_count":0,"edge_count":0}},"nodes":[],"edges":[]}}"#
    ));
    assert_eq!(kind, Malformed::Empty);

    // Trailing garbage, and not JSON at all.
    let (kind, off) = malformed(&format!("{ok} x"));
    assert!(matches!(
        kind,
        Malformed::UnexpectedByte { found: b'x', .. }
    ));
    assert_eq!(off as usize, ok.len() + 1);
    assert!(matches!(
        malformed("GIF89a").0,
        Malformed::UnexpectedByte { found: b'G', .. }
    ));
    assert!(matches!(malformed("").0, Malformed::UnexpectedEof { .. }));
}

#[test]
fn a_file_cut_inside_a_number_is_reported_as_truncated() {
    // Cut inside the last edge's to_node (10 becomes 1) and inside the last
    // node's edge_count: the end of input is the problem, not the value.
    let full = format!(
        r#"{META}"node_count":3,"edge_count":2}},"nodes":[0,0,1,0,2, 1,1,3,16,0, 1,1,5,16,0],"edges":[0,1,5, 1,1,10],"strings":["a","b"]}}"#
    );
    import_str(&full).unwrap();
    for cut in ["1,1,10]", "16,0]"] {
        let at = full.find(cut).unwrap() + cut.len() - 2;
        let (kind, off) = malformed(&full[..at]);
        assert!(
            matches!(kind, Malformed::UnexpectedEof { .. }),
            "cut before {cut:?}: {kind:?}"
        );
        assert_eq!(off as usize, at);
    }
}

#[test]
fn missing_strings_give_placeholder_names() {
    let json = format!(r#"{META}"node_count":1,"edge_count":0}},"nodes":[1,3,1,0,0],"edges":[]}}"#);
    let mut b = HeapBuilder::new();
    import::v8(json.as_bytes(), &mut b).unwrap();
    let heap = b.finish().unwrap();
    assert_eq!(
        heap.type_name(heap.view().type_id(heap.roots()[0])),
        Some("<string 3>")
    );
}

/// A random snapshot: per node a self size and edges `(target, weak)`.
type Graph = Vec<(u64, Vec<(usize, bool)>)>;

fn graph() -> impl proptest::strategy::Strategy<Value = Graph> {
    use proptest::prelude::*;
    (1usize..40).prop_flat_map(|n| {
        proptest::collection::vec(
            (
                0u64..200,
                proptest::collection::vec((0..n, any::<bool>()), 0..6),
            ),
            n,
        )
    })
}

/// Writes `g` as a snapshot whose node fields come in the order `order`
/// (a permutation of type, name, id, self_size, edge_count) and whose edge
/// fields are reversed when `flip` is set.
fn to_json(g: &Graph, order: &[usize], flip: bool) -> String {
    let node_fields = ["type", "name", "id", "self_size", "edge_count"];
    let node_types = [
        r#"["hidden","object","string"]"#,
        r#""string""#,
        r#""number""#,
        r#""number""#,
        r#""number""#,
    ];
    let fields: Vec<String> = order
        .iter()
        .map(|&i| format!("\"{}\"", node_fields[i]))
        .collect();
    let types: Vec<&str> = order.iter().map(|&i| node_types[i]).collect();
    let mut nodes = Vec::new();
    for (i, (size, edges)) in g.iter().enumerate() {
        let values = [
            (i % 3) as u64,
            (i % 2) as u64,
            i as u64 * 2 + 1,
            *size,
            edges.len() as u64,
        ];
        nodes.extend(order.iter().map(|&f| values[f].to_string()));
    }
    let mut edge_values = Vec::new();
    for (_, edges) in g {
        for &(t, weak) in edges {
            let mut e = [u64::from(weak), 0, (t * order.len()) as u64];
            if flip {
                e.reverse();
            }
            edge_values.extend(e.iter().map(u64::to_string));
        }
    }
    let (edge_fields, edge_types) = if flip {
        (
            r#""to_node","name_or_index","type""#,
            r#""node","string_or_number",["property","weak"]"#,
        )
    } else {
        (
            r#""type","name_or_index","to_node""#,
            r#"["property","weak"],"string_or_number","node""#,
        )
    };
    format!(
        r#"{{"snapshot":{{"meta":{{"node_fields":[{}],"node_types":[{}],"edge_fields":[{edge_fields}],"edge_types":[{edge_types}]}},"node_count":{},"edge_count":{}}},
"nodes":[{}],
"edges":[{}],
"strings":["Zero","One"]}}"#,
        fields.join(","),
        types.join(","),
        g.len(),
        g.iter().map(|(_, e)| e.len()).sum::<usize>(),
        nodes.join(","),
        edge_values.join(",")
    )
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

    /// Every node becomes an object with exactly its edges, in order, as
    /// slots to the right objects with the right weakness, and a size that
    /// follows `self_size`, whatever the field order the meta declares.
    #[test]
    fn random_snapshots_import_exactly(
        g in graph(),
        order in proptest::strategy::Strategy::prop_shuffle(proptest::sample::subsequence(vec![0usize, 1, 2, 3, 4], 5)),
        flip: bool,
        compressed: bool,
        buffer in proptest::option::of(16usize..100),
    ) {
        let json = to_json(&g, &order, flip);
        let mut b = HeapBuilder::new();
        let layout = if compressed { ArenaLayout::Compressed } else { ArenaLayout::Wide };
        let mut options = ImportOptions::layout(Some(layout));
        options.buffer_len = buffer;
        let summary = import::v8_with(Chunked::new(json.as_bytes()), &mut b, &options).unwrap();
        let heap = b.finish().unwrap();
        let view = heap.view();
        let objs: Vec<_> = view.objects().collect();
        proptest::prop_assert_eq!(objs.len(), g.len());
        proptest::prop_assert_eq!(heap.roots(), &[objs[0]][..]);
        for (i, (size, edges)) in g.iter().enumerate() {
            let slots: Vec<_> = view.slots(objs[i]).map(|s| s.unwrap()).collect();
            let want: Vec<_> = edges
                .iter()
                .map(|&(t, weak)| (objs[t], if weak { SlotKind::Weak } else { SlotKind::Strong }))
                .collect();
            proptest::prop_assert_eq!(slots, want);
            let fixed = layout.fixed_words(edges.len() as u32);
            let words = fixed + u64::from(view.header(objs[i]).payload_words);
            proptest::prop_assert_eq!(words, size.div_ceil(8).max(fixed));
            proptest::prop_assert_eq!(view.size_bytes(objs[i]) as u64, *size);
            let name = heap.type_name(view.type_id(objs[i])).unwrap();
            let want_name = match i % 3 { 0 => ["Zero", "One"][i % 2], 1 => ["Zero", "One"][i % 2], _ => "(string)" };
            proptest::prop_assert_eq!(name, want_name);
        }
        let weak = g.iter().flat_map(|(_, e)| e).filter(|e| e.1).count() as u64;
        proptest::prop_assert_eq!(summary.weak_references, weak);
    }
}
