//! The dense key index: for a mark store that numbers its objects densely
//! ([`MarkStore::dense_index`](stealmark_model::MarkStore::dense_index)), a
//! side table with one word per object number, holding one plus the id of
//! the newest entry waiting for that object (0: none), and the entries
//! `(value, next older entry of the same key)` in arrays indexed by id.
//!
//! Registering an entry is a few stores and one atomic swap of the key's
//! head (two workers may register entries for the same key at once);
//! looking a key up is one load of its head; taking a key's entries (the
//! shared protocol) is one swap of its head to 0, so each list is taken
//! whole by one caller. Entry ids are never reused within a collection, so
//! a head swapped out cannot come back (no ABA).
//!
//! Entries are written only in a `register` step, into a range of ids each
//! worker claims with one `fetch_add`, after the coordinator reserved room
//! for every pending entry ([`Dense::reserve`], exclusive access); the
//! steps that read them start after the pool's hand-off, which publishes
//! every store of the `register` step. So every access is `Relaxed`: the
//! swaps need atomicity only, not ordering.
//!
//! The head table is allocated zeroed (untouched pages cost no memory and
//! no time) and kept from one collection to the next; [`Dense::reset`]
//! clears only the heads the previous collection wrote (each entry records
//! its key's number), so a collection costs time in its entries, not in
//! the heap's size.

#[cfg(loom)]
use loom::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

#[cfg(not(loom))]
use crate::zeroed::zeroed;

/// No entry (a head or a `next` link).
const NONE: u32 = 0;

/// Values waiting for their keys, by the keys' dense numbers; see the
/// module documentation.
pub(super) struct Dense {
    /// Per object number: 1 + the id of its newest entry, or [`NONE`].
    heads: Box<[AtomicU32]>,
    /// The entries, by id.
    entries: Vec<Entry>,
    /// Entry ids claimed so far.
    used: AtomicUsize,
    /// Whether some head may be set: room was reserved since the last
    /// reset and [`Dense::all_taken`] was not said since.
    dirty: bool,
}

/// One waiting value: 16 bytes, so that registering writes one stream and
/// a lookup reads one line per entry.
struct Entry {
    /// The value's reference word.
    value: AtomicUsize,
    /// 1 + the id of the next older entry of the same key, or [`NONE`].
    next: AtomicU32,
    /// The key's number (to clear its head at reset).
    key: AtomicU32,
}

impl Dense {
    /// An empty index for no objects.
    pub(super) fn new() -> Dense {
        Dense {
            heads: zeroed(0),
            entries: Vec::new(),
            used: AtomicUsize::new(0),
            dirty: false,
        }
    }

    /// Whether objects numbered below `bound` fit (numbers and entry ids
    /// are `u32`s, with one value kept for [`NONE`]).
    pub(super) fn fits(bound: usize) -> bool {
        bound < u32::MAX as usize
    }

    /// Empties the index for objects numbered below `bound` (which
    /// [`Dense::fits`]): clears the heads the entries wrote (none when
    /// every entry was taken), or allocates a larger zeroed table.
    /// Exclusive access.
    pub(super) fn reset(&mut self, bound: usize) {
        // Relaxed: exclusive access (loom's atomics have no `get_mut`).
        let used = self.used.swap(0, Ordering::Relaxed);
        let dirty = std::mem::replace(&mut self.dirty, false);
        if bound > self.heads.len() {
            self.heads = zeroed(bound);
        } else if dirty {
            for e in &self.entries[..used] {
                // Relaxed: exclusive access; the pool's hand-off publishes.
                // Most heads were cleared by whoever took their entries:
                // read before writing, so that their lines stay clean.
                let head = &self.heads[e.key.load(Ordering::Relaxed) as usize];
                if head.load(Ordering::Relaxed) != NONE {
                    head.store(NONE, Ordering::Relaxed);
                }
            }
        }
    }

    /// Says that every entry registered since the last reset was taken,
    /// so every head is clear: the next reset has nothing to clear.
    /// Exclusive access.
    pub(super) fn all_taken(&mut self) {
        self.dirty = false;
    }

    /// Makes room for `additional` more entries. Exclusive access.
    pub(super) fn reserve(&mut self, additional: usize) {
        self.dirty = true;
        // Relaxed: exclusive access.
        let want = self.used.load(Ordering::Relaxed) + additional;
        assert!(
            want < u32::MAX as usize,
            "fewer than 2^32 - 1 waiting ephemerons in one collection"
        );
        if want > self.entries.len() {
            self.entries.resize_with(want, || Entry {
                value: AtomicUsize::new(0),
                next: AtomicU32::new(NONE),
                key: AtomicU32::new(0),
            });
        }
    }

