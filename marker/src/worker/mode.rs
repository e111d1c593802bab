//! The mark loop's settings as compile-time constants.
//!
//! A worker's prefetch depth, private-stack switch, live counting and
//! unshared marking cannot change during a drain, but the loop read each
//! from the worker once per object (a load, a compare and a branch each:
//! about a fifth of the loop's own instructions on a binary tree). So the
//! loop takes them as its const parameter `M`, chosen once per drain
//! ([`Worker::drain_objects_in_mode`]): [`DYNAMIC`] reads the worker's
//! fields, as before; with [`FIXED`], prefetching is on and the flags say
//! the rest. Only the steps that do not watch the key index (`W = OFF`, the
//! common case) get fixed instantiations, eight of them; prefetching off
//! and the watching steps run the dynamic one.

use stealmark_deques::WorkDeque;
use stealmark_model::{MarkStore, ObjectModel};

use super::{Worker, EDGE_DEPTH, OFF};
use crate::fifo::Fifo;

/// `M` of the loop that reads every setting from the worker.
pub(super) const DYNAMIC: u8 = 0;
/// `M` says the settings: prefetching on, and the flags below.
const FIXED: u8 = 1;
/// With [`FIXED`]: new grey objects go to the private stack.
const PRIVATE: u8 = 2;
/// With [`FIXED`]: scanned objects are counted live.
const COUNT: u8 = 4;
/// With [`FIXED`]: the worker marks alone (`Phase::unshared`).
const UNSHARED: u8 = 8;

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'_, '_, D, H, S> {
    /// Runs [`Worker::drain_objects`] in the instantiation for this
    /// worker's settings.
    #[inline(always)]
    pub(super) fn drain_objects_in_mode<const W: u8>(&mut self, fifo: &mut Fifo, edges: &mut Fifo) {
        let (heap, store) = (self.phase.heap, self.phase.store);
        if W != OFF || self.depth == 0 {
            return self.drain_objects::<W, DYNAMIC>(heap, store, fifo, edges);
        }
        const F: u8 = FIXED;
        match (self.private, self.count_live, self.phase.unshared) {
            (true, true, true) => self
                .drain_objects::<W, { F | PRIVATE | COUNT | UNSHARED }>(heap, store, fifo, edges),
            (true, true, false) => {
                self.drain_objects::<W, { F | PRIVATE | COUNT }>(heap, store, fifo, edges)
            }
            (true, false, true) => {
                self.drain_objects::<W, { F | PRIVATE | UNSHARED }>(heap, store, fifo, edges)
            }
            (true, false, false) => {
                self.drain_objects::<W, { F | PRIVATE }>(heap, store, fifo, edges)
            }
            (false, true, true) => {
                self.drain_objects::<W, { F | COUNT | UNSHARED }>(heap, store, fifo, edges)
            }
            (false, true, false) => {
                self.drain_objects::<W, { F | COUNT }>(heap, store, fifo, edges)
            }
            (false, false, true) => {
                self.drain_objects::<W, { F | UNSHARED }>(heap, store, fifo, edges)
            }
            (false, false, false) => self.drain_objects::<W, F>(heap, store, fifo, edges),
        }
    }

    /// Whether popped objects go through the prefetch FIFO.
    #[inline(always)]
    pub(super) fn prefetching<const M: u8>(&self) -> bool {
        M & FIXED != 0 || self.depth != 0
    }

    /// The edge FIFO's depth.
    #[inline(always)]
    pub(super) fn edge_depth<const M: u8>(&self) -> usize {
        if M & FIXED != 0 {
            EDGE_DEPTH
        } else {
            self.edge_depth
        }
    }

    /// Whether new grey objects go to the private stack.
    #[inline(always)]
    pub(super) fn private_on<const M: u8>(&self) -> bool {
        if M & FIXED != 0 {
            M & PRIVATE != 0
        } else {
            self.private
        }
    }

    /// Whether scanned objects are counted live.
    #[inline(always)]
    pub(super) fn counting<const M: u8>(&self) -> bool {
        if M & FIXED != 0 {
            M & COUNT != 0
        } else {
            self.count_live
        }
    }

    /// Whether this worker marks alone, without atomic read-modify-writes.
    #[inline(always)]
    pub(super) fn unshared<const M: u8>(&self) -> bool {
        if M & FIXED != 0 {
            M & UNSHARED != 0
        } else {
            self.phase.unshared
        }
    }
}
