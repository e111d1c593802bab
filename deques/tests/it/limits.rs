//! The deques at their size limits: a StealHalf deque filled to exactly
//! `MAX_CAPACITY` items, a push beyond it, and capacities whose rounding up
//! overflows. A push beyond the limit must fail as documented (a panic that
//! leaves the deque as it was), never corrupt the deque: before the fix, the
//! 2^27-th push re-armed the steal range with a length of about 2^64, and a
//! release build then popped past empty and crashed.
//!
//! Filling 2^27 words takes a second or two at the test profile's
//! opt-level 2 and about 1.5 GiB; Miri skips these tests.
#![cfg(not(loom))]

use std::panic::{catch_unwind, AssertUnwindSafe};

use stealmark_deques::chase_lev::ChaseLev;
use stealmark_deques::idempotent::{self, Idempotent};
use stealmark_deques::steal_half::{self, StealHalf};
use stealmark_deques::{Owner, Steal, Thief, ThiefStats, WorkDeque};

/// The message of the panic that `f` raises; panics if it returns.
fn panic_message<R>(f: impl FnOnce() -> R) -> String {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(_) => panic!("expected a panic"),
        Err(payload) => payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default(),
    }
}

#[test]
#[cfg_attr(miri, ignore = "fills 2^27 slots")]
fn steal_half_holds_exactly_max_capacity_items() {
    let max = steal_half::MAX_CAPACITY;
    let (mut owner, thief) = StealHalf::with_capacity(2);
    for i in 0..max {
        owner.push(i).unwrap();
    }
    assert_eq!((owner.len(), thief.len()), (max, max));
    assert_eq!(owner.capacity(), max);
    // The owner armed the largest power of two at most a quarter.
    assert_eq!(owner.steal_range_len(), max / 4);

    // One more push panics with the documented message and changes nothing.
    let message = panic_message(|| owner.push(max));
    assert!(message.contains("maximum capacity"), "{message}");
    assert_eq!((owner.len(), thief.len()), (max, max));

    // Steals take the oldest items, one and then a whole range.
    let mut stats = ThiefStats::default();
    assert_eq!(thief.steal(&mut stats), Steal::Success(0));
    let (mut dest, _) = StealHalf::with_capacity(2);
    let moved = match thief.steal_half(&mut dest, &mut stats) {
        Steal::Success(n) => n,
        other => panic!("steal_half from a full deque: {other:?}"),
    };
    assert!(moved >= max / 8 && moved < max / 2, "{moved}");
    assert_eq!(owner.len(), max - 1 - moved);

    // The owner pops the rest, newest first, and then finds it empty.
    for i in (1 + moved..max).rev() {
        assert_eq!(owner.pop(), Some(i));
    }
    assert_eq!(owner.pop(), None);
    assert_eq!(owner.len(), 0);
    assert_eq!(thief.steal(&mut stats), Steal::Empty);
    for i in (1..1 + moved).rev() {
        assert_eq!(dest.pop(), Some(i));
    }
    assert_eq!(dest.pop(), None);
}

/// A `steal_half` into a deque that cannot take the whole range moves only
/// what fits, instead of growing the destination past its limit.
#[test]
#[cfg_attr(miri, ignore = "fills 2^27 slots")]
fn steal_half_into_a_nearly_full_deque_moves_what_fits() {
    let max = steal_half::MAX_CAPACITY;
    let (mut victim, thief) = StealHalf::with_capacity(2);
    for i in 0..64 {
        victim.push(i).unwrap();
    }
    let (mut dest, _) = StealHalf::with_capacity(2);
    for i in 0..max - 3 {
        dest.push(i).unwrap();
    }
    let mut stats = ThiefStats::default();
    assert_eq!(thief.steal_half(&mut dest, &mut stats), Steal::Success(3));
    assert_eq!((victim.len(), dest.len()), (61, max));
    assert_eq!(thief.steal_half(&mut dest, &mut stats), Steal::Empty);
    assert_eq!(victim.len(), 61);
    for i in (0..3).rev() {
        assert_eq!(dest.pop(), Some(i));
    }
}

/// An initial capacity whose rounding up to a power of two overflows is a
/// clear panic, not a zero-sized array indexed without bounds checks (which a
/// release build made before the fix).
#[test]
fn chase_lev_capacity_overflow_panics() {
    for capacity in [usize::MAX, (usize::MAX >> 1) + 2] {
        let message = panic_message(|| ChaseLev::with_capacity(capacity));
        assert!(message.contains("capacity"), "{capacity}: {message}");
    }
}

/// The other kinds clamp the initial capacity of a huge request instead of
/// overflowing; ABP allocates what it is asked for, so it is not tried here.
#[test]
#[cfg_attr(miri, ignore = "allocates 2^27 slots")]
fn steal_half_clamps_a_huge_initial_capacity() {
    let (mut owner, _thief) = StealHalf::with_capacity(usize::MAX);
    assert_eq!(owner.capacity(), steal_half::MAX_CAPACITY);
    owner.push(1).unwrap();
    assert_eq!(owner.pop(), Some(1));
}

/// The idempotent deque at its limit: exactly `MAX_CAPACITY` items, a push
/// beyond it panics and changes nothing, a `steal_half` into a full deque
/// moves nothing.
#[test]
#[cfg_attr(miri, ignore = "fills 2^27 slots")]
fn idempotent_holds_exactly_max_capacity_items() {
    let max = idempotent::MAX_CAPACITY;
    let (mut owner, thief) = Idempotent::with_capacity(2);
    for i in 0..max {
        owner.push(i).unwrap();
    }
    assert_eq!(
        (owner.len(), thief.len(), owner.capacity()),
        (max, max, max)
    );
    let message = panic_message(|| owner.push(max));
    assert!(message.contains("maximum capacity"), "{message}");
    assert_eq!((owner.len(), thief.len()), (max, max));
    let (mut other, other_thief) = Idempotent::with_capacity(2);
    other.push(7).unwrap();
    let mut stats = ThiefStats::default();
    assert_eq!(other_thief.steal_half(&mut owner, &mut stats), Steal::Empty);
    assert_eq!(thief.steal(&mut stats), Steal::Success(0));
    assert_eq!(
        other_thief.steal_half(&mut owner, &mut stats),
        Steal::Success(1)
    );
    assert_eq!(owner.pop(), Some(7));
    for i in (1..max).rev() {
        assert_eq!(owner.pop(), Some(i));
    }
    assert_eq!(owner.pop(), None);
    // Emptied, it keeps its array (it never shrinks).
    assert_eq!(owner.capacity(), max);
}
