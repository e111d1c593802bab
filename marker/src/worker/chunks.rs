//! Large arrays, scanned in chunks: an array with more slots than
//! `Worker::big_array` is opened in the descriptor table
//! ([`ArrayTable`](crate::arrays::ArrayTable)), and its token, pushed to
//! the deque, lets any worker claim and scan one chunk at a time.

use stealmark_deques::WorkDeque;
use stealmark_model::{MarkStore, ObjectModel};

use super::Worker;
use crate::fifo::{obj_ref, Fifo};

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'_, '_, D, H, S> {
    /// Starts scanning a large array in chunks (whole, if the descriptor
    /// table is full).
    /// With a deque that may deliver an item twice, the array is first
    /// claimed as a holder (`crate::holders`): a second delivery of it is
    /// a duplicate and opens nothing, so that its slots are scanned once.
    #[cold]
    pub(super) fn open_array<const W: u8, const M: u8>(
        &mut self,
        w: usize,
        n: usize,
        edges: &mut Fifo,
    ) {
        if !D::KIND.exactly_once() && !self.phase.engine.holders.claim(obj_ref(w)) {
            self.slot.record.stats.duplicate_holders += 1;
            return;
        }
        let chunk = self.phase.config.array_chunk;
        match self.phase.engine.arrays.open(w, n.div_ceil(chunk)) {
            Some(token) => self.scan_chunk::<W, M>(token, edges),
            None => {
                let (heap, store) = (self.phase.heap, self.phase.store);
                self.scan::<W, M>(heap, store, obj_ref(w), 0..n, false, edges);
            }
        }
    }

    /// Claims a chunk of a large array through a popped token, republishes
    /// the token while chunks remain, and scans the chunk. A token carries
    /// no tag for copies: its chunks are claimed exactly once and counted
    /// with their array.
    pub(super) fn scan_chunk<const W: u8, const M: u8>(&mut self, token: usize, edges: &mut Fifo) {
        let Some(claim) = self.phase.engine.arrays.claim(token) else {
            return;
        };
        // Tokens are the array's parallelism: they go straight to the deque.
        for _ in 0..claim.push_back {
            self.push_shared(token);
        }
        let chunk = self.phase.config.array_chunk;
        let lo = claim.chunk * chunk;
        self.slot.record.stats.array_chunks += 1;
        let (heap, store) = (self.phase.heap, self.phase.store);
        self.scan::<W, M>(
            heap,
            store,
            obj_ref(claim.obj),
            lo..lo + chunk,
            false,
            edges,
        );
    }
}
