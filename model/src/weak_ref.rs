//! [`WeakRef`]: a weak slot the marker found and did not trace.

use crate::obj_ref::ObjRef;

/// A weak reference found in a marked object: `holder`'s slot refers to
/// `target`, which the marker did not trace through this slot.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct WeakRef {
    /// The marked object holding the weak slot.
    pub holder: ObjRef,
    /// The referent (marked or not).
    pub target: ObjRef,
}
