//! The tracing methods' modes, as types, so that what cannot change during
//! a step or a drain costs nothing per object.
//!
//! - [`KeyWatch`] (the parameter `W`): whether the step watches the
//!   ephemeron key index, checking every object it marks against it. A
//!   step without waiting ephemerons runs [`Unwatched`], whose hot loop
//!   has no such check at all. [`Watched`] serves both ways of watching
//!   (the frozen index and the shared one, `phase::Watch`), told apart at
//!   run time off the hot path.
//! - [`LoopMode`] (the parameter `M`): the mark loop's settings. A
//!   worker's prefetch depth, private-stack switch, live counting and
//!   unshared marking cannot change during a drain, but read from the
//!   worker once per object they cost a load, a compare and a branch each
//!   (about a fifth of the loop's own instructions on a binary tree). So
//!   the loop of an unwatched step with the defaults that only the
//!   `research` knobs change (prefetching and private work on) takes the
//!   other two as constants ([`Fixed`]); every other loop reads them
//!   ([`Configured`]). A trace's drain and a mark cycle's budgeted
//!   increment both choose their mode this way ([`in_mode`]): an
//!   incremental runtime scans most of its heap in increments.

/// The parameter `W`: whether a step watches the ephemeron key index.
pub(super) trait KeyWatch {
    /// Whether every object marked is checked against the key index.
    const ON: bool;
}

/// A step that does not watch the key index (`phase::Watch::Off`).
pub(super) struct Unwatched;

/// A step that watches the key index, frozen or shared
/// (`phase::Watch::Frozen`, `phase::Watch::Shared`).
pub(super) struct Watched;

impl KeyWatch for Unwatched {
    const ON: bool = false;
}

impl KeyWatch for Watched {
    const ON: bool = true;
}

/// A worker's settings for the mark loop, read once per step.
pub(super) struct Settings {
    /// The prefetch FIFO's depth (0: prefetching off).
    pub(super) depth: usize,
    /// Whether strong targets wait in the edge delay line while their
    /// mark bits are prefetched (with prefetching on).
    pub(super) edge_delay: bool,
    /// Whether new grey objects go to the private stack first.
    pub(super) private: bool,
    /// Whether live objects are counted ([`MarkerConfig::count_live`]):
    /// each when scanned, in batches
    /// ([`Worker::account`](super::Worker::account)).
    ///
    /// [`MarkerConfig::count_live`]: crate::MarkerConfig::count_live
    pub(super) count_live: bool,
    /// Whether this worker marks alone, without atomic read-modify-writes
    /// (`Phase::unshared`).
    pub(super) unshared: bool,
}

/// The parameter `M`: the mark loop's settings, each a constant of the mode
/// or read from the worker's [`Settings`].
pub(super) trait LoopMode {
    /// Whether popped objects go through the prefetch FIFO.
    fn prefetching(s: &Settings) -> bool;
    /// Whether strong targets go through the edge delay line.
    fn edge_delay(s: &Settings) -> bool;
    /// Whether new grey objects go to the private stack.
    fn private(s: &Settings) -> bool;
    /// Whether scanned objects are counted live.
    fn counting(s: &Settings) -> bool;
    /// Whether this worker marks alone.
    fn unshared(s: &Settings) -> bool;
}

/// Evaluates `$body` with the type `$M` naming the [`LoopMode`] for a
/// worker's settings `$s` in a step that watches the key index as `$W`
/// does: a [`Fixed`] mode when `$W` does not watch and the settings allow
/// one ([`Settings::fixed`]), else [`Configured`]. The settings are read
/// before `$body` runs, which may then borrow the worker mutably.
macro_rules! in_mode {
    ($W:ty, $s:expr, $M:ident => $body:expr) => {{
        use $crate::worker::modes::{Configured, Fixed, KeyWatch};
        let s = &$s;
        let fixed = !<$W as KeyWatch>::ON && s.fixed();
        match (fixed, s.count_live, s.unshared) {
            (false, _, _) => {
                type $M = Configured;
                $body
            }
            (true, true, true) => {
                type $M = Fixed<true, true>;
                $body
            }
            (true, true, false) => {
                type $M = Fixed<true, false>;
                $body
            }
            (true, false, true) => {
                type $M = Fixed<false, true>;
                $body
            }
            (true, false, false) => {
                type $M = Fixed<false, false>;
                $body
            }
        }
    }};
}
pub(super) use in_mode;

/// The loop that reads every setting from the worker.
pub(super) struct Configured;

impl LoopMode for Configured {
    #[inline(always)]
    fn prefetching(s: &Settings) -> bool {
        s.depth != 0
    }
    #[inline(always)]
    fn edge_delay(s: &Settings) -> bool {
        s.edge_delay
    }
    #[inline(always)]
    fn private(s: &Settings) -> bool {
        s.private
    }
    #[inline(always)]
    fn counting(s: &Settings) -> bool {
        s.count_live
    }
    #[inline(always)]
    fn unshared(s: &Settings) -> bool {
        s.unshared
    }
}

/// The loop with prefetching and private work on, counting live objects
/// if `COUNT_LIVE`, and marking alone if `UNSHARED`.
pub(super) struct Fixed<const COUNT_LIVE: bool, const UNSHARED: bool>;

impl<const COUNT_LIVE: bool, const UNSHARED: bool> LoopMode for Fixed<COUNT_LIVE, UNSHARED> {
    #[inline(always)]
    fn prefetching(_: &Settings) -> bool {
        true
    }
    #[inline(always)]
    fn edge_delay(_: &Settings) -> bool {
        true
    }
    #[inline(always)]
    fn private(_: &Settings) -> bool {
        true
    }
    #[inline(always)]
    fn counting(_: &Settings) -> bool {
        COUNT_LIVE
    }
    #[inline(always)]
    fn unshared(_: &Settings) -> bool {
        UNSHARED
    }
}

impl Settings {
    /// Whether a loop with these settings may run in a [`Fixed`] mode.
    #[inline]
    pub(super) fn fixed(&self) -> bool {
        self.depth != 0 && self.private
    }
}
