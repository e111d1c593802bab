//! The V8 `.heapsnapshot` importer.
//!
//! A heap snapshot is one JSON object. `snapshot.meta` describes the layout
//! of the flat `nodes` and `edges` integer arrays; `strings` holds the names.
//! V8 writes the sections in that order, and the importer reads them in one
//! pass with a fixed buffer. The nodes are kept as compact columns (type
//! id, self size, edge count, id and arena position: 28 bytes a node), and
//! so are the edges (target, type, and the name of internal edges: 9 bytes
//! an edge), because only the names, which come last, say which edges are
//! WeakMap entries ([`weakmap`]); of the strings, only the type names and
//! the names of internal edges are kept, and those only while they stream
//! by (the entries' names, parsed, stay). The objects are emitted at the
//! end, in node order.
//!
//! Mapping (issue 6): every node is an object whose runtime size is its
//! `self_size` (sizes of 4 GiB or more are recorded as `u32::MAX`); every
//! edge is a slot, in edge order, weak when its type is `weak` (a per-slot
//! weak reference: the types of nodes with weak edges become `weak-slots`)
//! or `shortcut`; node 0 (the synthetic root) is the only root.
//!
//! `shortcut` edges are weak because they are no references of their own:
//! V8 documents them as links "that must not be followed during sizes
//! calculation" (`HeapGraphEdge::kShortcut` in `v8-profiler.h`), adds them
//! beside the real path (the root's shortcuts to the user's global objects,
//! a bound function's to its receiver and target), and its own test of
//! snapshots (`CheckAllReachables` in `test/cctest/test-heap-profiler.cc`)
//! finds every node without them. DevTools leaves them out of dominators
//! (`HeapSnapshot.ts`, `isEssentialEdge`) but follows them for distances;
//! the import tests check, on a real snapshot, that following them or not
//! reaches the same nodes.
//!
//! WeakMap and WeakSet entries become ephemerons ([`weakmap`]): the table
//! is an `ephemeron-table` object (type `(ephemeron table)`) whose slots
//! are (key, value) pairs, twice as many as its edges.
//!
//! Types are named after the node's `name` for object-like node types
//! (`object`, `native`, `hidden`, `array`, `synthetic`, `object shape`) and
//! DevTools' label for the others, whose names are contents (strings, code,
//! closures, numbers): `(string)`, `(compiled code)`, `(closure)`. A node
//! of an object-like type with an empty name gets DevTools' label too:
//! `(system)` for `hidden`, `(array)`, `(object shape)`. A type is a
//! (name, node type) pair.

mod edges;
mod meta;
mod names;
mod weakmap;

use std::io::Read;

use stealmark_heap::{ArenaLayout, HeapSink, Pos, TypeKind};

use self::edges::{emit_all, read_edges, slot_count, Edges};
use self::meta::{Header, Layout};
use self::names::{read_strings, Types, NAME_LIMIT};
use self::weakmap::WeakMaps;
use super::error::{ImportError, Malformed};
use super::json::JsonReader;
use super::{choose_layout, sink_error, sized, ImportOptions, ImportSummary, Placer};

/// Limit on the bytes of the `snapshot` header section.
const HEADER_LIMIT: usize = 1 << 20;
/// The name of the type of WeakMap and WeakSet tables.
const TABLE_TYPE: &str = "(ephemeron table)";

/// The nodes, as compact columns.
pub(super) struct Nodes {
    type_id: Vec<u32>,
    /// `self_size`, saturated at `u32::MAX`.
    self_size: Vec<u32>,
    edge_count: Vec<u32>,
    /// Node ids (empty without an `id` field).
    id: Vec<u64>,
    /// Arena positions, filled in once all nodes are read.
    pos: Vec<Pos>,
    /// The arena layout, chosen once all nodes are read.
    layout: ArenaLayout,
}

