//! Shared overflow storage for bounded deques.
//!
//! When a worker's bounded (`abp`) deque is full, it moves the item that did
//! not fit, plus half of its deque, here; any worker whose deque runs empty
//! takes a batch back before it tries to steal. Because the storage is
//! shared, overflowed work stays available to every worker — unlike a
//! private overflow stack — and the termination protocol checks it before a
//! worker goes idle. Its buffer keeps its capacity between phases, so a
//! steady state allocates nothing.

use std::sync::atomic::{AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;
use stealmark_deques::Owner;

/// A lock-protected stack of mark-stack words shared by all workers.
#[derive(Default)]
pub(crate) struct Overflow {
    items: Mutex<Vec<usize>>,
    /// The length of `items`, readable without the lock (a hint).
    len: CachePadded<AtomicUsize>,
}

impl Overflow {
    /// A hint: whether there are items. Exact under the lock.
    #[inline]
    pub(crate) fn len_hint(&self) -> usize {
        // Relaxed: a hint; a worker acts on it only under the lock.
        self.len.load(Ordering::Relaxed)
    }

    /// Moves `item` and up to `spill` more items from the bottom of `owner`
    /// into the shared storage. Returns the number of items moved.
    pub(crate) fn spill<O: Owner>(&self, item: usize, owner: &mut O, spill: usize) -> usize {
        let mut items = self.items.lock();
        items.push(item);
        let mut moved = 1;
        while moved <= spill {
            match owner.pop() {
                Some(w) => {
                    items.push(w);
                    moved += 1;
                }
                None => break,
            }
        }
        self.len.store(items.len(), Ordering::Relaxed);
        moved
    }

    /// Moves up to `max` items into `owner` (which must have room for them).
    /// Returns the number moved.
    pub(crate) fn take<O: Owner>(&self, owner: &mut O, max: usize) -> usize {
        if self.len_hint() == 0 {
            return 0;
        }
        let mut items = self.items.lock();
        let mut moved = 0;
        while moved < max {
            let Some(w) = items.pop() else { break };
            if let Err(w) = owner.push(w) {
                items.push(w);
                break;
            }
            moved += 1;
        }
        self.len.store(items.len(), Ordering::Relaxed);
        moved
    }

    /// Whether the storage is empty, under the lock (the check the
    /// termination protocol relies on).
    pub(crate) fn is_empty_locked(&self) -> bool {
        self.items.lock().is_empty()
    }

    /// Empties the storage (between phases; it is empty after a complete one).
    pub(crate) fn clear(&self) {
        self.items.lock().clear();
        self.len.store(0, Ordering::Relaxed);
    }
}
