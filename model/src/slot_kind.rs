//! [`SlotKind`]: how strongly a reference slot holds its target.

use crate::obj_ref::ObjRef;

/// How a reference slot holds its target: whether the engine traces it, and
/// when it clears it (soft and weak slots are judged before finalization,
/// phantom and ephemeron slots after it).
///
/// | kind | traced | cleared (reported) when |
/// |---|---|---|
/// | `Strong` | always | never |
/// | `StrongLeaf` | always (marked, never scanned: it has no slots) | never |
/// | `Soft` | if the soft-reference policy keeps the referent | the referent is dead before finalization |
/// | `Weak` | never | the referent is dead before finalization |
/// | `Phantom` | never | the referent is dead after finalization |
/// | `Ephemeron { key }` | once `key` is marked | `key` is dead after finalization |
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum SlotKind {
    /// A strong reference: the marker traces it.
    Strong,
    /// A strong reference to a leaf: an object without reference slots of
    /// any kind (a string, a boxed number, an array of primitives). Use it
    /// where the runtime can tell from the slot itself, without reading
    /// the target (a type tag stored beside the reference, as in Lua's
    /// values, or a span known to hold no references, as in Go's heap).
    /// The marker marks and counts the target but never scans it, so it
    /// saves the target's trip through the mark stack and its scan; with
    /// mark bits in headers, the mark is the only access to the target.
    ///
    /// A model that reports them sets
    /// [`ObjectModel::LEAF_SLOTS`](crate::ObjectModel::LEAF_SLOTS);
    /// otherwise the marker traces them as `Strong` slots.
    ///
    /// The hint is part of the contract: a leaf with reference slots has
    /// them skipped, and what only they reach stays unmarked. The engine
    /// checks the hint (the target's
    /// [`slot_count`](crate::ObjectModel::slot_count) is 0) in debug
    /// builds only.
    StrongLeaf,
    /// A soft reference (Java's `SoftReference`): traced only if the
    /// soft-reference policy keeps its referent, otherwise weak.
    Soft,
    /// A weak reference (Java's `WeakReference`, a weak handle): never
    /// traced; cleared if the referent is not marked once strong and soft
    /// marking is over, before finalization.
    Weak,
    /// A phantom reference (Java's `PhantomReference`): never traced;
    /// cleared if the referent is not marked after finalization.
    Phantom,
    /// The value of an ephemeron (a WeakMap or WeakHashMap entry): traced
    /// if and only if `key` is marked, whenever that happens. The key itself
    /// is held weakly (usually by a `Weak` slot of the same holder).
    Ephemeron {
        /// The object whose liveness keeps the value alive.
        key: ObjRef,
    },
}

impl SlotKind {
    /// Whether the marker traces the slot unconditionally ([`SlotKind::Strong`]
    /// or [`SlotKind::StrongLeaf`]).
    #[inline(always)]
    pub const fn is_strong(self) -> bool {
        matches!(self, SlotKind::Strong | SlotKind::StrongLeaf)
    }
}
