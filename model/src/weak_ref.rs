//! [`WeakRef`]: a non-strong slot the marker found in a marked object.

use crate::obj_ref::ObjRef;
use crate::slot_kind::SlotKind;

/// A soft, weak, phantom or ephemeron slot found in a marked object:
/// `holder`'s slot number `slot` refers to `target`. The engine reports the
/// ones to clear in this form, exact enough for a runtime to clear that
/// field.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct WeakRef {
    /// The marked object holding the slot.
    pub holder: ObjRef,
    /// The slot's index, as [`ObjectModel::scan_slots`](crate::ObjectModel::scan_slots) gave it.
    pub slot: usize,
    /// The referent (for an ephemeron: its value).
    pub target: ObjRef,
    /// The slot's kind (never [`SlotKind::Strong`]).
    pub kind: SlotKind,
}
