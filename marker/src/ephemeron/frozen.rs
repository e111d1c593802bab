//! The key index's read-only view, for the steps that mark without
//! registering (the module documentation of `crate::ephemeron`, "Frozen").

use stealmark_model::ObjRef;

#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, Ordering};

use super::dense::Dense;
use super::place::{filter_bit, shard_of, value, NUMBERED};
use super::shard::Shard;

/// The key index, read-only: see the module documentation ("Frozen").
pub(crate) struct Frozen<'a> {
    pub(super) shards: Vec<&'a Shard>,
    /// The dense table, when registering used it.
    pub(super) dense: Option<&'a Dense>,
    pub(super) filter: &'a [AtomicU64],
    pub(super) filter_mask: usize,
}

impl Frozen<'_> {
    /// Whether `key` may have waiting entries (`false` is certain): always
    /// with the dense table (whose head [`Frozen::lookup`] reads first; the
    /// filter is not set for it), else the filter's answer.
    #[inline]
    pub(crate) fn may_hold(&self, key: ObjRef) -> bool {
        if self.dense.is_some() {
            return true;
        }
        let (word, bit) = filter_bit(key, self.filter_mask);
        // Relaxed: the filter does not change while the view lives; the
        // pool's hand-off published it.
        self.filter[word].load(Ordering::Relaxed) & bit != 0
    }

    /// Appends the values waiting for `key` (numbered `number` by the mark
    /// store) to `out`; returns how many. The caller is the worker that
    /// marked `key`, so no other worker looks the key up while the view
    /// lives; with the dense table the key's list is emptied as well (no
    /// entry for a marked key is registered later).
    #[inline]
    pub(crate) fn lookup(
        &self,
        key: ObjRef,
        number: Option<usize>,
        out: &mut Vec<ObjRef>,
    ) -> usize {
        let before = out.len();
        match self.dense {
            Some(dense) => dense.take_marked(number.expect(NUMBERED), |v| out.push(value(v))),
            None => self.shards[shard_of(key)].get(key.word(), |v| out.push(value(v))),
        }
        out.len() - before
    }
}
