//! The ephemeron key index: ephemeron values waiting for their keys, found
//! by key, so that marking a key releases exactly its values.
//!
//! After the strong closure, every ephemeron entry whose key is still
//! unmarked is *registered* here (by the worker that found it, in parallel
//! with the others), and every object marked from then on is *checked*
//! against the index. The index is
//!
//! - a filter: a bitmap of hashed keys, set with `fetch_or` and read with a
//!   plain load, so that checking an object that is no key (nearly all of
//!   them) costs one load of a word that is usually cached;
//! - [`SHARDS`] shards, each a mutex around a map from key to the newest of
//!   its waiting entries and a vector of entries `(value, next)` linked per
//!   key. A key's entries are taken all at once, under its shard's lock, so
//!   each entry is taken at most once. The maps and vectors keep their
//!   capacity from one collection to the next: registering allocates only
//!   while a collection has more waiting entries than any before.
//!
//! Both hashes keep neighbours together: keys in one 4 KiB page share a
//! shard, and keys next to each other in memory get neighbouring filter bits
//! and map buckets, so that a chain of keys laid out in order (each value
//! the next entry's key) walks the index in order too.
//!
//! # The protocol (no lost wake-up)
//!
//! A registrant and a marker of the same key race: the registrant may check
//! the key just before the marker sets its bit, and the marker may check the
//! index just before the registrant inserts. Both sides therefore follow a
//! store, [`fence`], load pattern (Dekker):
//!
//! - registrant: [`KeyIndex::insert`] (entry under the shard lock, then the
//!   filter bit), [`fence`], then if the key is marked,
//!   [`KeyIndex::take`] its entries and trace them;
//! - marker: mark the object ([`MarkStore::try_mark`](stealmark_model::MarkStore::try_mark),
//!   an atomic read-modify-write), [`fence`], then if
//!   [`KeyIndex::may_hold`] it, [`KeyIndex::take`] its entries and trace
//!   them.
//!
//! The two sequentially consistent fences are ordered one way or the other.
//! If the marker's comes first, the registrant's load of the mark bit after
//! its own fence sees the mark. If the registrant's comes first, the
//! marker's filter load sees the bit, and the marker takes the shard lock:
//! if it gets the lock after the registrant's insert, it finds the entry; if
//! before, its mark happens before the registrant's insert (through the
//! lock), so the registrant sees the mark. Either way someone takes the
//! entry, and at most one does (the map entry is removed under the lock). A
//! batch of inserts (or marks) may share one fence: what matters is that
//! each store comes before it and each load after it.

#[cfg(all(test, loom))]
mod loom_tests;
mod shard;
#[cfg(all(test, not(loom)))]
mod tests;

use crossbeam_utils::CachePadded;
use stealmark_model::ObjRef;

#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering};
use shard::{lock, Mutex, Shard};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, Ordering};

/// The number of shards (a power of two; two in the loom models, whose
/// every lock is a modelled object).
#[cfg(not(loom))]
pub(crate) const SHARDS: usize = 256;
#[cfg(loom)]
pub(crate) const SHARDS: usize = 2;

/// Filter bits per expected key (the false-positive rate is about one in
/// this many while the index holds the expected number of keys).
const FILTER_BITS_PER_KEY: usize = 8;
/// The smallest and largest filter, in bits (512 bytes and 64 MiB; one
/// word in the loom models).
#[cfg(not(loom))]
const FILTER_MIN_BITS: usize = 1 << 12;
#[cfg(loom)]
const FILTER_MIN_BITS: usize = 64;
const FILTER_MAX_BITS: usize = 1 << 29;

/// The fence of the protocol (module documentation): sequentially
/// consistent, paired with the other side's.
#[inline]
pub(crate) fn fence() {
    #[cfg(loom)]
    loom::sync::atomic::fence(Ordering::SeqCst);
    #[cfg(not(loom))]
    std::sync::atomic::fence(Ordering::SeqCst);
}

