//! WeakMap and WeakSet entries, recognised by the names V8 gives their
//! edges, and imported as ephemerons.
//!
//! V8 writes each entry of an `EphemeronHashTable` (the backing store of a
//! WeakMap or WeakSet) as two weak edges from the table, to the key and to
//! the value, and two `internal` edges to the value, one from the table
//! and one from the key, both named `<n> / part of key (<name> @<key id>)
//! -> value (<name> @<value id>) pair in WeakMap (table @<table id>)`
//! (`V8HeapExplorer::ExtractEphemeronHashTableReferences`, in V8's
//! `src/profiler/heap-snapshot-generator.cc`). DevTools follows such an
//! edge only once it has reached both its table and its key
//! (`JSHeapSnapshot.calculateDistances` in DevTools' `HeapSnapshot.ts`
//! keeps the first of the two edges pending until the second is seen): the
//! value is reachable through table and key together, an ephemeron. The
//! importer makes the table's edge an ephemeron value keyed by the key
//! (the table becomes an ephemeron table), and the key's edge weak.

use std::collections::HashMap;

/// What an edge name says about a WeakMap entry.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct PairName {
    /// The node id of the entry's key.
    pub(super) key_id: u64,
    /// The node id of the table.
    pub(super) table_id: u64,
}

/// Parses the name of a WeakMap entry's edge; `None` for any other name.
pub(super) fn parse_pair_name(name: &str) -> Option<PairName> {
    let (index, rest) = name.split_once(" / part of key (")?;
    digits(index)?;
    let (rest, table) = rest
        .strip_suffix(')')?
        .rsplit_once(") pair in WeakMap (table @")?;
    let table_id = digits(table)?;
    let (rest, value_id) = rest.rsplit_once(" @")?;
    digits(value_id)?;
    let (key_part, _value_name) = rest.rsplit_once(") -> value (")?;
    let (_key_name, key_id) = key_part.rsplit_once(" @")?;
    Some(PairName {
        key_id: digits(key_id)?,
        table_id,
    })
}

/// The decimal number `s`, if it is one.
fn digits(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// What an edge becomes when it belongs to a WeakMap entry.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Role {
    /// The table's edge to an entry's value: an ephemeron value keyed by
    /// node number `key`.
    Value { key: u32 },
    /// The key's edge to its entry's value: weak, since the key alone does
    /// not keep the value.
    FromKey,
}

/// The WeakMap entries of a snapshot.
#[derive(Default)]
pub(super) struct WeakMaps {
    /// `(edge number, role)` of the entries' edges, by edge number.
    pub(super) roles: Vec<(u64, Role)>,
    /// The table nodes (those with a [`Role::Value`] edge), by number.
    pub(super) tables: Vec<u32>,
}

impl WeakMaps {
    /// Finds the entries' edges: internal edges (type `internal`) whose
    /// name (in `names`, by string index) is an entry's, from the node
    /// whose id is the name's table id or key id. `ids` are the node ids,
    /// `edge_counts` the nodes' edge counts, and `edges(i)` the type and
    /// name of edge `i`.
    pub(super) fn find(
        ids: &[u64],
        edge_counts: &[u32],
        names: &HashMap<u32, PairName>,
        internal: u8,
        edges: impl Fn(usize) -> (u8, u32),
    ) -> WeakMaps {
        let mut maps = WeakMaps::default();
        if names.is_empty() || ids.len() != edge_counts.len() {
            return maps;
        }
        let wanted: std::collections::HashSet<u64> = names.values().map(|p| p.key_id).collect();
        let by_id: HashMap<u64, u32> = ids
            .iter()
            .enumerate()
            .filter(|(_, id)| wanted.contains(id))
            .map(|(node, &id)| (id, node as u32))
            .collect();
        let mut edge = 0usize;
        for (node, (&id, &count)) in ids.iter().zip(edge_counts).enumerate() {
            let mut table = false;
            for e in edge..edge + count as usize {
                let (kind, name) = edges(e);
                let Some(pair) = names.get(&name).filter(|_| kind == internal) else {
                    continue;
                };
                let role = if id == pair.table_id {
                    match by_id.get(&pair.key_id) {
                        Some(&key) => Role::Value { key },
                        None => continue,
                    }
                } else if id == pair.key_id {
                    Role::FromKey
                } else {
                    continue;
                };
                table |= matches!(role, Role::Value { .. });
                maps.roles.push((e as u64, role));
            }
            if table {
                maps.tables.push(node as u32);
            }
            edge += count as usize;
        }
        maps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_names_parse_and_others_do_not() {
        let name =
            "4 / part of key (LiveKey @78177) -> value (Val @78187) pair in WeakMap (table @78169)";
        assert_eq!(
            parse_pair_name(name),
            Some(PairName {
                key_id: 78177,
                table_id: 78169
            })
        );
        // Names with spaces, parentheses and `@` inside.
        let odd = "12 / part of key (a (b) @c @5) -> value (system / Oddball @7) pair in WeakMap (table @9)";
        assert_eq!(
            parse_pair_name(odd),
            Some(PairName {
                key_id: 5,
                table_id: 9
            })
        );
        for other in [
            "map",
            "part of key (K @1) -> value (V @2) pair in WeakMap (table @3)",
            "x / part of key (K @1) -> value (V @2) pair in WeakMap (table @3)",
            "1 / part of key (K @1) -> value (V @2) pair in WeakMap (table @)",
            "1 / part of key (K) -> value (V @2) pair in WeakMap (table @3)",
        ] {
            assert_eq!(parse_pair_name(other), None, "{other}");
        }
    }
}
