//! [`Spares`]: what a mark cycle leaves its marker for the next one.

use stealmark_model::ObjRef;

use super::entry::Entry;

/// What a mark cycle leaves its marker for the next one: its barrier
/// buffers and the lists of objects to shade and holders to rescan,
/// emptied with their memory kept, so that a runtime that runs cycle
/// after cycle allocates nothing large at a cycle's start, its barrier
/// handles' first hand-offs or its steps. A large allocation there would
/// land in a pause, and with glibc's allocator it is not only its own
/// cost: a request of a kilobyte or more first merges every small block
/// freed since the last such request (`malloc_consolidate`), which after
/// a runtime's sweep freed a few hundred thousand objects takes
/// milliseconds. The buffers kept are those the cycle's queue kept at its
/// end, within the queue's bound (`buffers_per_thread` per worker and per
/// buffer held).
#[derive(Default)]
pub(crate) struct Spares {
    pub(super) buffers: Vec<Vec<Entry>>,
    pub(super) pending: Vec<ObjRef>,
    pub(super) rescans: Vec<ObjRef>,
}

impl Spares {
    /// The spares of a cycle that ends with the empty barrier buffers
    /// `buffers` and the lists `pending` and `rescans`, emptied here.
    pub(super) fn new(
        buffers: Vec<Vec<Entry>>,
        mut pending: Vec<ObjRef>,
        mut rescans: Vec<ObjRef>,
    ) -> Spares {
        pending.clear();
        rescans.clear();
        Spares {
            buffers,
            pending,
            rescans,
        }
    }
}
