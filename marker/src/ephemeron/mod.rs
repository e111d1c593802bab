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
//!   its waiting entries `(value, next)`, and a vector of the older entries,
//!   linked per key (a key with one entry, the common case, costs one map
//!   slot). The maps and vectors keep their capacity from one collection to
//!   the next: registering allocates only while a collection has more
//!   waiting entries than any before.
//!
//! Both hashes keep neighbours together: keys in one 64 KiB region share a
//! shard, and keys next to each other in memory get neighbouring filter bits
//! and map buckets, so that a chain of keys laid out in order (each value
//! the next entry's key) walks the index in order too, and a worker that
//! registers a run of such keys takes each shard's lock once per run.
//!
//! # Dense: a side table by object number
//!
//! When the mark store numbers its objects densely
//! ([`MarkStore::dense_bound`](stealmark_model::MarkStore::dense_bound):
//! a side bitmap does) and the table would not be much larger than the
//! keys need ([`DENSE_PER_KEY`]), the `register` steps put the entries in
//! a side table instead of the shards (`dense`): one `u32` head per object
//! number, the entries in an array by id. Registering is a few stores and
//! one swap of the key's head per entry (two plain accesses when one worker
//! registers alone), in ids reserved before the step. The filter is not
//! set for these entries: a frozen check of a marked object is one load of
//! its head, and a hit empties the key (only the worker that marked it
//! looks it up). Shared steps still register in the shards (their entries
//! are not counted in advance; the filter guards those), and their `take`
//! reads the key's dense head and swaps it to empty if set, so the entries
//! of the frozen rounds before are taken exactly once too: the dense heads
//! were written before the step, so a marker's check after its fence sees
//! them, and the swap lets one taker have each list.
//!
//! # Frozen: registering and checking never overlap
//!
//! The engine registers the waiting entries in a step of their own
//! ([`KeyIndex::register`], under the shard locks or in the dense
//! table), in which nothing is marked. The steps that mark afterwards read
//! a [`Frozen`] view, made from exclusive access between the steps: no
//! lock, no fence, no removal from the shards. Nothing is added while they
//! run, so a key's entries are found by whoever marks the key, and only one
//! worker marks a key (the one whose `try_mark` set its bit), so each entry
//! is released once; that worker alone empties the key's dense head. Ephemerons
//! found while such a step runs, with their key unmarked, wait for the next
//! registration step.
//!
//! # Shared: registering while others mark (Dekker)
//!
//! When one collection would need many registration rounds (ephemeron
//! tables nested in ephemeron values, each found only when the previous
//! key is marked), the engine registers while it marks instead, and then
//! a registrant and a marker of the same key race: the registrant may check
//! the key just before the marker sets its bit, and the marker may check
//! the index just before the registrant inserts. Both sides therefore
//! follow a store, [`fence`], load pattern:
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

mod dense;
mod frozen;
#[cfg(all(test, loom))]
mod loom_tests;
mod place;
mod shard;
#[cfg(all(test, not(loom)))]
mod tests;

use crossbeam_utils::CachePadded;
use dense::Dense;
pub(crate) use frozen::Frozen;
use place::{filter_bit, group_by_shard, shard_of, value, NUMBERED};
use stealmark_model::ObjRef;

#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering};
use shard::{get_mut, lock, Mutex, Shard};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, Ordering};

/// The number of shards (a power of two; two in the loom models, whose
/// every lock is a modelled object).
#[cfg(not(loom))]
pub(crate) const SHARDS: usize = 256;
#[cfg(loom)]
pub(crate) const SHARDS: usize = 2;

/// `register` groups the entries by shard first when its runs of keys
/// in one shard are shorter than this on average, judged on the first
/// `RUN_SAMPLE` entries (so that entries in long runs, a table's keys laid
/// out together, cost no extra pass).
const SHORT_RUN: usize = 4;
/// The entries `register` judges its runs on.
const RUN_SAMPLE: usize = 256;

