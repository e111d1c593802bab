//! The V8 `.heapsnapshot` importer.
//!
//! A heap snapshot is one JSON object. `snapshot.meta` describes the layout
//! of the flat `nodes` and `edges` integer arrays; `strings` holds the names.
//! V8 writes the sections in that order, and the importer reads them in one
//! pass with a fixed buffer: the nodes array is kept as compact columns
//! (type id, self size, edge count and arena position: 20 bytes a
//! node), and each node's edges, which V8 writes
//! contiguously in node order, are turned into that object's slots as they
//! stream by.
//!
//! Mapping (issue 6): every node is an object whose runtime size is its
//! `self_size` (sizes of 4 GiB or more are recorded as `u32::MAX`); every
//! edge is a slot, in edge order, weak when its type is `weak` (a per-slot
//! weak reference: the types of nodes with weak edges become `weak-slots`);
//! node 0 (the synthetic root) is the only root. The layout is chosen once
//! the nodes are read, before any object is written. Types are named after the node's `name` for
//! object-like node types (`object`, `native`, `hidden`, `array`, `synthetic`,
//! `object shape`) and `(type)` for the others, whose names are contents
//! (strings, code, closures, numbers).

use std::io::Read;

use serde::Deserialize;

use super::error::{ImportError, Malformed};
use super::json::JsonReader;
use super::{choose_layout, misplaced, sink_error, sized, ImportOptions, ImportSummary, Placer};
use stealmark_heap::{ArenaLayout, HeapSink, Pos, Slot};

/// Limit on the bytes of the `snapshot` header section.
const HEADER_LIMIT: usize = 1 << 20;
/// Limit on a top-level key and on a type name.
const NAME_LIMIT: usize = 1 << 16;
/// The node types whose `name` says what kind of object the node is.
const NAMED_NODE_TYPES: [&str; 6] = [
    "object",
    "native",
    "hidden",
    "array",
    "synthetic",
    "object shape",
];

#[derive(Deserialize)]
struct Header {
    meta: Meta,
    node_count: u64,
    edge_count: u64,
}

#[derive(Deserialize)]
struct Meta {
    node_fields: Vec<String>,
    node_types: Vec<serde_json::Value>,
    edge_fields: Vec<String>,
    edge_types: Vec<serde_json::Value>,
}

/// The field layout of the flat arrays, read from `snapshot.meta`.
struct Layout {
    node_fields: usize,
    node_type: Option<usize>,
    node_name: Option<usize>,
    node_self_size: usize,
    node_edge_count: usize,
    /// The node type enum, when `type` is a field.
    node_type_names: Vec<String>,
    /// For each node type: whether its `name` names its kind.
    node_type_named: Vec<bool>,
    edge_fields: usize,
    edge_type: Option<usize>,
    edge_to_node: usize,
    /// The number of edge type enum values.
    edge_type_count: usize,
    /// The edge type value of `weak`, if the enum has one.
    weak_edge_type: Option<u64>,
    node_count: u64,
    edge_count: u64,
}

impl Layout {
    fn from_header(h: Header) -> Result<Layout, String> {
        let m = h.meta;
        let find = |fields: &[String], name: &str| fields.iter().position(|f| f == name);
        let need = |fields: &[String], name: &str, what: &str| {
            find(fields, name).ok_or_else(|| format!("{what} has no `{name}`"))
        };
        if m.node_fields.is_empty() || m.node_fields.len() > 256 {
            return Err(format!("{} node fields", m.node_fields.len()));
        }
        if m.edge_fields.is_empty() || m.edge_fields.len() > 256 {
            return Err(format!("{} edge fields", m.edge_fields.len()));
        }
        let node_type = find(&m.node_fields, "type");
        let node_type_names = match node_type {
            Some(i) => {
                enum_names(m.node_types.get(i)).ok_or("node_types has no enum for `type`")?
            }
            None => Vec::new(),
        };
        let edge_type = find(&m.edge_fields, "type");
        let edge_type_names = match edge_type {
            Some(i) => {
                enum_names(m.edge_types.get(i)).ok_or("edge_types has no enum for `type`")?
            }
            None => Vec::new(),
        };
        Ok(Layout {
            node_fields: m.node_fields.len(),
            node_type,
            node_name: find(&m.node_fields, "name"),
            node_self_size: need(&m.node_fields, "self_size", "node_fields")?,
            node_edge_count: need(&m.node_fields, "edge_count", "node_fields")?,
            node_type_named: node_type_names
                .iter()
                .map(|t| NAMED_NODE_TYPES.contains(&t.as_str()))
                .collect(),
            node_type_names,
            edge_fields: m.edge_fields.len(),
            edge_type,
            edge_to_node: need(&m.edge_fields, "to_node", "edge_fields")?,
            edge_type_count: edge_type_names.len(),
            weak_edge_type: edge_type_names
                .iter()
                .position(|t| t == "weak")
                .map(|i| i as u64),
            node_count: h.node_count,
            edge_count: h.edge_count,
        })
    }
}

