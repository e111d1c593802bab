//! Per-handle operation counters.

/// Counters kept by an owner handle. Plain fields: only the owner writes them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OwnerStats {
    /// Successful [`Owner::push`](crate::Owner::push) calls: items the owner
    /// itself added. Items that a batch steal
    /// ([`Thief::steal_half`](crate::Thief::steal_half)) moves into this
    /// deque are not counted here, for any deque kind; the thief's
    /// [`ThiefStats::items_stolen`] counts them.
    pub pushes: u64,
    /// Successful pops.
    pub pops: u64,
    /// Compare-and-swap operations attempted by the owner.
    pub cas_attempted: u64,
    /// Compare-and-swap operations that succeeded.
    pub cas_succeeded: u64,
}

/// Counters kept by a thief. The caller owns them, so that they stay local to
/// the stealing thread even though thief handles are shared.
///
/// A batch steal ([`Thief::steal_half`](crate::Thief::steal_half)) counts as
/// one steal for every deque kind: one attempt, then one success (with
/// `items_stolen` increased by the number of items moved) or, if it took
/// nothing because it lost a race, one abort. ABP and Chase-Lev take a batch
/// with one CAS per item; their CAS counters count every one of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThiefStats {
    /// Steal attempts, single or batch (a batch counts once).
    pub steal_attempts: u64,
    /// Attempts that took at least one item.
    pub steal_successes: u64,
    /// Attempts that lost a race and took nothing.
    pub steal_aborts: u64,
    /// Items moved by successful steals.
    pub items_stolen: u64,
    /// Compare-and-swap operations attempted by the thief.
    pub cas_attempted: u64,
    /// Compare-and-swap operations that succeeded.
    pub cas_succeeded: u64,
}

impl ThiefStats {
    /// Adds `other`'s counts to these.
    pub fn merge(&mut self, other: &ThiefStats) {
        self.steal_attempts += other.steal_attempts;
        self.steal_successes += other.steal_successes;
        self.steal_aborts += other.steal_aborts;
        self.items_stolen += other.items_stolen;
        self.cas_attempted += other.cas_attempted;
        self.cas_succeeded += other.cas_succeeded;
    }
}
