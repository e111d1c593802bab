//! [`SlotKind`]: how strongly a reference slot holds its target.

/// Whether a reference slot keeps its target alive.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum SlotKind {
    /// A strong reference: the marker traces it.
    Strong,
    /// A weak reference: the marker does not trace it, but reports it.
    Weak,
}
