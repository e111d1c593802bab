//! The `edges` section, kept as compact columns until the names in
//! `strings` (which V8 writes last) say which edges are WeakMap entries;
//! then every node is emitted as an object with its slots.

use std::io::Read;

use stealmark_heap::{HeapSink, Slot};

use super::meta::Layout;
use super::weakmap::{Role, WeakMaps};
use super::{check_count, read_rows, Nodes};
use crate::error::{ImportError, Malformed};
use crate::{misplaced, sink_error, sized, ImportSummary};

/// The edges, as columns: 9 bytes an edge.
pub(super) struct Edges {
    /// The target's node number.
    to: Vec<u32>,
    /// The string index of the name of an internal edge (else 0;
    /// `u32::MAX` for an index that cannot be one).
    name: Vec<u32>,
    /// The edge type's value in the enum (0 without a `type` field).
    kind: Vec<u8>,
}

impl Edges {
    /// The type and name of edge `e`.
    pub(super) fn kind_and_name(&self, e: usize) -> (u8, u32) {
        (self.kind[e], self.name[e])
    }

    /// The sorted, distinct string indices of the internal edges' names.
    pub(super) fn internal_names(&self, l: &Layout) -> Vec<u32> {
        let Some(internal) = l.internal_edge_type else {
            return Vec::new();
        };
        let mut names: Vec<u32> = (0..self.to.len())
            .filter(|&e| u64::from(self.kind[e]) == internal && self.name[e] != u32::MAX)
            .map(|e| self.name[e])
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }
}

/// Reads the `edges` array into columns, checking every edge's type and
/// target, and that there are as many as the nodes' edge counts say.
pub(super) fn read_edges<R: Read>(
    r: &mut crate::json::JsonReader<R>,
    l: &Layout,
    n: &Nodes,
) -> Result<Edges, ImportError> {
    let start = r.offset();
    let node_count = n.edge_count.len() as u64;
    let nf = l.node_fields as u64;
    let declared: u64 = n.edge_count.iter().map(|&c| u64::from(c)).sum();
    let cap = usize::try_from(declared.min(l.edge_count).min(1 << 24)).unwrap_or(0);
    let mut e = Edges {
        to: Vec::with_capacity(cap),
        name: Vec::with_capacity(cap),
        kind: Vec::with_capacity(cap),
    };
    read_rows(r, l.edge_fields, "edge", |r, row, offsets| {
        let found = e.to.len() as u64;
        if found == declared {
            return Err(r.error_at(
                offsets[0],
                Malformed::CountMismatch {
                    what: "edges (sum of the nodes' edge_count)",
                    declared: found,
                    found: found + 1,
                },
            ));
        }
        let kind = match l.edge_type {
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
            // The enum has at most 256 values (checked with the header).
            Some(f) => row[f] as u8,
            None => 0,
        };
        let to_node = row[l.edge_to_node];
        let target = to_node / nf;
        if to_node % nf != 0 || target >= node_count {
            return Err(r.error_at(offsets[l.edge_to_node], Malformed::BadToNode(to_node)));
        }
        let internal = l.edge_type.is_some() && l.internal_edge_type == Some(u64::from(kind));
        let name = match l.edge_name {
            Some(f) if internal => u32::try_from(row[f]).unwrap_or(u32::MAX),
            _ => 0,
        };
        e.to.push(target as u32);
        e.name.push(name);
        e.kind.push(kind);
        Ok(())
    })?;
    let found = e.to.len() as u64;
    if found != declared {
        return Err(r.error(Malformed::CountMismatch {
            what: "edges (sum of the nodes' edge_count)",
            declared,
            found,
        }));
    }
    check_count(r, start, "edge count", l.edge_count, found)?;
    Ok(e)
}

/// Whether a node's edges become slots in (key, value) pairs.
pub(super) fn slot_count(edges: u32, table: bool) -> Option<u32> {
    if table {
        edges.checked_mul(2)
    } else {
        Some(edges)
    }
}

/// Emits every node, in order, with its slots: an edge is a slot, weak if
/// its type is `weak` or `shortcut` or it is a WeakMap key's edge to its
/// value; a table's edges are (key, value) pairs: an entry's value keyed
/// by its key, a weak edge as a key without a value, any other edge as a
/// value keyed by the table itself (so that it is traced whenever the
/// table is).
pub(super) fn emit_all<S: HeapSink + ?Sized>(
    sink: &mut S,
    l: &Layout,
    n: &Nodes,
    e: &Edges,
    maps: &WeakMaps,
    table_type: u32,
    summary: &mut ImportSummary,
) -> Result<(), ImportError> {
    let weak = |kind: u8| {
        let kind = Some(u64::from(kind));
        l.edge_type.is_some() && (kind == l.weak_edge_type || kind == l.shortcut_edge_type)
    };
    let mut roles = maps.roles.iter().peekable();
    let mut tables = maps.tables.iter().peekable();
    let mut slots: Vec<Slot> = Vec::new();
    let mut first = 0usize;
    for (node, &count) in n.edge_count.iter().enumerate() {
        let count = count as usize;
        let table = tables.next_if(|&&t| t as usize == node).is_some();
        slots.clear();
        for edge in first..first + count {
            let role = roles.next_if(|r| r.0 == edge as u64).map(|r| r.1);
            let target = n.pos[e.to[edge] as usize];
            let is_weak = weak(e.kind[edge]) || role == Some(Role::FromKey);
            if !table {
                summary.weak_references += u64::from(is_weak);
                slots.push(Slot::new(target, is_weak));
                continue;
            }
            // A key slot is weak; a value slot an ephemeron of its key.
            summary.weak_references += 1;
            match role {
                Some(Role::Value { key }) => {
                    summary.ephemeron_references += 1;
                    slots.extend([Slot::strong(n.pos[key as usize]), Slot::strong(target)]);
                }
                _ if is_weak => slots.extend([Slot::strong(target), Slot::NULL]),
                _ => {
                    summary.ephemeron_references += 1;
                    slots.extend([Slot::strong(n.pos[node]), Slot::strong(target)]);
                }
            }
        }
        first += count;
        summary.references += slots.iter().filter(|s| !s.is_null()).count() as u64;
        let type_id = if table { table_type } else { n.type_id[node] };
        let header = sized(
            type_id,
            slots.len() as u32,
            u64::from(n.self_size[node]),
            n.layout,
        );
        let pos = sink.begin_object(header).map_err(sink_error)?;
        sink.slots(&slots).map_err(sink_error)?;
        if pos != n.pos[node] {
            return Err(misplaced(node as u64, pos, n.pos[node]));
        }
    }
    Ok(())
}
