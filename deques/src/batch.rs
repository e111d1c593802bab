//! What the two deques whose thieves take several items with one CAS
//! (StealHalf and the idempotent deque) do alike around their claims: a
//! single steal and a batch steal over the deque's own `claim`, the copy of
//! the claimed items into the thief's own deque, and the counting of a
//! claim's CAS in [`ThiefStats`].
//!
//! `batch_steals!` writes the two [`Thief`](crate::Thief) methods over
//! these functions, once for both deques.
//!
//! Each deque keeps its algorithm: what its claim loads, in which order,
//! how many items it takes, and its CAS with the orderings and their
//! pairings, all in its own module. Nothing here touches an atomic.

use crate::buffer::Buffer;
use crate::{Steal, ThiefStats};

/// The owner side of a batch steal: the deque that the stolen items are
/// copied into.
pub(crate) trait BatchOwner: crate::Owner {
    /// The owner's `bottom`: the index where the next item goes.
    fn bottom(&self) -> usize;

    /// Makes room for `extra` more items above `bottom`; returns the array
    /// to write them to.
    fn reserve(&mut self, extra: usize) -> &Buffer;

    /// Publishes `count` items written above `bottom` by a batch steal into
    /// this deque.
    fn commit(&mut self, count: usize);
}

/// The thief side of a deque whose claim takes up to `max` items from the
/// head with one CAS.
pub(crate) trait BatchThief {
    /// The owner handle of the same kind, which a batch steal fills.
    type Dest: BatchOwner;

    /// Claims up to `max` items with one CAS. `copy` receives the array,
    /// the index of the first claimed item and the count, and copies the
    /// items out before the CAS (a successful CAS proves the copy current);
    /// its result is returned with the count on success.
    fn claim<X>(
        &self,
        max: usize,
        stats: &mut ThiefStats,
        copy: impl FnOnce(&Buffer, usize, usize) -> X,
    ) -> Steal<(usize, X)>;
}

/// A single steal: a claim of one item, read out of the victim's array.
#[inline]
pub(crate) fn steal_one<T: BatchThief>(thief: &T, stats: &mut ThiefStats) -> Steal<usize> {
    match thief.claim(1, stats, |buffer, first, _| {
        buffer.thief_read(first as isize)
    }) {
        Steal::Success((_, item)) => Steal::Success(item),
        Steal::Empty => Steal::Empty,
        Steal::Abort => Steal::Abort,
    }
}

/// A batch steal into `dest`, another deque (of at most `max_capacity`
/// items) than the victim: one claim, whose items are copied straight into
/// `dest` above its bottom and committed there after the CAS succeeded.
/// Takes at most what `dest` can still hold, and nothing, as `Empty`, into a
/// full `dest`.
pub(crate) fn steal_into<T: BatchThief>(
    thief: &T,
    dest: &mut T::Dest,
    max_capacity: usize,
    stats: &mut ThiefStats,
) -> Steal<usize> {
    // `dest`'s own thieves only shrink it, so this room only grows.
    let room = max_capacity - crate::Owner::len(dest);
    if room == 0 {
        return Steal::Empty;
    }
    let result = thief.claim(room, stats, |buffer, first, count| {
        let base = dest.bottom();
        let target = dest.reserve(count);
        for i in 0..count {
            target.write(
                base.wrapping_add(i) as isize,
                buffer.thief_read(first.wrapping_add(i) as isize),
            );
        }
    });
    match result {
        Steal::Success((count, ())) => {
            dest.commit(count);
            Steal::Success(count)
        }
        Steal::Empty => Steal::Empty,
        Steal::Abort => Steal::Abort,
    }
}

/// Counts a claim whose CAS succeeded, taking `count` items, and returns
/// its result with the claim's `copied` items.
#[inline]
pub(crate) fn claimed<X>(stats: &mut ThiefStats, count: usize, copied: X) -> Steal<(usize, X)> {
    stats.cas_succeeded += 1;
    stats.steal_successes += 1;
    stats.items_stolen += count as u64;
    Steal::Success((count, copied))
}

/// Counts a claim whose CAS failed (it lost a race and took nothing).
#[inline]
pub(crate) fn aborted<X>(stats: &mut ThiefStats) -> Steal<X> {
    stats.steal_aborts += 1;
    Steal::Abort
}

/// Implements, inside `impl Thief for ...` of a thief handle that implements
/// [`BatchThief`] with `Dest = Self::Owner`, and whose handles share their
/// deque through the `Arc` field `inner`:
///
/// ```text
/// batch_steals!(/// doc of steal_half
///               max: MAX_CAPACITY);
/// ```
///
/// - [`steal`](crate::Thief::steal): [`steal_one`];
/// - [`steal_half`](crate::Thief::steal_half), with the given doc comment:
///   nothing, as `Empty`, into the victim itself, else [`steal_into`] for a
///   deque of at most `max` items.
macro_rules! batch_steals {
    ($(#[doc = $doc:literal])* max: $max:expr) => {
        #[inline]
        fn steal(&self, stats: &mut $crate::ThiefStats) -> $crate::Steal<usize> {
            $crate::batch::steal_one(self, stats)
        }

        $(#[doc = $doc])*
        fn steal_half(
            &self,
            dest: &mut Self::Owner,
            stats: &mut $crate::ThiefStats,
        ) -> $crate::Steal<usize> {
            if ::std::sync::Arc::ptr_eq(&self.inner, &dest.inner) {
                return $crate::Steal::Empty;
            }
            $crate::batch::steal_into(self, dest, $max, stats)
        }
    };
}

pub(crate) use batch_steals;
