//! Type names of V8 nodes, and the `strings` section that resolves them
//! (and the names of the edges that may be WeakMap entries).

use std::collections::HashMap;
use std::io::Read;

use super::weakmap::{parse_pair_name, PairName};
use crate::error::ImportError;
use crate::json::JsonReader;

/// Limit on a name read from `strings` (a type name or an edge name).
pub(super) const NAME_LIMIT: usize = 1 << 16;

/// Type names: one per node type (DevTools' label for it), then one per
/// distinct (`name` string, node type) of the object-like node types,
/// resolved when `strings` streams by.
pub(super) struct Types {
    /// The sink's type id of `names[0]`.
    pub(super) base: u32,
    /// `None` until the name's string streams by.
    pub(super) names: Vec<Option<String>>,
    /// `(string index, type id, node type)` of the named types, in
    /// first-seen order until sorted for the `strings` pass.
    pending: Vec<(u64, u32, u32)>,
    /// The type id of each (string index, node type).
    by_string: HashMap<(u64, u32), u32>,
    /// The node type enum's labels ([`devtools_label`]).
    labels: Vec<String>,
    /// How many names are known before `strings` (one per node type).
    pub(super) known: usize,
}

impl Types {
    /// The names of the node types of the enum `node_type_names` (or one
    /// `(node)` if nodes have no type).
    pub(super) fn new(node_type_names: &[String]) -> Types {
        let labels: Vec<String> = node_type_names.iter().map(|n| devtools_label(n)).collect();
        let mut names: Vec<Option<String>> = labels.iter().cloned().map(Some).collect();
        if names.is_empty() {
            names.push(Some("(node)".to_owned()));
        }
        Types {
            base: 0,
            known: names.len(),
            names,
            pending: Vec::new(),
            by_string: HashMap::new(),
            labels,
        }
    }

    /// The type index (from `base`) of a node of object-like type `ty`
    /// named by string `name`.
    pub(super) fn named(&mut self, name: u64, ty: u32) -> u32 {
        let next = self.names.len() as u32;
        *self.by_string.entry((name, ty)).or_insert_with(|| {
            self.names.push(None);
            self.pending.push((name, next, ty));
            next
        })
    }

    /// Gives the names whose strings never came (no `strings` section, or
    /// an index past its end) a placeholder naming the index.
    pub(super) fn resolve_missing(&mut self) {
        for &(index, id, _) in &self.pending {
            self.names[id as usize].get_or_insert_with(|| format!("<string {index}>"));
        }
    }
}

/// The class name DevTools' heap snapshot view gives a node of type
/// `node_type` whose own name does not say (`JSHeapSnapshotNode.className`
/// in DevTools' `HeapSnapshot.ts`): `(system)` for `hidden`, `(compiled
/// code)` for `code`, else the type in parentheses, such as `(array)`.
pub(super) fn devtools_label(node_type: &str) -> String {
    match node_type {
        "hidden" => "(system)".to_owned(),
        "code" => "(compiled code)".to_owned(),
        t => format!("({t})"),
    }
}

/// Streams the `strings` array, keeping only the type names, and the
/// names of the strings in `edge_names` (sorted string indices, the names
/// of internal edges) that name WeakMap entries.
pub(super) fn read_strings<R: Read>(
    r: &mut JsonReader<R>,
    t: &mut Types,
    edge_names: &[u32],
) -> Result<HashMap<u32, PairName>, ImportError> {
    t.pending.sort_unstable();
    let mut want = t.pending.iter().peekable();
    let mut edges = edge_names.iter().peekable();
    let mut pairs = HashMap::new();
    let mut index = 0u64;
    let mut buf = Vec::new();
    if r.begin_array()? {
        loop {
            let for_type = want.peek().is_some_and(|p| p.0 == index);
            while edges.next_if(|&&e| u64::from(e) < index).is_some() {}
            let for_edge = edges.next_if(|&&e| u64::from(e) == index).is_some();
            if for_type || for_edge {
                buf.clear();
                r.string(Some(&mut buf), NAME_LIMIT)?;
                let name = String::from_utf8_lossy(&buf);
                // Every type named by this string (one per node type).
                while let Some(&(_, id, ty)) = want.next_if(|p| p.0 == index) {
                    t.names[id as usize] = Some(if name.is_empty() {
                        t.labels[ty as usize].clone()
                    } else {
                        name.clone().into_owned()
                    });
                }
                if let Some(pair) = for_edge.then(|| parse_pair_name(&name)).flatten() {
                    pairs.insert(index as u32, pair);
                }
            } else {
                r.string(None, 0)?;
            }
            index += 1;
            if !r.comma_or(b']', "`,` or `]` in strings")? {
                break;
            }
        }
    }
    Ok(pairs)
}
