//! Where a key goes in the key index: its shard and filter bit (hashes that
//! keep neighbours together; the module documentation of
//! `crate::ephemeron`), and the small helpers the index's parts share.

use stealmark_model::ObjRef;

use super::SHARDS;

/// The message of a dense key index given a key without a number: the
/// mark store broke `MarkStore::dense_index`'s contract.
pub(super) const NUMBERED: &str =
    "MarkStore::dense_index numbers every object when dense_bound is Some";

/// An entry's value, from its reference word.
#[inline]
pub(super) fn value(word: usize) -> ObjRef {
    ObjRef::from_word(word).expect("only object references are inserted")
}

/// Copies `entries` into `scratch` grouped by shard, in shard order,
/// keeping their order within each shard.
pub(super) fn group_by_shard(entries: &[(ObjRef, ObjRef)], scratch: &mut Vec<(ObjRef, ObjRef)>) {
    let mut counts = [0usize; SHARDS];
    for &(key, _) in entries {
        counts[shard_of(key)] += 1;
    }
    let mut at = 0;
    for c in counts.iter_mut() {
        (*c, at) = (at, at + *c);
    }
    scratch.clear();
    if let Some(&first) = entries.first() {
        scratch.resize(entries.len(), first);
    }
    for &e in entries {
        let s = shard_of(e.0);
        scratch[counts[s]] = e;
        counts[s] += 1;
    }
}

/// The filter word and bit of `key` in a filter of `mask + 1` bits: the
/// key's word index plus a per-page offset, so that neighbours share a word
/// and pages spread.
#[inline]
pub(super) fn filter_bit(key: ObjRef, mask: usize) -> (usize, u64) {
    let w = key.word();
    let bit = ((w >> 3).wrapping_add(page_hash(w))) & mask;
    (bit / 64, 1u64 << (bit % 64))
}

/// A 64-bit mix of the 4 KiB page of `word`.
#[inline]
fn page_hash(word: usize) -> usize {
    ((word >> 12) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) as usize >> 7
}

/// The shard of `key`: a hash of its 64 KiB region, so that a run of keys
/// laid out together (a table's keys, a chain) stays in one shard's map for
/// hundreds of inserts.
#[inline]
pub(super) fn shard_of(key: ObjRef) -> usize {
    (((key.word() >> 16) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize & (SHARDS - 1)
}
