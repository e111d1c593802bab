//! [`MutatorBuffer`]: one mutator thread's end of the snapshot-at-the-
//! beginning write barrier, and its allocation of black objects.

use stealmark_model::{MarkStore, ObjRef, ObjectModel};

use super::MarkCycle;
use crate::satb::BUFFER_CAPACITY;

/// One mutator thread's write-barrier buffer during a mark cycle, from
/// [`MarkCycle::mutator`].
///
/// Before the thread overwrites a reference slot while marking is active,
/// it calls [`MutatorBuffer::pre_write`] with the slot's old value (a Yuasa
/// deletion barrier): the buffer keeps it, and a full buffer
/// ([`MutatorBuffer::CAPACITY`] entries) goes to the marker, whose workers
/// mark from it. Objects the thread allocates while marking is active go
/// through [`MutatorBuffer::allocate_black`].
///
/// The buffer is the thread's own (no synchronisation on the fast path).
/// Dropping it hands its entries to the marker; a thread about to block
/// outside the runtime (native code, a blocking call) drops it first, or
/// [flushes](MutatorBuffer::flush) it, so that the remark never waits for
/// that thread; it takes a new one when it comes back. The remark requires
/// every buffer to have been dropped (see [`MarkCycle::finish`]).
pub struct MutatorBuffer<'c, 'm, H, S> {
    cycle: &'c MarkCycle<'m, H, S>,
    entries: Vec<ObjRef>,
    allocated: u64,
}

impl<'c, 'm, H: ObjectModel, S: MarkStore<H>> MutatorBuffer<'c, 'm, H, S> {
    /// Entries per buffer: a full buffer is handed to the marker.
    pub const CAPACITY: usize = BUFFER_CAPACITY;

    pub(super) fn new(cycle: &'c MarkCycle<'m, H, S>) -> Self {
        MutatorBuffer {
            cycle,
            entries: cycle.queue.acquire(),
            allocated: 0,
        }
    }

    /// The write barrier: call it with a reference slot's old value before
    /// overwriting the slot (`None` for a null slot). The fast path skips a
    /// null, appends, and compares the length with the capacity; a full
    /// buffer is handed off out of line.
    #[inline]
    pub fn pre_write(&mut self, old: Option<ObjRef>) {
        if let Some(old) = old {
            // Never grows: the buffer is handed off as soon as it is full.
            self.entries.push(old);
            if self.entries.len() == BUFFER_CAPACITY {
                self.hand_off();
            }
        }
    }

    /// Hands the entries recorded so far to the marker (on the way into
    /// native code, or whenever the thread will not reach a safepoint for
    /// a while).
    pub fn flush(&mut self) {
        if !self.entries.is_empty() {
            self.hand_off();
        }
    }

    /// Marks a newly allocated object black: call it for every object the
    /// thread allocates during the cycle, before storing a reference to it
    /// anywhere. The object's slots must hold only null or references the
    /// thread could reach (objects of the snapshot or allocated black).
    #[inline]
    pub fn allocate_black(&mut self, obj: ObjRef) {
        self.cycle.store.try_mark(self.cycle.heap, obj);
        self.allocated += 1;
    }

    #[cold]
    #[inline(never)]
    fn hand_off(&mut self) {
        self.cycle.queue.hand_off(&mut self.entries);
    }
}

impl<H, S> Drop for MutatorBuffer<'_, '_, H, S> {
    fn drop(&mut self) {
        let entries = std::mem::take(&mut self.entries);
        self.cycle.queue.release(entries, self.allocated);
    }
}
