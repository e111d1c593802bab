//! Work-stealing deques over word-sized items, for parallel marking.
//!
//! Every deque here comes as a pair of handles:
//!
//! - an **owner** handle ([`Owner`]): `Send` but not `Sync`, it pushes and
//!   pops at the bottom, like a GC worker's private mark stack;
//! - a **thief** handle ([`Thief`]): `Clone + Send + Sync`, it steals from
//!   the top.
//!
//! Items are plain `usize` words (an object reference or a tagged word). Every
//! slot is stored as an atomic word, so there is no data race anywhere, not
//! even a benign one: the crate's tests pass under Miri with default settings
//! (see "How it is checked").
//!
//! The deques:
//!
//! - [`abp`]: the bounded Arora-Blumofe-Plaxton deque with a stamped top;
//! - [`chase_lev`]: the Chase-Lev dynamic circular deque, with the C11
//!   orderings of Lê et al. (PPoPP 2013);
//! - [`steal_half`]: the Hendler-Shavit extended deque, whose thieves take
//!   half of the victim's items with one CAS;
//!
//! and, with the `baselines` feature (for comparisons and research; a
//! runtime needs none of them):
//!
//! - `idempotent`: a steal-half deque whose owner pushes and pops without
//!   any fence or CAS, at the price of returning an item **at least once**
//!   (possibly twice) instead of exactly once; for idempotent work such as
//!   marking;
//! - `locked`: a `parking_lot::Mutex<VecDeque>` baseline;
//! - `peer`: crossbeam-deque behind the same traits, the baseline we
//!   compare against.
//!
//! Every handle keeps cheap counters ([`OwnerStats`], [`ThiefStats`]).
//!
//! [`DequeKind`] names every deque kind (`steal-half`, `chase-lev-q`, ...);
//! [`DequeKind::dispatch`] turns a kind chosen at run time into a call of a
//! [`DequeVisitor`]'s method generic over the [`WorkDeque`] type, which is
//! how the marker, the balancing models and the command line pick a deque.
//!
//! The growable deques come in two reclamation flavours: [`chase_lev::ChaseLev`]
//! and [`steal_half::StealHalf`] free retired arrays with crossbeam-epoch (each
//! steal pins); [`chase_lev::ChaseLevQuiescent`] and
//! [`steal_half::StealHalfQuiescent`] pin nothing and keep retired arrays until
//! the deque is dropped or the owner frees them at a quiescent point with the
//! `unsafe` [`Owner::quiesce`]. Each module's documentation gives its
//! algorithm, its memory orderings and the reasoning behind them.
//!
//! # Thread safety of the handles
//!
//! (The examples below name the `baselines` kinds too.)
//!
//! Thief handles are `Clone + Send + Sync` (the [`Thief`] trait requires it)
//! and owner handles are `Send` ([`Owner`] requires it):
//!
//! ```
//! use stealmark_deques::{abp, chase_lev, idempotent, locked, peer, steal_half};
//! fn thief<T: Clone + Send + Sync>() {}
//! fn owner<T: Send>() {}
//! thief::<abp::AbpThief>();
//! thief::<chase_lev::ChaseLevThief<chase_lev::Epoch>>();
//! thief::<chase_lev::ChaseLevThief<chase_lev::Quiescent>>();
//! thief::<steal_half::StealHalfThief<steal_half::Epoch>>();
//! thief::<steal_half::StealHalfThief<steal_half::Quiescent>>();
//! thief::<idempotent::IdempotentThief<idempotent::Epoch>>();
//! thief::<locked::LockedThief>();
//! thief::<peer::CrossbeamThief>();
//! owner::<abp::AbpOwner>();
//! owner::<chase_lev::ChaseLevOwner<chase_lev::Epoch>>();
//! owner::<steal_half::StealHalfOwner<steal_half::Quiescent>>();
//! owner::<idempotent::IdempotentOwner<idempotent::Epoch>>();
//! owner::<locked::LockedOwner>();
//! owner::<peer::CrossbeamOwner>();
//! ```
//!
//! An owner handle is not `Sync`: only one thread at a time may push and
//! pop. Each of these fails to compile (one block per owner type, so each
//! must fail on its own):
//!
//! ```compile_fail,E0277
//! fn sync<T: Sync>() {}
//! sync::<stealmark_deques::abp::AbpOwner>();
//! ```
//!
//! ```compile_fail,E0277
//! use stealmark_deques::chase_lev::{ChaseLevOwner, Epoch};
//! fn sync<T: Sync>() {}
//! sync::<ChaseLevOwner<Epoch>>();
//! ```
//!
//! ```compile_fail,E0277
//! use stealmark_deques::chase_lev::{ChaseLevOwner, Quiescent};
//! fn sync<T: Sync>() {}
//! sync::<ChaseLevOwner<Quiescent>>();
//! ```
//!
//! ```compile_fail,E0277
//! use stealmark_deques::steal_half::{Epoch, StealHalfOwner};
//! fn sync<T: Sync>() {}
//! sync::<StealHalfOwner<Epoch>>();
//! ```
//!
//! ```compile_fail,E0277
//! use stealmark_deques::steal_half::{Quiescent, StealHalfOwner};
//! fn sync<T: Sync>() {}
//! sync::<StealHalfOwner<Quiescent>>();
//! ```
//!
//! ```compile_fail,E0277
//! use stealmark_deques::idempotent::{Epoch, IdempotentOwner};
//! fn sync<T: Sync>() {}
//! sync::<IdempotentOwner<Epoch>>();
//! ```
//!
//! ```compile_fail,E0277
//! fn sync<T: Sync>() {}
//! sync::<stealmark_deques::locked::LockedOwner>();
//! ```
//!
//! ```compile_fail,E0277
//! fn sync<T: Sync>() {}
//! sync::<stealmark_deques::peer::CrossbeamOwner>();
//! ```
//!
//! # How it is checked
//!
//! ```text
//! cargo test -p stealmark-deques                # model, stress, limits, unit, doc tests
//! LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom --cfg crossbeam_loom" \
//!     CARGO_TARGET_DIR=target/loom CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true \
//!     cargo test -p stealmark-deques --release --test loom
//! cargo +nightly miri test -p stealmark-deques  # default Stacked Borrows
//! ```
//!
//! The loom models count the branches they reach (a `doc(hidden)`,
//! `cfg(loom)`-only `coverage` module) and assert the risky ones; under loom
//! the epoch kinds run on crossbeam-epoch's loom build, and a freed array is
//! poisoned and checked against every access by loom's causality tracking.
//!
//! The Miri command passed (all test targets and doc tests; about 230 s of
//! tests on two cores) with nightly 1.97.0 (2026-05-19) and its Miri. Under Miri the tests shrink their
//! sizes (`cfg(miri)`), skip the crossbeam peer (whose slot reads are racy
//! by design), the 2^27-item limit tests and the near-wrap reruns, and the
//! epoch flavour keeps retired arrays until `quiesce` or
//! drop instead of calling crossbeam-epoch, whose internals fail Stacked
//! Borrows (crossbeam issue #545); everything the deques themselves do is
//! checked.

