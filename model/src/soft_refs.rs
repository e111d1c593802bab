//! [`SoftRefs`]: the soft-reference policy.

use crate::obj_ref::ObjRef;

/// Decides, per referent, whether a soft reference keeps its referent alive
/// this collection (for example HotSpot's LRU clock: keep if the referent was
/// used within `free heap × ms-per-MB`).
///
/// Called from GC worker threads in parallel, once per soft slot whose
/// referent is not otherwise marked.
pub trait SoftRefPolicy: Sync {
    /// Whether to keep `referent` (and everything it reaches) alive.
    fn keep(&self, referent: ObjRef) -> bool;
}

/// What a collection does with soft references whose referents are not
/// strongly reachable.
#[derive(Clone, Copy, Default)]
pub enum SoftRefs<'a> {
    /// Treat them as weak: clear every one (what a collector does when memory
    /// is short).
    #[default]
    ClearAll,
    /// Treat them as strong: keep every referent.
    KeepAll,
    /// Ask the runtime for each referent.
    Ask(&'a dyn SoftRefPolicy),
}

impl std::fmt::Debug for SoftRefs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SoftRefs::ClearAll => "ClearAll",
            SoftRefs::KeepAll => "KeepAll",
            SoftRefs::Ask(_) => "Ask(..)",
        })
    }
}