/// Imports a V8 heap snapshot from `input` into `sink`.
pub(crate) fn import<R: Read, S: HeapSink + ?Sized>(
    input: R,
    sink: &mut S,
    options: &ImportOptions,
) -> Result<ImportSummary, ImportError> {
    let mut r = JsonReader::with_buffer(input, options.buffer());
    // The header's layout and the type names, once `snapshot` is read.
    let mut header: Option<(Layout, Types)> = None;
    let mut nodes: Option<Nodes> = None;
    let mut edges: Option<Edges> = None;
    let mut pairs = None;
    let mut key = Vec::new();

    if r.begin_object()? {
        loop {
            let key_at = r.offset();
            r.key(&mut key, NAME_LIMIT)?;
            match key.as_slice() {
                b"snapshot" => {
                    if header.is_some() {
                        return Err(order(&r, key_at, "snapshot", "occurs twice"));
                    }
                    let at = r.offset();
                    let mut raw = Vec::new();
                    r.skip_value(Some(&mut raw), HEADER_LIMIT)?;
                    let h: Header = serde_json::from_slice(&raw)
                        .map_err(|e| r.error_at(at, Malformed::BadMeta(e.to_string())))?;
                    let l = Layout::from_header(h)
                        .map_err(|e| r.error_at(at, Malformed::BadMeta(e)))?;
                    let mut t = Types::new(&l.node_type_names);
                    // The names known now are added now; the named types
                    // follow them once `strings` has streamed by.
                    for (i, name) in t.names.iter().flatten().enumerate() {
                        let id = sink.type_name(name).map_err(sink_error)?;
                        if i == 0 {
                            t.base = id;
                        }
                    }
                    header = Some((l, t));
                }
                b"nodes" => {
                    let Some((l, t)) = &mut header else {
                        return Err(order(&r, key_at, "nodes", "comes before `snapshot`"));
                    };
                    if nodes.is_some() {
                        return Err(order(&r, key_at, "nodes", "occurs twice"));
                    }
                    nodes = Some(read_nodes(&mut r, l, t)?);
                }
                b"edges" => {
                    let (Some((l, _)), Some(n)) = (&header, &nodes) else {
                        return Err(order(&r, key_at, "edges", "comes before `nodes`"));
                    };
                    if edges.is_some() {
                        return Err(order(&r, key_at, "edges", "occurs twice"));
                    }
                    edges = Some(read_edges(&mut r, l, n)?);
                }
                b"strings" => {
                    if pairs.is_some() {
                        return Err(order(&r, key_at, "strings", "occurs twice"));
                    }
                    let Some((l, t)) = &mut header else {
                        return Err(order(&r, key_at, "strings", "comes before `snapshot`"));
                    };
                    // Edge names are looked at only where V8 puts them,
                    // after the edges.
                    let wanted = edges.as_ref().map_or(Vec::new(), |e| e.internal_names(l));
                    pairs = Some(read_strings(&mut r, t, &wanted)?);
                }
                _ => r.skip_value(None, 0)?,
            }
            if !r.comma_or(b'}', "`,` or `}`")? {
                break;
            }
        }
    }
    r.expect_end()?;
    let end = r.offset();
    let missing = |s| ImportError::Malformed {
        format: super::Format::V8,
        offset: end,
        kind: Malformed::MissingSection(s),
    };
    let (Some((layout, mut types)), Some(mut nodes)) = (header, nodes) else {
        return Err(missing("nodes"));
    };
    let Some(edges) = edges else {
        return Err(missing("edges"));
    };
    types.resolve_missing();
    // The node type names were added with the header.
    for (i, name) in types.names.iter().enumerate().skip(types.known) {
        let expected = types.base + i as u32;
        let id = sink
            .type_name(name.as_deref().unwrap_or_default())
            .map_err(sink_error)?;
        if id != expected {
            return Err(ImportError::Sink(
                format!("the sink numbered type name {i} as {id}, expected {expected}").into(),
            ));
        }
    }
    let maps = match (&pairs, layout.internal_edge_type) {
        (Some(pairs), Some(internal)) => {
            WeakMaps::find(&nodes.id, &nodes.edge_count, pairs, internal as u8, |e| {
                edges.kind_and_name(e)
            })
        }
        _ => WeakMaps::default(),
    };
    let mut table_type = 0;
    if !maps.tables.is_empty() {
        table_type = sink.type_name(TABLE_TYPE).map_err(sink_error)?;
        sink.type_kind(table_type, TypeKind::EphemeronTable)
            .map_err(sink_error)?;
    }
    place(&r, &mut nodes, &maps.tables, sink, options)?;
    let mut summary = ImportSummary::default();
    emit_all(
        sink,
        &layout,
        &nodes,
        &edges,
        &maps,
        table_type,
        &mut summary,
    )?;
    sink.root(nodes.pos[0]).map_err(sink_error)?;
    summary.input_bytes = end;
    summary.layout = nodes.layout;
    summary.objects = nodes.edge_count.len() as u64;
    summary.roots = 1;
    summary.types = types.names.len() as u64 + u64::from(!maps.tables.is_empty());
    Ok(summary)
}

/// Chooses the layout, computes every node's arena position, and tells the
/// sink the total.
fn place<R: Read, S: HeapSink + ?Sized>(
    r: &JsonReader<R>,
    n: &mut Nodes,
    tables: &[u32],
    sink: &mut S,
    options: &ImportOptions,
) -> Result<(), ImportError> {
    // Every node's slot count: a table has twice as many as edges.
    let mut slots = n.edge_count.clone();
    for &t in tables {
        let t = t as usize;
        slots[t] =
            slot_count(slots[t], true).ok_or_else(|| r.error(Malformed::TooMany("slots")))?;
    }
    let shift = (sink.next_pos().offset() - Pos::FIRST.offset()) / 8;
    let compressed =
        slots
            .iter()
            .zip(&n.self_size)
            .try_fold(1 + shift, |words, (&slots, &size)| {
                let h = sized(0, slots, u64::from(size), ArenaLayout::Compressed);
                words.checked_add(h.size_words(ArenaLayout::Compressed))
            });
    n.layout = choose_layout(sink, options, compressed)?;
    let mut placer = Placer::new(sink, n.layout);
    n.pos.reserve_exact(n.edge_count.len());
    for (&slots, &size) in slots.iter().zip(&n.self_size) {
        let pos = placer
            .push(sized(0, slots, u64::from(size), n.layout))
            .ok_or_else(|| r.error(Malformed::TooMany("arena words")))?;
        n.pos.push(pos);
    }
    sink.reserve(n.pos.len() as u64, placer.arena_words());
    Ok(())
}