#![cfg_attr(not(loom), warn(missing_docs))]

// Under loom, crossbeam-epoch must be built on loom's atomics as well: its
// std build keeps global state across loom's executions and shares one
// thread-local participant among all the simulated threads.
#[cfg(all(loom, not(crossbeam_loom)))]
compile_error!("run the loom models with RUSTFLAGS=\"--cfg loom --cfg crossbeam_loom\"");

/// Counts a hit of the named `coverage::Branch` under `--cfg loom`;
/// expands to nothing otherwise.
macro_rules! hit {
    ($branch:ident) => {
        #[cfg(loom)]
        $crate::coverage::hit($crate::coverage::Branch::$branch);
    };
}

mod batch;
mod buffer;
pub mod copies;
#[cfg(loom)]
#[doc(hidden)]
pub mod coverage;
mod handle;
mod kind;
mod stats;
mod sync;

pub mod abp;
pub mod chase_lev;
#[cfg(feature = "baselines")]
pub mod idempotent;
#[cfg(feature = "baselines")]
pub mod locked;
#[cfg(feature = "baselines")]
pub mod peer;
pub mod steal_half;

use copies::{Horizon, Ticket};
pub use kind::{DequeKind, DequeVisitor, UnknownDequeKind};
pub use stats::{OwnerStats, ThiefStats};

