//! The holders whose non-strong slots have been recorded, for deques that
//! deliver an item more than once (`idempotent`).
//!
//! With such a deque a grey object may be scanned twice, by two workers or
//! by one. Marking is idempotent (only the worker whose `try_mark` wins
//! pushes a target), but the records of non-strong slots are not: a holder
//! scanned twice would report its cleared slots twice, register its
//! ephemerons twice and offer its soft referents to the policy twice. So,
//! with such a deque only, a worker that has scanned an object with
//! non-strong slots (or is about to open a large array in chunks) claims the
//! object here first; the loser of a claim drops what it recorded. Objects
//! with only strong slots, the vast majority, never come here.
//!
//! The same set type also holds the claims of the live count
//! (`Engine::counted`): with such a deque and more than one worker, an
//! object whose deque ticket says it may have been scanned by another
//! worker too is counted live only by the scan that claims it first
//! (`worker::counting`).
//!
//! It is a set of object words in shards, each a hash set behind a mutex:
//! claims are rare (one per such holder and collection; for the count, one
//! per object near a theft) and short. The sets keep their capacity from
//! one collection to the next.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;
use stealmark_model::ObjRef;

/// Shards of the set (a power of two).
const SHARDS: usize = 64;

/// A multiplicative (Fibonacci) hash of one word: object words are aligned
/// and spread, so one multiplication mixes them enough.
#[derive(Default)]
struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01B3);
        }
    }

    fn write_usize(&mut self, w: usize) {
        self.0 = (w as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type WordSet = HashSet<usize, BuildHasherDefault<WordHasher>>;

/// The objects claimed during one collection (holders, or live counts).
pub(crate) struct Holders {
    shards: Box<[CachePadded<Mutex<WordSet>>]>,
}

impl Default for Holders {
    fn default() -> Holders {
        Holders {
            shards: (0..SHARDS).map(|_| CachePadded::default()).collect(),
        }
    }
}

impl Holders {
    /// Claims `holder`: `true` for the first claim of this collection,
    /// `false` for every later one.
    pub(crate) fn claim(&self, holder: ObjRef) -> bool {
        let w = holder.word();
        // The shard from the high bits of the hash (the low bits pick the
        // bucket inside the shard's set).
        let h = (w as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let shard = (h >> (64 - SHARDS.trailing_zeros())) as usize;
        self.shards[shard].lock().insert(w)
    }

    /// Forgets every claim, keeping the capacity (between collections, when
    /// no worker runs).
    pub(crate) fn clear(&mut self) {
        for s in self.shards.iter_mut() {
            s.get_mut().clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Holders;
    use stealmark_model::ObjRef;

    #[test]
    fn the_first_claim_of_each_holder_wins_until_cleared() {
        let mut h = Holders::default();
        // Under Miri, fewer (over the 64 shards still).
        let n = if cfg!(miri) { 100 } else { 1000 };
        let objs: Vec<ObjRef> = (0..n).map(ObjRef::from_index).collect();
        for &o in &objs {
            assert!(h.claim(o));
        }
        for &o in &objs {
            assert!(!h.claim(o));
        }
        h.clear();
        assert!(h.claim(objs[7]));
    }

    #[test]
    fn concurrent_claims_have_one_winner_each() {
        let h = Holders::default();
        let n = if cfg!(miri) { 150 } else { 2000 };
        let objs: Vec<ObjRef> = (0..n).map(ObjRef::from_index).collect();
        let wins: usize = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| s.spawn(|| objs.iter().filter(|&&o| h.claim(o)).count()))
                .collect();
            handles.into_iter().map(|t| t.join().unwrap()).sum()
        });
        assert_eq!(wins, objs.len());
    }
}
