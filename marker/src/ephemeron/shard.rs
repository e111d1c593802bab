//! One shard of the key index: a map from key to the newest of its waiting
//! entries, and the older entries, linked per key. Always used under its
//! mutex.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

#[cfg(loom)]
pub(super) use loom::sync::Mutex;
#[cfg(not(loom))]
pub(super) use parking_lot::Mutex;

/// Locks a shard (the loom model's mutex returns a `Result`).
#[cfg(not(loom))]
#[inline]
pub(super) fn lock<T>(m: &Mutex<T>) -> parking_lot::MutexGuard<'_, T> {
    m.lock()
}

/// Locks a shard (the loom model's mutex returns a `Result`).
#[cfg(loom)]
pub(super) fn lock<T>(m: &Mutex<T>) -> loom::sync::MutexGuard<'_, T> {
    m.lock()
        .expect("no model thread panics while holding a shard")
}

/// A shard through exclusive access.
#[cfg(not(loom))]
pub(super) fn get_mut<T>(m: &mut Mutex<T>) -> &mut T {
    m.get_mut()
}

/// A shard through exclusive access.
#[cfg(loom)]
pub(super) fn get_mut<T>(m: &mut Mutex<T>) -> &mut T {
    m.get_mut()
        .expect("no model thread panics while holding a shard")
}

/// The end of a key's list of entries.
const NIL: u32 = u32::MAX;

/// Keys and their waiting entries.
#[derive(Default)]
pub(super) struct Shard {
    /// Key word to its newest entry `(value word, index in `older` of the
    /// next older entry of the same key, or NIL)`: a key with one entry
    /// (the common case: a table's keys are distinct) costs one map slot
    /// and nothing in `older`.
    heads: HashMap<usize, (usize, u32), BuildHasherDefault<KeyHasher>>,
    /// The older entries, `(value word, index of the next older or NIL)`.
    older: Vec<(usize, u32)>,
}

impl Shard {
    /// Adds an entry: `value` waits for `key`.
    pub(super) fn insert(&mut self, key: usize, value: usize) {
        match self.heads.entry(key) {
            Entry::Vacant(v) => {
                v.insert((value, NIL));
            }
            Entry::Occupied(mut o) => {
                let index = u32::try_from(self.older.len())
                    .ok()
                    .filter(|&i| i != NIL)
                    .expect("fewer than 2^32 - 1 waiting ephemerons per shard");
                self.older.push(*o.get());
                o.insert((value, index));
            }
        }
    }

    /// Removes `key` and calls `f` with each of its values, newest first.
    pub(super) fn take(&mut self, key: usize, f: impl FnMut(usize)) {
        if let Some(head) = self.heads.remove(&key) {
            self.walk(head, f);
        }
    }

    /// Calls `f` with each value waiting for `key`, newest first, leaving
    /// them there.
    pub(super) fn get(&self, key: usize, f: impl FnMut(usize)) {
        if let Some(&head) = self.heads.get(&key) {
            self.walk(head, f);
        }
    }

    /// Calls `f` with the value of `head` and of each older entry linked
    /// from it.
    fn walk(&self, head: (usize, u32), mut f: impl FnMut(usize)) {
        let (value, mut at) = head;
        f(value);
        while at != NIL {
            let (value, next) = self.older[at as usize];
            f(value);
            at = next;
        }
    }

    /// Entries not yet taken.
    #[cfg(test)]
    pub(super) fn waiting(&self) -> usize {
        let mut n = 0;
        for &head in self.heads.values() {
            self.walk(head, |_| n += 1);
        }
        n
    }

    /// Empties the shard, keeping its storage.
    pub(super) fn clear(&mut self) {
        self.heads.clear();
        self.older.clear();
    }
}

/// The map's hash of a key word: its word index in the low bits (so keys
/// that are neighbours in memory are neighbours in the table) and a mix of
/// the whole word in the top seven bits (the table's tag byte), so that
/// probing rarely compares a key it does not want.
#[derive(Default)]
pub(super) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn finish(&self) -> u64 {
        let w = self.0;
        let tag = w.wrapping_mul(0x9E37_79B9_7F4A_7C15) & (0x7F << 57);
        tag | ((w >> 3) & !(0x7F << 57))
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        // Only `usize` keys are hashed (`write_usize`); anything else still
        // gets a deterministic hash.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    #[inline]
    fn write_usize(&mut self, w: usize) {
        self.0 = w as u64;
    }
}