fn order<R: Read>(
    r: &JsonReader<R>,
    at: u64,
    section: &'static str,
    problem: &'static str,
) -> ImportError {
    r.error_at(at, Malformed::SectionOrder { section, problem })
}

/// Reads the `nodes` array into columns, assigning type ids.
fn read_nodes<R: Read>(
    r: &mut JsonReader<R>,
    l: &Layout,
    t: &mut Types,
) -> Result<Nodes, ImportError> {
    let start = r.offset();
    // The header's count sizes the columns, but it is only trusted up to a
    // bound, so that a lying header cannot make the importer allocate.
    let cap = usize::try_from(l.node_count.min(1 << 22)).unwrap_or(0);
    let mut n = Nodes {
        type_id: Vec::with_capacity(cap),
        self_size: Vec::with_capacity(cap),
        edge_count: Vec::with_capacity(cap),
        id: Vec::with_capacity(if l.node_id.is_some() { cap } else { 0 }),
        pos: Vec::new(),
        layout: ArenaLayout::Wide,
    };
    read_rows(r, l.node_fields, "node", |r, row, offsets| {
        push_node(r, l, t, &mut n, row, offsets)
    })?;
    let found = n.edge_count.len() as u64;
    check_count(r, start, "node count", l.node_count, found)?;
    if found == 0 {
        return Err(r.error_at(start, Malformed::Empty));
    }
    Ok(n)
}

fn push_node<R: Read>(
    r: &JsonReader<R>,
    l: &Layout,
    t: &mut Types,
    n: &mut Nodes,
    row: &[u64],
    offsets: &[u64],
) -> Result<(), ImportError> {
    if n.edge_count.len() >= u32::MAX as usize {
        return Err(r.error_at(offsets[0], Malformed::TooMany("nodes")));
    }
    let type_id = match l.node_type {
        None => t.base,
        Some(f) => {
            let ty = row[f];
            let len = l.node_type_names.len();
            if ty >= len as u64 {
                return Err(r.error_at(
                    offsets[f],
                    Malformed::BadEnum {
                        field: "node type",
                        value: ty,
                        len,
                    },
                ));
            }
            match l.node_name {
                Some(nf) if l.node_type_named[ty as usize] => t.base + t.named(row[nf], ty as u32),
                _ => t.base + ty as u32,
            }
        }
    };
    let edges = u32::try_from(row[l.node_edge_count]).map_err(|_| {
        r.error_at(
            offsets[l.node_edge_count],
            Malformed::NumberOutOfRange {
                field: "edge_count",
            },
        )
    })?;
    n.type_id.push(type_id);
    n.self_size
        .push(u32::try_from(row[l.node_self_size]).unwrap_or(u32::MAX));
    n.edge_count.push(edges);
    if let Some(f) = l.node_id {
        n.id.push(row[f]);
    }
    Ok(())
}

/// Checks the header's `declared` count of `what` against the `found`
/// rows of the array that starts at `start`.
pub(super) fn check_count<R: Read>(
    r: &JsonReader<R>,
    start: u64,
    what: &'static str,
    declared: u64,
    found: u64,
) -> Result<(), ImportError> {
    if found == declared {
        return Ok(());
    }
    Err(r.error_at(
        start,
        Malformed::CountMismatch {
            what,
            declared,
            found,
        },
    ))
}

/// Streams a flat array of non-negative integers as rows of `fields`
/// values, calling `row(reader, values, offsets)` for each complete row.
pub(super) fn read_rows<R: Read>(
    r: &mut JsonReader<R>,
    fields: usize,
    what: &'static str,
    mut row: impl FnMut(&JsonReader<R>, &[u64], &[u64]) -> Result<(), ImportError>,
) -> Result<(), ImportError> {
    let mut values = vec![0u64; fields];
    let mut offsets = vec![0u64; fields];
    let mut field = 0;
    if r.begin_array()? {
        loop {
            offsets[field] = r.offset();
            values[field] = r.u64(what)?;
            field += 1;
            // The separator first: in a truncated file the last number may
            // be cut short, and the end of input is the error to report,
            // not whatever the cut value means.
            let more = r.comma_or(b']', "`,` or `]`")?;
            if field == fields {
                field = 0;
                row(r, &values, &offsets)?;
            }
            if !more {
                break;
            }
        }
    }
    if field != 0 {
        return Err(r.error(Malformed::BadMeta(format!(
            "the {what}s array length is not a multiple of its {fields} {what} fields"
        ))));
    }
    Ok(())
}