/// The dense table is used while it has at most this many heads (4 bytes
/// each, touched or not) per expected key, or at most `DENSE_ALWAYS` heads:
/// beyond, scattered keys would touch most of a table far larger than the
/// hashed shards (the table is by mark index, which a heap may number by
/// word, not by object).
const DENSE_PER_KEY: usize = 8;
const DENSE_ALWAYS: usize = 1 << 16;

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
    /// The side table by object number, used instead of the shards by
    /// `register` while `dense_on` (module documentation, "Dense").
    dense: Dense,
    dense_on: bool,
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
            dense: Dense::new(),
            dense_on: false,
            filter: Vec::new(),
            filter_mask: 0,
        };
        index.reset(0, None);
        index
    }

    /// Empties the index (keeping its storage) and sizes the filter for
    /// about `keys` keys. With `dense_bound` (the mark store numbers its
    /// objects below it, and the numbers fit), registering uses the side
    /// table by object number; otherwise the hashed shards. Exclusive
    /// access: no worker runs.
    pub(crate) fn reset(&mut self, keys: usize, dense_bound: Option<usize>) {
        for shard in self.shards.iter() {
            lock(shard).clear();
        }
        let bound = dense_bound.filter(|&b| {
            Dense::fits(b) && b <= keys.saturating_mul(DENSE_PER_KEY).max(DENSE_ALWAYS)
        });
        self.dense_on = bound.is_some();
        self.dense.reset(bound.unwrap_or(0));
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

    /// Makes room for `additional` more entries registered by `register`
    /// (the pending entries before a `register` step). Exclusive access.
    pub(crate) fn reserve(&mut self, additional: usize) {
        if self.dense_on {
            self.dense.reserve(additional);
        }
    }

    /// Says that every entry registered since the last reset was taken (the
    /// workers' released count equals their registered count), so that the
    /// next reset need not clear the dense table. Exclusive access.
    pub(crate) fn all_taken(&mut self) {
        self.dense.all_taken();
    }

    /// Registers `value` as waiting for `key`: inserts the entry, then sets
    /// the key's filter bit. The caller then fences ([`fence`]) and checks
    /// whether `key` is marked (module documentation).
    pub(crate) fn insert(&self, key: ObjRef, value: ObjRef) {
        lock(&self.shards[shard_of(key)]).insert(key.word(), value.word());
        let (word, bit) = self.filter_bit(key);
        // Ordered before the caller's check of the key's mark by the SeqCst
        // fence that follows (see `fence`), which pairs with the marker's
        // fence between its mark and its `may_hold`.
        self.set_filter(word, bit);
    }

    /// Registers the entries `(key, value)` of `entries` whose key is not
    /// `marked` while no worker marks, and appends the values of the others
    /// to `ready`; returns how many it registered. Each run of filter bits
    /// in one word is set with one `fetch_or`. With the dense table, in one
    /// pass, each entry goes in by its key's number (`number`: the mark
    /// store's `dense_index`), in ids reserved before the step
    /// ([`KeyIndex::reserve`]: the ids of entries found ready stay unused,
    /// linked from no head); `alone` says that no other thread registers in
    /// this step (one worker), so that the table's heads need no atomic
    /// swap. Otherwise the entries with unmarked keys are kept in
    /// `entries`, and each run of keys in one shard goes in under one
    /// lock; when the runs are short (keys scattered over the heap: judged
    /// on the first entries), the entries are first grouped by shard into
    /// `scratch` (a stable counting sort: each key's entries keep their
    /// order), so that each shard is locked once.
    pub(crate) fn register(
        &self,
        entries: &mut Vec<(ObjRef, ObjRef)>,
        marked: impl Fn(ObjRef) -> bool,
        number: impl Fn(ObjRef) -> Option<usize>,
        alone: bool,
        ready: &mut Vec<ObjRef>,
        scratch: &mut Vec<(ObjRef, ObjRef)>,
    ) -> usize {
        let mut word = usize::MAX;
        let mut bits = 0;
        // The filter covers the shards only: the dense table's heads are
        // their own test (one load each).
        let mut filter = |key| {
            let (w, b) = self.filter_bit(key);
            if w != word {
                self.set_filter(word, bits);
                (word, bits) = (w, 0);
            }
            bits |= b;
        };
        let registered = if self.dense_on {
            // One pass: each entry's mark, then the entry and its filter bit.
            let mut id = self.dense.claim(entries.len());
            let first = id;
            for &(key, value) in entries.iter() {
                if marked(key) {
                    ready.push(value);
                    continue;
                }
                self.dense
                    .insert(id, number(key).expect(NUMBERED), value.word(), alone);
                id += 1;
            }
            id - first
        } else {
            entries.retain(|&(key, value)| {
                let waits = !marked(key);
                if !waits {
                    ready.push(value);
                }
                waits
            });
            self.insert_all_hashed(entries, scratch);
            for &(key, _) in entries.iter() {
                filter(key);
            }
            entries.len()
        };
        self.set_filter(word, bits);
        registered
    }

    /// `register`'s shards: each run of keys in one shard under one lock.
    fn insert_all_hashed(&self, entries: &[(ObjRef, ObjRef)], scratch: &mut Vec<(ObjRef, ObjRef)>) {
        let sample = &entries[..entries.len().min(RUN_SAMPLE)];
        let runs = 1 + sample
            .windows(2)
            .filter(|w| shard_of(w[0].0) != shard_of(w[1].0))
            .count();
        let grouped = if runs.saturating_mul(SHORT_RUN) > sample.len() {
            group_by_shard(entries, scratch);
            &scratch[..]
        } else {
            entries
        };
        let mut rest = grouped;
        while let Some(&(first, _)) = rest.first() {
            let s = shard_of(first);
            let run = rest
                .iter()
                .position(|&(k, _)| shard_of(k) != s)
                .unwrap_or(rest.len());
            let mut shard = lock(&self.shards[s]);
            for &(key, value) in &rest[..run] {
                shard.insert(key.word(), value.word());
            }
            drop(shard);
            rest = &rest[run..];
        }
    }

    /// Sets `bits` in filter word `word` (nothing for `usize::MAX`).
    fn set_filter(&self, word: usize, bits: u64) {
        if let Some(w) = self.filter.get(word) {
            // Relaxed: published to the steps that read the filter by the
            // pool's hand-off between steps (`register`), or ordered by
            // the fences of the shared protocol (`insert`).
            w.fetch_or(bits, Ordering::Relaxed);
        }
    }

    /// The index, read-only, for the steps that mark without registering:
    /// exclusive access now (no worker runs), shared by the workers while
    /// the view lives. Allocates the view's table of shards (one pointer per
    /// shard).
    pub(crate) fn freeze(&mut self) -> Frozen<'_> {
        Frozen {
            shards: self.shards.iter_mut().map(|s| &*get_mut(s)).collect(),
            dense: self.dense_on.then_some(&self.dense),
            filter: &self.filter,
            filter_mask: self.filter_mask,
        }
    }

    /// Whether `key` may have waiting entries (`false` is certain): always
    /// with the dense table (whose head [`KeyIndex::take`] reads first),
    /// else the filter's answer. The caller has marked `key` and fenced
    /// since ([`fence`]).
    #[inline]
    pub(crate) fn may_hold(&self, key: ObjRef) -> bool {
        self.dense_on || self.filtered(key)
    }

    /// Whether `key`'s filter bit is set: it may have entries in the shards.
    #[inline]
    fn filtered(&self, key: ObjRef) -> bool {
        let (word, bit) = self.filter_bit(key);
        // Relaxed: the caller's SeqCst fence (after its mark) pairs with the
        // registrant's fence (after its `insert`); see the module docs.
        self.filter[word].load(Ordering::Relaxed) & bit != 0
    }

    /// Takes every entry waiting for `key` (numbered `number` by the mark
    /// store), appending their values to `out`; returns how many. Each entry
    /// is taken by one call only: from the dense table (entries of earlier
    /// `register` steps) by a swap, from the shards (if the key's filter bit
    /// is set) under the lock. The caller has fenced since its mark or its
    /// insert ([`fence`]).
    pub(crate) fn take(&self, key: ObjRef, number: Option<usize>, out: &mut Vec<ObjRef>) -> usize {
        let before = out.len();
        if self.dense_on {
            self.dense
                .take(number.expect(NUMBERED), |v| out.push(value(v)));
        }
        if self.filtered(key) {
            lock(&self.shards[shard_of(key)]).take(key.word(), |v| out.push(value(v)));
        }
        out.len() - before
    }

    /// Whether registering uses the dense table.
    #[cfg(test)]
    pub(crate) fn is_dense(&self) -> bool {
        self.dense_on
    }

    /// Entries registered and not taken, over every shard.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.dense.waiting() + self.shards.iter().map(|s| lock(s).waiting()).sum::<usize>()
    }

    /// The filter word and bit of `key`.
    #[inline]
    fn filter_bit(&self, key: ObjRef) -> (usize, u64) {
        filter_bit(key, self.filter_mask)
    }
}
