//! `snapshot.meta`: the field layout of the flat `nodes` and `edges`
//! arrays, and the enum values the importer looks for.

use serde::Deserialize;

/// The node types whose `name` says what kind of object the node is.
const NAMED_NODE_TYPES: [&str; 6] = [
    "object",
    "native",
    "hidden",
    "array",
    "synthetic",
    "object shape",
];

/// The `snapshot` section, as far as the importer reads it.
#[derive(Deserialize)]
pub(super) struct Header {
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
pub(super) struct Layout {
    pub(super) node_fields: usize,
    pub(super) node_type: Option<usize>,
    pub(super) node_name: Option<usize>,
    pub(super) node_id: Option<usize>,
    pub(super) node_self_size: usize,
    pub(super) node_edge_count: usize,
    /// The node type enum, when `type` is a field.
    pub(super) node_type_names: Vec<String>,
    /// For each node type: whether its `name` names its kind.
    pub(super) node_type_named: Vec<bool>,
    pub(super) edge_fields: usize,
    pub(super) edge_type: Option<usize>,
    pub(super) edge_name: Option<usize>,
    pub(super) edge_to_node: usize,
    /// The number of edge type enum values.
    pub(super) edge_type_count: usize,
    /// The edge type values of `weak`, `shortcut` and `internal`, where
    /// the enum has them.
    pub(super) weak_edge_type: Option<u64>,
    pub(super) shortcut_edge_type: Option<u64>,
    pub(super) internal_edge_type: Option<u64>,
    pub(super) node_count: u64,
    pub(super) edge_count: u64,
}

impl Layout {
    pub(super) fn from_header(h: Header) -> Result<Layout, String> {
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
        if edge_type_names.len() > 256 {
            return Err(format!("{} edge types", edge_type_names.len()));
        }
        let edge_type_value = |name: &str| {
            edge_type_names
                .iter()
                .position(|t| t == name)
                .map(|i| i as u64)
        };
        Ok(Layout {
            node_fields: m.node_fields.len(),
            node_type,
            node_name: find(&m.node_fields, "name"),
            node_id: find(&m.node_fields, "id"),
            node_self_size: need(&m.node_fields, "self_size", "node_fields")?,
            node_edge_count: need(&m.node_fields, "edge_count", "node_fields")?,
            node_type_named: node_type_names
                .iter()
                .map(|t| NAMED_NODE_TYPES.contains(&t.as_str()))
                .collect(),
            node_type_names,
            edge_fields: m.edge_fields.len(),
            edge_type,
            edge_name: find(&m.edge_fields, "name_or_index"),
            edge_to_node: need(&m.edge_fields, "to_node", "edge_fields")?,
            edge_type_count: edge_type_names.len(),
            weak_edge_type: edge_type_value("weak"),
            shortcut_edge_type: edge_type_value("shortcut"),
            internal_edge_type: edge_type_value("internal"),
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