    /// Claims `n` entry ids for one worker's entries; returns the first.
    /// Other workers may claim at the same time.
    ///
    /// # Panics
    ///
    /// If fewer than `n` more entries were reserved.
    pub(super) fn claim(&self, n: usize) -> usize {
        // Relaxed: the claim needs atomicity only; the entries are read
        // after the pool's hand-off.
        let base = self.used.fetch_add(n, Ordering::Relaxed);
        assert!(
            base + n <= self.entries.len(),
            "the coordinator reserved room for every pending entry"
        );
        base
    }

    /// Writes entry `id` (claimed by this worker): `value` waits for object
    /// `key`. Unless `alone`, other workers may insert at the same time;
    /// nobody reads until the step ends. `alone` says that no other thread
    /// inserts during this step (a collection with one worker): the key's
    /// head is then read and written with two plain accesses instead of a
    /// swap, the locked instruction that dominated registering. Were the
    /// promise broken, entries could be lost (values not traced), never
    /// memory safety.
    ///
    /// # Panics
    ///
    /// If `key` is past the bound given to [`Dense::reset`].
    #[inline]
    pub(super) fn insert(&self, id: usize, key: usize, value: usize, alone: bool) {
        // Relaxed, all of them: each id is this worker's alone, and the
        // heads' swaps need atomicity only (two workers may link entries
        // for one key); readers come after the pool's hand-off.
        let head = &self.heads[key];
        let e = &self.entries[id];
        e.value.store(value, Ordering::Relaxed);
        e.key.store(key as u32, Ordering::Relaxed);
        let old = if alone {
            let old = head.load(Ordering::Relaxed);
            head.store(id as u32 + 1, Ordering::Relaxed);
            old
        } else {
            head.swap(id as u32 + 1, Ordering::Relaxed)
        };
        e.next.store(old, Ordering::Relaxed);
    }

    /// Calls `f` with each value waiting for object `key`, newest first,
    /// and empties the key's list with plain accesses: for the frozen view,
    /// in which only the worker that marked `key` looks it up, once (no
    /// entry for a marked key is registered later: registering re-reads the
    /// key's mark). `reset` then finds the head already clear.
    #[inline(always)]
    pub(super) fn take_marked(&self, key: usize, f: impl FnMut(usize)) {
        let head = &self.heads[key];
        // Relaxed: written in an earlier step, published by the hand-off;
        // no other worker reads or writes this head in this step.
        let first = head.load(Ordering::Relaxed);
        if first != NONE {
            head.store(NONE, Ordering::Relaxed);
            self.walk(first, f);
        }
    }

    /// Removes every entry waiting for object `key` and calls `f` with each
    /// value, newest first. Each entry is taken by one call only (the swap).
    /// Other workers may take at the same time, but nobody inserts: a head
    /// read empty stays empty, so it needs no swap.
    #[inline]
    pub(super) fn take(&self, key: usize, f: impl FnMut(usize)) {
        let head = &self.heads[key];
        // Relaxed: the entries were written in an earlier step (published
        // by the hand-off); the swap's atomicity alone makes it exactly once.
        if head.load(Ordering::Relaxed) != NONE {
            self.walk(head.swap(NONE, Ordering::Relaxed), f);
        }
    }

    /// Calls `f` with the value of entry `head - 1` and of each older one
    /// linked from it.
    #[inline(always)]
    fn walk(&self, mut head: u32, mut f: impl FnMut(usize)) {
        while head != NONE {
            let e = &self.entries[head as usize - 1];
            // Relaxed: written in an earlier step, published by the hand-off.
            f(e.value.load(Ordering::Relaxed));
            head = e.next.load(Ordering::Relaxed);
        }
    }

    /// Entries not yet taken.
    #[cfg(test)]
    pub(super) fn waiting(&self) -> usize {
        let mut n = 0;
        for h in self.heads.iter() {
            self.walk(h.load(Ordering::Relaxed), |_| n += 1);
        }
        n
    }
}

/// A table of `n` zeroed heads (loom's atomics are not `u32`s in memory;
/// in every other build the table is allocated zeroed, `crate::zeroed`).
#[cfg(loom)]
fn zeroed(n: usize) -> Box<[AtomicU32]> {
    (0..n).map(|_| AtomicU32::new(NONE)).collect()
}