/// The outcome of one steal attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Steal<T> {
    /// The victim looked empty.
    Empty,
    /// The steal succeeded. For a single steal this is the item; for a batch
    /// steal ([`Thief::steal_half`]) it is the number of items moved.
    Success(T),
    /// The steal lost a race (with the owner or another thief) and took
    /// nothing; trying again may succeed.
    Abort,
}

impl<T> Steal<T> {
    /// Returns the stolen value, if the steal succeeded.
    pub fn success(self) -> Option<T> {
        match self {
            Steal::Success(v) => Some(v),
            _ => None,
        }
    }
}

/// A work-stealing deque kind: a constructor of owner/thief handle pairs.
///
/// The marker is generic over this trait and monomorphises one engine per
/// deque kind, so the calls below inline into the mark loop.
pub trait WorkDeque: 'static {
    /// The owner handle.
    type Owner: Owner<Thief = Self::Thief>;
    /// The thief handle.
    type Thief: Thief<Owner = Self::Owner>;
    /// The kind's name and run-time tag: [`DequeKind::dispatch`] runs its
    /// visitor with `Self` for this kind.
    const KIND: DequeKind;
    /// Creates a deque. `capacity` is the fixed capacity of bounded deques and
    /// the initial capacity of growable ones (rounded up to a power of two).
    fn with_capacity(capacity: usize) -> (Self::Owner, Self::Thief);

    /// A test hook: like [`with_capacity`](WorkDeque::with_capacity), but
    /// every index and tag that wraps around starts `before_wrap` steps
    /// before its wrap point, so that tests and loom models reach the wraps
    /// in a few operations: the logical indices of the growable deques wrap
    /// after `before_wrap` pushes (StealHalf's 28-bit `top` field and full
    /// index, Chase-Lev's `isize` indices, the idempotent deque's 32-bit
    /// head and full index), and the tags after `before_wrap` tag bumps
    /// (StealHalf's owner CASes, ABP's resets to index 0, the idempotent
    /// deque's owner stores). Kinds with nothing that wraps (`locked`,
    /// `crossbeam`) ignore it. Every value is valid: a deque starts in a
    /// consistent state wherever its counters start, and behaves as one made
    /// by `with_capacity`.
    #[doc(hidden)]
    fn with_capacity_near_wrap(capacity: usize, before_wrap: usize) -> (Self::Owner, Self::Thief) {
        let _ = before_wrap;
        Self::with_capacity(capacity)
    }
}

