//! Telling, after the fact, which items an owner took may also have gone to
//! a thief: [`Ticket`]s and [`Horizon`]s, for deques that deliver an item
//! more than once (the `idempotent` kind, with the `baselines` feature).
//!
//! A user that must act exactly once per item (a marker counting live
//! objects) pops with [`Owner::pop_ticketed`](crate::Owner::pop_ticketed),
//! keeps each item's ticket, and later asks the deque for a horizon
//! ([`Owner::horizon`](crate::Owner::horizon)). Every item whose ticket the
//! horizon says [`may_share`](Horizon::may_share) needs a claim in a set
//! shared by all workers (the first claim wins); every other item is the
//! only copy there ever was, and needs none. With an exactly-once kind no
//! ticket ever may share.
//!
//! A horizon covers the thefts announced since the previous horizon, so
//! **every ticket issued before a horizon and not yet settled must be
//! judged by it**: settled now, or kept as [`Horizon::flag`] returns it
//! (marked shared if the horizon says it may share), to be settled later.
//! A ticket judged only by a later horizon may miss the theft that took
//! its item too: that horizon returns [`Horizon::NONE`] when nothing new
//! was announced in between.
//!
//! A ticket is a deque index (as a full, wrapping index) and one bit,
//! `stolen`, for an item that may have a copy elsewhere whatever the horizon
//! says: one that reached this deque through a theft (or was pushed with
//! [`Owner::push_copy`](crate::Owner::push_copy)), or one that lay in the
//! deque when a theft was announced. A horizon is either none (no theft
//! announced since the previous one) or the end of the highest index range
//! that any thief announced before taking it: an item the owner popped
//! below it since the previous horizon may have been taken by that thief
//! too.
//!
//! ```
//! use stealmark_deques::copies::{Horizon, Ticket};
//! let h = Horizon::at(10);
//! assert!(h.may_share(Ticket::popped(9, false)));
//! assert!(!h.may_share(Ticket::popped(10, false)));
//! assert!(h.may_share(Ticket::popped(10, true)));
//! assert!(!Horizon::NONE.may_share(Ticket::ONLY));
//! // Kept past the next horizon: the verdict travels in the ticket.
//! let kept = h.flag(Ticket::popped(9, false));
//! assert!(kept.is_shared() && Horizon::NONE.may_share(kept));
//! assert!(!h.flag(Ticket::popped(10, false)).is_shared());
//! ```

/// Where a popped item was: its deque index (wrapping, compared on a circle
/// of 2^63) and whether it came in through a theft. One word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket(usize);

impl Ticket {
    /// The ticket of an item that has no other copy (every item of an
    /// exactly-once kind, and every item that never was in a deque).
    pub const ONLY: Ticket = Ticket(0);

    /// The ticket of an item popped at full index `index`; `stolen` if it
    /// reached the deque through a theft or [`Owner::push_copy`](crate::Owner::push_copy).
    #[inline(always)]
    pub const fn popped(index: usize, stolen: bool) -> Ticket {
        Ticket((index << 1) | stolen as usize)
    }

    /// This ticket, marked as that of a copy that may have another one
    /// (whatever the horizon).
    #[inline(always)]
    pub const fn shared(self) -> Ticket {
        Ticket(self.0 | 1)
    }

    /// The ticket as a word, for storing with the item.
    #[inline(always)]
    pub const fn word(self) -> usize {
        self.0
    }

    /// The ticket a word from [`Ticket::word`] holds.
    #[inline(always)]
    pub const fn from_word(word: usize) -> Ticket {
        Ticket(word)
    }

    /// Whether the ticket is marked as that of an item that may have
    /// another copy, whatever a later horizon says (it came in through a
    /// theft or [`Owner::push_copy`](crate::Owner::push_copy), or a horizon
    /// [`flag`](Horizon::flag)ged it).
    #[inline(always)]
    pub const fn is_shared(self) -> bool {
        self.0 & 1 != 0
    }
}

/// What an owner learnt, at one point, of the thefts that may have raced
/// its pops since the previous point: tickets issued in between that
/// [`may_share`] need a claim.
///
/// [`may_share`]: Horizon::may_share
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Horizon(Option<usize>);

impl Horizon {
    /// No theft announced: only tickets marked stolen may share.
    pub const NONE: Horizon = Horizon(None);

    /// Thieves announced indices below `end` (a full, wrapping index).
    #[inline(always)]
    pub const fn at(end: usize) -> Horizon {
        Horizon(Some(end << 1))
    }

    /// Whether the item of `ticket` may have another copy: it came in
    /// through a theft, or its index lies below the announced end.
    #[inline(always)]
    pub const fn may_share(self, ticket: Ticket) -> bool {
        // Both sides are indices shifted left by one: their difference, as a
        // signed word, is twice the distance on the circle of 2^63 indices
        // (live indices of one deque lie well within 2^62 of each other).
        ticket.0 & 1 != 0
            || match self.0 {
                Some(end) => (end.wrapping_sub(ticket.0 & !1) as isize) > 0,
                None => false,
            }
    }

    /// `ticket`, marked [`shared`](Ticket::shared) if this horizon says it
    /// [`may_share`](Horizon::may_share): how a user keeps this horizon's
    /// verdict on a ticket it settles only after a later horizon (an item
    /// popped before this one and not yet counted). The later horizon
    /// alone would miss it: it covers the thefts announced since this one.
    #[inline(always)]
    pub const fn flag(self, ticket: Ticket) -> Ticket {
        if self.may_share(ticket) {
            ticket.shared()
        } else {
            ticket
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_compare_across_the_wrap() {
        let h = Horizon::at(2);
        assert!(h.may_share(Ticket::popped(usize::MAX, false)));
        assert!(h.may_share(Ticket::popped(1, false)));
        assert!(!h.may_share(Ticket::popped(2, false)));
        assert!(!h.may_share(Ticket::popped(3, false)));
        let h = Horizon::at(usize::MAX);
        assert!(h.may_share(Ticket::popped(usize::MAX - 1, false)));
        assert!(!h.may_share(Ticket::popped(0, false)));
        assert!(h.may_share(Ticket::popped(0, false).shared()));
        assert_eq!(
            Ticket::from_word(Ticket::popped(7, true).word()),
            Ticket::popped(7, true)
        );
    }
}