/// Values waiting for their keys; see the module documentation.
pub(crate) struct KeyIndex {
    shards: Box<[CachePadded<Mutex<Shard>>]>,
    filter: Vec<AtomicU64>,
    /// Filter bits minus one (the bit count is a power of two).
    filter_mask: usize,
}

impl KeyIndex {
    /// An empty index with the smallest filter.
    pub(crate) fn new() -> KeyIndex {
        let mut index = KeyIndex {
            shards: (0..SHARDS)
                .map(|_| CachePadded::new(Mutex::new(Shard::default())))
                .collect(),
            filter: Vec::new(),
            filter_mask: 0,
        };
        index.reset(0);
        index
    }

    /// Empties the index (keeping its storage) and sizes the filter for
    /// about `keys` keys. Exclusive access: no worker runs.
    pub(crate) fn reset(&mut self, keys: usize) {
        for shard in self.shards.iter() {
            lock(shard).clear();
        }
        let bits = keys
            .saturating_mul(FILTER_BITS_PER_KEY)
            .clamp(FILTER_MIN_BITS, FILTER_MAX_BITS)
            .next_power_of_two();
        self.filter.truncate(bits / 64);
        for w in &self.filter {
            // Relaxed: exclusive access; the workers see the cleared filter
            // through the pool's hand-off (a mutex).
            w.store(0, Ordering::Relaxed);
        }
        self.filter.resize_with(bits / 64, || AtomicU64::new(0));
        self.filter_mask = bits - 1;
    }

    /// Registers `value` as waiting for `key`: inserts the entry, then sets
    /// the key's filter bit. The caller then fences ([`fence`]) and checks
    /// whether `key` is marked (module documentation).
    pub(crate) fn insert(&self, key: ObjRef, value: ObjRef) {
        lock(&self.shards[shard_of(key)]).insert(key.word(), value.word());
        let (word, bit) = self.filter_bit(key);
        // Relaxed: ordered before the caller's check of the key's mark by
        // the SeqCst fence that follows (see `fence`), which pairs with the
        // marker's fence between its mark and its `may_hold`.
        self.filter[word].fetch_or(bit, Ordering::Relaxed);
    }

    /// Whether `key` may have waiting entries (`false` is certain). The
    /// caller has marked `key` and fenced since ([`fence`]).
    #[inline]
    pub(crate) fn may_hold(&self, key: ObjRef) -> bool {
        let (word, bit) = self.filter_bit(key);
        // Relaxed: the caller's SeqCst fence (after its mark) pairs with the
        // registrant's fence (after its `insert`); see the module docs.
        self.filter[word].load(Ordering::Relaxed) & bit != 0
    }

    /// Takes every entry waiting for `key`, appending their values to `out`;
    /// returns how many. Each entry is taken by one call only.
    pub(crate) fn take(&self, key: ObjRef, out: &mut Vec<ObjRef>) -> usize {
        let before = out.len();
        lock(&self.shards[shard_of(key)]).take(key.word(), |v| {
            out.push(ObjRef::from_word(v).expect("only object references are inserted"));
        });
        out.len() - before
    }

    /// Entries registered and not taken, over every shard.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.shards.iter().map(|s| lock(s).waiting()).sum()
    }

    /// The filter word and bit of `key`: the key's word index plus a
    /// per-page offset, so that neighbours share a word and pages spread.
    #[inline]
    fn filter_bit(&self, key: ObjRef) -> (usize, u64) {
        let w = key.word();
        let bit = ((w >> 3).wrapping_add(page_hash(w))) & self.filter_mask;
        (bit / 64, 1u64 << (bit % 64))
    }
}

/// A 64-bit mix of the 4 KiB page of `word`.
#[inline]
fn page_hash(word: usize) -> usize {
    ((word >> 12) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) as usize >> 7
}

/// The shard of `key`: a hash of its page.
#[inline]
fn shard_of(key: ObjRef) -> usize {
    (((key.word() >> 12) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize & (SHARDS - 1)
}
