//! Counting live objects: the loop of `Worker::account` over a batch of
//! objects scanned (or marked), summing their bytes and their footprint and
//! counting them by type. The reference markers (`crate::sequential`) count
//! with the same loop over batches of the same size, so that a comparison
//! with the engine is like for like.

use stealmark_model::ObjectModel;

use super::word::Word;
use crate::fifo::Batch;
use crate::stats::{TypeCount, WorkerRecord};

/// Counts the objects of `batch` live into `record` (bytes, footprint and,
/// if `typed`, by type) and empties it: the objects a worker scanned, or
/// the leaves it marked.
#[inline(always)]
pub(super) fn count_batch<H: ObjectModel>(
    heap: &H,
    record: &mut WorkerRecord,
    typed: bool,
    batch: &mut Batch,
) {
    let by_type: &mut [TypeCount] = if typed {
        &mut record.live_by_type
    } else {
        &mut []
    };
    let (bytes, footprint) = count_live(heap, batch.as_slice(), by_type);
    record.stats.live_bytes += bytes;
    record.stats.live_footprint_bytes += footprint;
    batch.clear();
}

/// Sums the live bytes and footprint of the objects `words`, and counts
/// them by type into `by_type` unless it is empty (an untyped heap). A
/// function of its own so that its reference parameters tell the compiler
/// that the counts do not alias the heap: the heap's fields are then read
/// once per batch, not once per object (inlined, the compiler reloaded
/// them for every object).
///
/// Out of the scan on purpose: counting each object as it is scanned, right
/// after its header load, measured slower on a random heap, whose header
/// loads miss.
#[inline(never)]
pub(crate) fn count_live<H: ObjectModel>(
    heap: &H,
    words: &[usize],
    by_type: &mut [TypeCount],
) -> (u64, u64) {
    let (mut bytes, mut footprint) = (0, 0);
    if by_type.is_empty() {
        for &w in words {
            let (size, foot) = heap.live_bytes(Word::from_raw(w).obj());
            bytes += size as u64;
            footprint += foot as u64;
        }
    } else {
        for &w in words {
            let obj = Word::from_raw(w).obj();
            let (size, foot) = heap.live_bytes(obj);
            let t = &mut by_type[heap.type_id(obj)];
            t.objects += 1;
            t.bytes += size as u64;
            bytes += size as u64;
            footprint += foot as u64;
        }
    }
    (bytes, footprint)
}
