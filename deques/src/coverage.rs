//! Branch counters for the loom models (`--cfg loom` only).
//!
//! The deques call [`hit`] on the branches that a loom model must reach to
//! check anything interesting (a CAS that lost a race, a steal that read a
//! retired array, a tag that wrapped, ...). A model runs its executions,
//! then calls [`take`] and asserts that each risky branch it targets was hit
//! at least once: a model that never reaches a branch proves nothing about
//! it.
//!
//! The counters are thread-local: loom runs every simulated thread of a
//! model as a coroutine on the test's own OS thread, so one test's counts
//! are not mixed with another test's, even when the test harness runs tests
//! in parallel. They are plain cells, not loom atomics, so counting adds no
//! interleavings for loom to explore.

use std::cell::RefCell;

macro_rules! branches {
    ($($(#[doc = $doc:literal])* $name:ident,)*) => {
        /// A branch that a loom model may need to reach.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Branch {
            $($(#[doc = $doc])* $name,)*
        }

        impl Branch {
            /// Every branch, in declaration order.
            pub const ALL: &'static [Branch] = &[$(Branch::$name,)*];
        }
    };
}

branches! {
    // Arrays and reclamation (buffer.rs).
    /// A thief read a slot of an array that the owner had already replaced
    /// (grown or shrunk) during its steal.
    ThiefReadRetiredArray,
    /// A retired array was freed (by crossbeam-epoch, `quiesce` or drop).
    ArrayFreed,
    /// An array was freed after a thief had read it after its retirement:
    /// the reclamation waited for that thief.
    FreedArrayAThiefReadAfterRetire,

    // StealHalf (steal_half.rs).
    /// A thief's CAS on the range word lost a race.
    ShStealAborted,
    /// A steal succeeded on a range written by a different thief thread,
    /// taking more than one item (chained thieves).
    ShChainedStealOfSeveral,
    /// A steal clamped its count to the `bottom` it read (to nothing, for a
    /// range of one slot left at the bottom with no item in it yet).
    ShClaimClamped,
    /// A thief saw no item above its new top and left an optimistic range
    /// of one slot at the bottom.
    ShOptimisticRange,
    /// A successful `steal_half` copied from an array that the owner
    /// replaced during the steal.
    ShStealHalfFromRetiredArray,
    /// The owner popped without a CAS.
    ShPopWithoutCas,
    /// The owner's pop CAS lost to a thief and retried.
    ShPopCasRetried,
    /// The owner re-armed after seeing a thief's word.
    ShRearmAfterSteal,
    /// The owner's re-arm CAS lost to a thief and retried.
    ShRearmRetried,
    /// A pop found the deque emptied by thieves.
    ShPopFoundEmptied,
    /// An owner CAS wrapped the 30-bit tag.
    ShTagWrapped,
    /// A steal moved `top` across the 2^28 wrap of the word's top field.
    ShTopFieldWrapped,
    /// A push moved `bottom` across the wrap of the full index (usize).
    ShIndexWrapped,

    // Chase-Lev (chase_lev.rs).
    /// A thief's CAS on `top` lost a race.
    ClStealAborted,
    /// The owner won the race for the last item.
    ClLastItemWon,
    /// The owner lost the race for the last item.
    ClLastItemLost,
    /// A successful steal read an array that the owner had replaced.
    ClStealFromRetiredArray,
    /// A push moved `bottom` from `isize::MAX` to `isize::MIN`.
    ClIndexWrapped,

    // ABP (abp.rs).
    /// A thief's CAS on `age` lost a race.
    AbpStealAborted,
    /// The owner lost the race for the last item.
    AbpLastItemLost,
    /// The owner won the race for the last item.
    AbpLastItemWon,
    /// A reset wrapped the 32-bit tag.
    AbpTagWrapped,

    // Idempotent StealHalf (idempotent.rs).
    /// A thief's CAS on the anchor lost a race.
    IdStealAborted,
    /// An owner store overwrote a thief's successful CAS (the stolen items
    /// became visible again: the duplicates' path).
    IdOwnerOverwroteSteal,
    /// A successful steal read an array that the owner had replaced.
    IdStealFromRetiredArray,
    /// A steal took more than one item with its CAS.
    IdStealOfSeveral,
    /// An owner store wrapped the 32-bit tag.
    IdTagWrapped,
    /// A steal moved the anchor's 32-bit head across its wrap.
    IdHeadFieldWrapped,
    /// A steal's CAS failed on the tag alone: a pop's store kept the head
    /// it had loaded. Pushes store no anchor, so the tag is all that stops
    /// a copy of a slot the owner popped, and may have pushed into again.
    IdStaleCopyRejected,
    /// A model saw an item come out twice (counted by the model, with
    /// [`note`], from what came out).
    IdDuplicateReturned,
    /// A model saw an owner's horizon cover an item it had popped (a theft
    /// announced before the owner's fence).
    IdHorizonSawTheft,
    /// A model saw a theft announced after an owner's horizon (the fence
    /// did not see it, and needed not to).
    IdTheftAfterHorizon,
    /// A model saw an item come out twice whose owner ticket was held, not
    /// yet settled, when a horizon saw the theft, and was settled after a
    /// later horizon that said it need not share: only the first horizon's
    /// [`flag`](crate::copies::Horizon::flag) kept it from a double count
    /// (a marker's prefetch FIFO).
    IdHeldAcrossHorizon,
}

thread_local! {
    /// Hits per branch, indexed by `Branch as usize`.
    static HITS: RefCell<Vec<u64>> = RefCell::new(vec![0; Branch::ALL.len()]);
}

/// Counts one hit of `branch` on this thread.
pub(crate) fn hit(branch: Branch) {
    HITS.with(|hits| hits.borrow_mut()[branch as usize] += 1);
}

/// Counts a hit of `branch` from a model: for what only the model can see,
/// such as an item that came out twice.
pub fn note(branch: Branch) {
    hit(branch);
}

/// The hits counted on this thread since the last call, by branch; resets
/// them.
pub fn take() -> Hits {
    HITS.with(|hits| {
        Hits(std::mem::replace(
            &mut *hits.borrow_mut(),
            vec![0; Branch::ALL.len()],
        ))
    })
}

/// Hits per branch, from [`take`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hits(Vec<u64>);

impl Hits {
    /// The hits of `branch`.
    pub fn get(&self, branch: Branch) -> u64 {
        self.0[branch as usize]
    }

    /// Panics, listing every count, unless each of `branches` was hit at
    /// least once.
    pub fn assert_reached(&self, model: &str, branches: &[Branch]) {
        let missed: Vec<Branch> = branches
            .iter()
            .copied()
            .filter(|&b| self.get(b) == 0)
            .collect();
        assert!(
            missed.is_empty(),
            "{model}: the model never reached {missed:?}; hits: {self}"
        );
    }
}

impl std::fmt::Display for Hits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut first = true;
        for &b in Branch::ALL {
            let n = self.get(b);
            if n > 0 {
                write!(f, "{}{b:?} {n}", if first { "" } else { ", " })?;
                first = false;
            }
        }
        if first {
            write!(f, "none")?;
        }
        Ok(())
    }
}

/// Makes crossbeam-epoch (built on loom's atomics) try to advance the
/// global epoch and run deferred frees: pins and flushes `times` times. A
/// retired array is freed after two advances, and only once every thread
/// that was pinned when it was retired has unpinned, so a model that calls
/// this after a resize lets loom explore frees racing with steals.
pub fn collect_epoch(times: usize) {
    for _ in 0..times {
        crossbeam_epoch::pin().flush();
    }
}