/// The owner's end of a deque: push and pop at the bottom.
pub trait Owner: Send {
    /// The matching thief handle type.
    type Thief: Thief<Owner = Self>;
    /// Pushes an item at the bottom. A bounded deque gives the item back
    /// when it is full; a growable deque never does.
    fn push(&mut self, item: usize) -> Result<(), usize>;
    /// Pops the most recently pushed item still present, if any.
    fn pop(&mut self) -> Option<usize>;
    /// Pops like [`pop`](Owner::pop), with the item's [`Ticket`]: for a
    /// later [`horizon`](Owner::horizon) to say whether a thief may have
    /// taken the item too (see [`copies`]). Every ticket of an exactly-once
    /// kind is [`Ticket::ONLY`].
    #[inline(always)]
    fn pop_ticketed(&mut self) -> Option<(usize, Ticket)> {
        self.pop().map(|item| (item, Ticket::ONLY))
    }
    /// What the owner now knows of the thefts that may have raced its
    /// earlier pops: an item popped before this call may have another copy
    /// only if the result [`may_share`](Horizon::may_share) its ticket, or
    /// an earlier horizon's did. So every ticket not yet settled must be
    /// judged by each horizon taken after its pop: settle it now, or keep
    /// [`Horizon::flag`] of it (see [`copies`]). For the idempotent kind,
    /// one full fence and one load; for exactly-once kinds,
    /// [`Horizon::NONE`] and nothing else.
    #[inline(always)]
    fn horizon(&mut self) -> Horizon {
        Horizon::NONE
    }
    /// Pushes an item that may have another copy elsewhere (one taken by a
    /// single steal from a deque that delivers items more than once): its
    /// ticket, when popped, is marked stolen. [`push`](Owner::push) for
    /// exactly-once kinds.
    #[inline]
    fn push_copy(&mut self, item: usize) -> Result<(), usize> {
        self.push(item)
    }
    /// The number of items, as the owner sees it (exact when no thief runs).
    fn len(&self) -> usize;
    /// Whether the deque is empty, as the owner sees it.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// A new thief handle on this deque.
    fn thief(&self) -> Self::Thief;
    /// The owner's counters.
    fn stats(&self) -> &OwnerStats;
    /// Resets the owner's counters to zero.
    fn reset_stats(&mut self);
    /// Frees what the deque has retired so far, at a quiescent point (for
    /// example at the end of a mark phase, after every worker has returned).
    ///
    /// The growable deques ([`chase_lev`], [`steal_half`]) retire their old
    /// array on every resize; the quiescent-reclamation kinds
    /// ([`chase_lev::ChaseLevQuiescent`], [`steal_half::StealHalfQuiescent`])
    /// keep retired arrays until this call or until the deque is dropped.
    /// The epoch kinds hand them to crossbeam-epoch, so there is nothing left
    /// to free (except under Miri, where they keep them as the quiescent
    /// kinds do). The other deques retire nothing and do nothing here.
    ///
    /// # Safety
    ///
    /// No thief of this deque may be inside [`Thief::steal`] or
    /// [`Thief::steal_half`] with this deque as the victim during the call:
    /// every steal from it that started before the call has returned, and
    /// none starts before the call returns. A thief that is still inside a
    /// steal may be reading a retired array, which this call frees.
    unsafe fn quiesce(&mut self) {}
}

/// The thieves' end of a deque: steal from the top.
pub trait Thief: Clone + Send + Sync {
    /// The matching owner handle type.
    type Owner: Owner<Thief = Self>;
    /// Tries to steal one item from the top.
    fn steal(&self, stats: &mut ThiefStats) -> Steal<usize>;
    /// Tries to move up to half of this deque's items into `dest`, the
    /// thief's own deque. Returns the number of items moved.
    fn steal_half(&self, dest: &mut Self::Owner, stats: &mut ThiefStats) -> Steal<usize>;
    /// An estimate of the number of items, as a thief sees it now.
    fn len(&self) -> usize;
    /// Whether the deque looks empty to a thief now.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Steals up to `limit` items one at a time with `steal`, handing each to
/// `put` (which stores it in the thief's own deque, which must have room);
/// stops at the first steal that finds the victim empty or loses a race. The
/// batch steal of the deques that cannot take several items with one CAS
/// (ABP, Chase-Lev).
///
/// The batch counts as one steal in `stats`, as a StealHalf batch does: one
/// attempt; one success with `items_stolen += k` if it moved `k > 0` items;
/// one abort only if its first steal lost a race. The CAS counters add up
/// every CAS of the single steals.
fn steal_each(
    stats: &mut ThiefStats,
    limit: usize,
    mut steal: impl FnMut(&mut ThiefStats) -> Steal<usize>,
    mut put: impl FnMut(usize),
) -> Steal<usize> {
    if limit == 0 {
        return Steal::Empty;
    }
    let mut singles = ThiefStats::default();
    let mut moved = 0;
    let mut first_failure = Steal::Empty;
    while moved < limit {
        match steal(&mut singles) {
            Steal::Success(item) => {
                put(item);
                moved += 1;
            }
            failure => {
                first_failure = failure;
                break;
            }
        }
    }
    stats.steal_attempts += 1;
    stats.cas_attempted += singles.cas_attempted;
    stats.cas_succeeded += singles.cas_succeeded;
    if moved > 0 {
        stats.steal_successes += 1;
        stats.items_stolen += moved as u64;
        return Steal::Success(moved);
    }
    if first_failure == Steal::Abort {
        stats.steal_aborts += 1;
    }
    first_failure
}