/// The names of an enum-typed field: `meta.*_types[i]` is an array of strings.
fn enum_names(v: Option<&serde_json::Value>) -> Option<Vec<String>> {
    v?.as_array()?
        .iter()
        .map(|s| s.as_str().map(str::to_owned))
        .collect()
}

/// The nodes, as compact columns.
struct Nodes {
    type_id: Vec<u32>,
    /// `self_size`, saturated at `u32::MAX`.
    self_size: Vec<u32>,
    edge_count: Vec<u32>,
    /// Arena positions, filled in once all nodes are read.
    pos: Vec<Pos>,
    /// The arena layout, chosen once all nodes are read.
    layout: ArenaLayout,
}

/// Type names: one per node type (`(type)`), then one per distinct `name`
/// string of the object-like node types, resolved when `strings` streams by.
struct Types {
    /// The sink's type id of `names[0]`.
    base: u32,
    /// `None` until the name's string streams by.
    names: Vec<Option<String>>,
    /// `(string index, type id)` of the named types, in first-seen order
    /// until sorted for the `strings` pass.
    pending: Vec<(u64, u32)>,
    by_string: std::collections::HashMap<u64, u32>,
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
    let mut edges_done = false;
    let mut strings_seen = false;
    let mut summary = ImportSummary::default();
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
                    let mut t = Types {
                        base: 0,
                        names: Vec::new(),
                        pending: Vec::new(),
                        by_string: Default::default(),
                    };
                    if l.node_type_names.is_empty() {
                        t.names.push(Some("(node)".to_owned()));
                    }
                    t.names
                        .extend(l.node_type_names.iter().map(|n| Some(format!("({n})"))));
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
                    let mut n = read_nodes(&mut r, l, t)?;
                    place(&r, &mut n, sink, options)?;
                    nodes = Some(n);
                }
                b"edges" => {
                    let (Some((l, _)), Some(n)) = (&header, &nodes) else {
                        return Err(order(&r, key_at, "edges", "comes before `nodes`"));
                    };
                    if edges_done {
                        return Err(order(&r, key_at, "edges", "occurs twice"));
                    }
                    read_edges(&mut r, l, n, sink, &mut summary)?;
                    edges_done = true;
                }
                b"strings" => {
                    if strings_seen {
                        return Err(order(&r, key_at, "strings", "occurs twice"));
                    }
                    let Some((_, t)) = &mut header else {
                        return Err(order(&r, key_at, "strings", "comes before `snapshot`"));
                    };
                    read_strings(&mut r, t)?;
                    strings_seen = true;
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
    let (Some((layout, mut types)), Some(nodes)) = (header, nodes) else {
        return Err(missing("nodes"));
    };
    if !edges_done {
        return Err(missing("edges"));
    }
    // Names whose strings never came (no `strings` section, or an index past
    // its end) keep a placeholder naming the index.
    for &(index, id) in &types.pending {
        types.names[id as usize].get_or_insert_with(|| format!("<string {index}>"));
    }
    // The node type names were added with the header.
    let known = layout.node_type_names.len().max(1);
    for (i, name) in types.names.iter().enumerate().skip(known) {
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
    sink.root(nodes.pos[0]).map_err(sink_error)?;
    summary.input_bytes = end;
    summary.layout = nodes.layout;
    summary.objects = nodes.edge_count.len() as u64;
    summary.roots = 1;
    summary.types = types.names.len() as u64;
    Ok(summary)
}

/// Chooses the layout, computes every node's arena position, and tells the
/// sink the total.
fn place<R: Read, S: HeapSink + ?Sized>(
    r: &JsonReader<R>,
    n: &mut Nodes,
    sink: &mut S,
    options: &ImportOptions,
) -> Result<(), ImportError> {
    let shift = (sink.next_pos().offset() - Pos::FIRST.offset()) / 8;
    let compressed =
        n.edge_count
            .iter()
            .zip(&n.self_size)
            .try_fold(1 + shift, |words, (&slots, &size)| {
                let h = sized(0, slots, u64::from(size), ArenaLayout::Compressed);
                words.checked_add(h.size_words(ArenaLayout::Compressed))
            });
    n.layout = choose_layout(sink, options, compressed)?;
    let mut placer = Placer::new(sink, n.layout);
    n.pos.reserve_exact(n.edge_count.len());
    for (&slots, &size) in n.edge_count.iter().zip(&n.self_size) {
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
                Some(nf) if l.node_type_named[ty as usize] => {
                    let name = row[nf];
                    let next = t.names.len() as u32;
                    let index = *t.by_string.entry(name).or_insert_with(|| {
                        t.names.push(None);
                        t.pending.push((name, next));
                        next
                    });
                    t.base + index
                }
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
    Ok(())
}

/// Streams the `edges` array, emitting every node as an object once its
/// edges are complete.
fn read_edges<R: Read, S: HeapSink + ?Sized>(
    r: &mut JsonReader<R>,
    l: &Layout,
    n: &Nodes,
    sink: &mut S,
    summary: &mut ImportSummary,
) -> Result<(), ImportError> {
    let start = r.offset();
    let node_count = n.edge_count.len();
    let nf = l.node_fields as u64;
    let mut slots: Vec<Slot> = Vec::new();
    // The node whose edges are streaming by.
    let mut node = emit_edgeless(sink, n, 0)?;
    let mut found = 0u64;
    read_rows(r, l.edge_fields, "edge", |r, row, offsets| {
        if node == node_count {
            return Err(r.error_at(
                offsets[0],
                Malformed::CountMismatch {
                    what: "edges (sum of the nodes' edge_count)",
                    declared: found,
                    found: found + 1,
                },
            ));
        }
        found += 1;
        let weak = match l.edge_type {
            Some(f) if row[f] >= l.edge_type_count as u64 => {
                return Err(r.error_at(
                    offsets[f],
                    Malformed::BadEnum {
                        field: "edge type",
                        value: row[f],
                        len: l.edge_type_count,
                    },
                ));
            }
            Some(f) => Some(row[f]) == l.weak_edge_type,
            None => false,
        };
        let to_node = row[l.edge_to_node];
        let target = to_node / nf;
        if to_node % nf != 0 || target >= node_count as u64 {
            return Err(r.error_at(offsets[l.edge_to_node], Malformed::BadToNode(to_node)));
        }
        summary.weak_references += u64::from(weak);
        slots.push(Slot::new(n.pos[target as usize], weak));
        if slots.len() == n.edge_count[node] as usize {
            emit(sink, n, node, &slots)?;
            slots.clear();
            node = emit_edgeless(sink, n, node + 1)?;
        }
        Ok(())
    })?;
    if node != node_count {
        let declared = n.edge_count.iter().map(|&c| u64::from(c)).sum();
        return Err(r.error(Malformed::CountMismatch {
            what: "edges (sum of the nodes' edge_count)",
            declared,
            found,
        }));
    }
    check_count(r, start, "edge count", l.edge_count, found)?;
    summary.references = found;
    Ok(())
}

/// Checks the header's `declared` count of `what` against the `found`
/// rows of the array that starts at `start`.
fn check_count<R: Read>(
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
fn read_rows<R: Read>(
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

/// Emits the nodes without edges from `node` on, which are complete
/// already; returns the first node with edges (or the node count).
fn emit_edgeless<S: HeapSink + ?Sized>(
    sink: &mut S,
    n: &Nodes,
    mut node: usize,
) -> Result<usize, ImportError> {
    while node < n.edge_count.len() && n.edge_count[node] == 0 {
        emit(sink, n, node, &[])?;
        node += 1;
    }
    Ok(node)
}

/// Emits node `node` with its slots.
#[inline]
fn emit<S: HeapSink + ?Sized>(
    sink: &mut S,
    n: &Nodes,
    node: usize,
    slots: &[Slot],
) -> Result<(), ImportError> {
    let header = sized(
        n.type_id[node],
        n.edge_count[node],
        u64::from(n.self_size[node]),
        n.layout,
    );
    let pos = sink.begin_object(header).map_err(sink_error)?;
    sink.slots(slots).map_err(sink_error)?;
    if pos != n.pos[node] {
        return Err(misplaced(node as u64, pos, n.pos[node]));
    }
    Ok(())
}

/// Streams the `strings` array, keeping only the type names.
fn read_strings<R: Read>(r: &mut JsonReader<R>, t: &mut Types) -> Result<(), ImportError> {
    t.pending.sort_unstable();
    let mut want = t.pending.iter().peekable();
    let mut index = 0u64;
    let mut buf = Vec::new();
    if r.begin_array()? {
        loop {
            match want.peek() {
                Some(&&(i, id)) if i == index => {
                    want.next();
                    buf.clear();
                    r.string(Some(&mut buf), NAME_LIMIT)?;
                    t.names[id as usize] = Some(String::from_utf8_lossy(&buf).into_owned());
                }
                _ => r.string(None, 0)?,
            }
            index += 1;
            if !r.comma_or(b']', "`,` or `]` in strings")? {
                break;
            }
        }
    }
    Ok(())
}
