//! The growable deques (Chase-Lev and StealHalf) give memory back: a `-q`
//! deque's `quiesce` frees the arrays its resizes retired, and an owner whose
//! deque thieves have emptied shrinks the grown array at its next pop. The
//! same checks run against both kinds.
#![cfg(not(loom))]

use stealmark_deques::{Owner, Steal, Thief, ThiefStats, WorkDeque};

macro_rules! growable_tests {
    ($name:ident, $epoch:ty, $quiescent:ty) => {
        mod $name {
            use super::*;

            #[test]
            fn quiesce_frees_the_retired_arrays() {
                let (mut o, t) = <$quiescent>::with_capacity(2);
                for i in 0..64 {
                    o.push(i).unwrap();
                }
                // 2 -> 4 -> ... -> 64: five arrays retired.
                assert_eq!(o.retired(), 5);
                // SAFETY: no thief is inside a steal (this thread is the only
                // one).
                unsafe { o.quiesce() };
                assert_eq!(o.retired(), 0);
                assert_eq!(t.len(), 64);
                assert_eq!(o.pop(), Some(63));
            }

            #[test]
            fn thieves_emptying_the_deque_shrink_it_at_the_next_pop() {
                let (mut o, t) = <$epoch>::with_capacity(4);
                for i in 0..100 {
                    o.push(i).unwrap();
                }
                assert_eq!(o.capacity(), 128);
                let mut s = ThiefStats::default();
                for i in 0..100 {
                    assert_eq!(t.steal(&mut s), Steal::Success(i));
                }
                assert_eq!(t.steal(&mut s), Steal::Empty);
                assert_eq!(o.capacity(), 128);
                assert_eq!(o.pop(), None);
                assert_eq!(o.capacity(), 4);
                o.push(7).unwrap();
                assert_eq!(t.steal(&mut s), Steal::Success(7));
                assert_eq!(o.pop(), None);
                assert_eq!(o.capacity(), 4);
            }
        }
    };
}

growable_tests!(
    chase_lev,
    stealmark_deques::chase_lev::ChaseLev,
    stealmark_deques::chase_lev::ChaseLevQuiescent
);
growable_tests!(
    steal_half,
    stealmark_deques::steal_half::StealHalf,
    stealmark_deques::steal_half::StealHalfQuiescent
);
