//! The Hendler-Shavit extended deque (PODC 2002): thieves take about half of
//! the victim's items with one CAS, and the owner synchronises only when the
//! length crosses a power of two or after it has seen a steal. Beyond the
//! paper, the array is Chase-Lev's dynamic circular array, so a push never
//! fails (no `DEQ_FULL`).
//!
//! # The steal range
//!
//! One 64-bit atomic word holds the whole `stealRange`:
//!
//! | bits   | field   | meaning                                                  |
//! |--------|---------|----------------------------------------------------------|
//! | 0..28  | `top`   | index of the oldest item, modulo 2^28                    |
//! | 28..33 | `len`   | `0` (empty) or `c`: the range holds `2^(c-1)` items      |
//! | 33     | `owner` | the owner wrote this word (else a thief did)             |
//! | 34..64 | `tag`   | bumped by every owner CAS                                |
//!
//! Thieves may take items only inside `[top, top + len)`, and only by a CAS
//! on this word that advances `top`. Range lengths are always zero or powers
//! of two, as in the paper, so five bits encode them.
//!
//! The owner pops without any CAS when the word still equals `prev` (the
//! last word it wrote: no steal happened since) and the popped index `j` is
//! at or above the *floor* `top + 2 * len` of `prev`. A thief claims only
//! items of the range that lie below the `bottom` it read (after a `SeqCst`
//! fence), and keeps its new range below the floor of the word it replaces
//! when the owner wrote that word, and within half of the items below that
//! `bottom` otherwise; so no index is ever both popped without a CAS and
//! claimed by a thief. A thief never leaves an empty range while items may
//! remain: seeing none above its new top, it leaves the one slot there,
//! which the next claim takes once an item is published in it. The owner
//! re-arms the range with a CAS when a push or pop sees a foreign word (a
//! steal), when a pop reaches the floor, and when a push takes the length to
//! a power of two where the owner's range length grows.
//!
//! The owner arms the largest power of two at most `len / 4` (1 below 8
//! items), which is the paper's rule with hysteresis: the floor sits at or
//! below the middle of the deque, so after a CAS the owner can pop about half
//! of the items, or push until the length doubles, before the next one.
//! Monotonic runs of k pushes or k pops without steals cost Θ(log k) CAS
//! (Theorem 4.3), and, unlike the paper's rule, pushes and pops that
//! oscillate around a power of two cost none. Thieves keep at least an
//! eighth too; debug builds assert the paper's invariant
//! `len(stealRange) >= len(deque) / 8` after every owner write and every
//! successful steal.
//!
//! # ABA
//!
//! A thief copies the items of the range it read, then CASes the word. The
//! copy is stale only if the owner popped and re-pushed those indices in
//! between, which takes at least two owner CASes (shrink the range, then
//! re-arm it); each bumps the 30-bit tag, and thieves only ever advance
//! `top`. So a stale CAS succeeds only if a thief stalls between two
//! instructions while the owner performs a multiple of 2^30 CASes and no
//! other thief steals.
//!
//! ```
//! use stealmark_deques::steal_half::StealHalf;
//! use stealmark_deques::{Owner, Steal, Thief, ThiefStats, WorkDeque};
//!
//! let (mut victim, thief) = StealHalf::with_capacity(4);
//! let (mut mine, _) = StealHalf::with_capacity(4);
//! for i in 0..16 {
//!     victim.push(i).unwrap();
//! }
//! let mut stats = ThiefStats::default();
//! // The owner keeps a quarter of its 16 items stealable.
//! assert_eq!(thief.steal_half(&mut mine, &mut stats), Steal::Success(4));
//! assert_eq!(stats.cas_attempted, 1);
//! assert_eq!((victim.len(), mine.len()), (12, 4));
//! ```

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::Arc;

use crossbeam_utils::CachePadded;

use crate::batch::{self, batch_steals, BatchOwner, BatchThief};
use crate::buffer::{publish_bottom, Buffer, SharedBuffer};
pub use crate::buffer::{Epoch, Quiescent, Reclaim};
use crate::handle::{arc_handles, array_methods, owner_methods, work_deque};
use crate::sync::{fence, AtomicU64, AtomicUsize, Ordering};
use crate::{DequeKind, OwnerStats, Steal, ThiefStats};

const TOP_BITS: u32 = 28;
const TOP_MASK: u64 = (1 << TOP_BITS) - 1;
const LEN_SHIFT: u32 = 28;
const LEN_MASK: u64 = 0b1_1111;
const OWNER_BIT: u64 = 1 << 33;
const TAG_SHIFT: u32 = 34;
const TAG_MASK: u64 = (1 << 30) - 1;

/// The most items a StealHalf deque holds, and the largest array it grows
/// to: indices are kept modulo 2^28 in the steal-range word, so live
/// indices must stay within 2^27 of each other (`dist` reads a distance of
/// exactly 2^27 as positive). A push into a full deque of `MAX_CAPACITY`
/// items panics and leaves the deque unchanged; a `steal_half` into it moves
/// only what fits (2^27 words is 1 GiB per deque).
pub const MAX_CAPACITY: usize = 1 << (TOP_BITS - 1);

pub use crate::buffer::SHRINK_FACTOR;

/// The StealHalf kind (`steal-half`), with epoch-based reclamation.
#[derive(Debug, Clone, Copy, Default)]
pub struct StealHalf;

/// The StealHalf kind with quiescent-point reclamation (`steal-half-q`):
/// steals pin nothing; retired arrays live until the deque is dropped or
/// until the owner calls [`Owner::quiesce`](crate::Owner::quiesce).
#[derive(Debug, Clone, Copy, Default)]
pub struct StealHalfQuiescent;

work_deque!(StealHalf: StealHalfOwner<Epoch>, StealHalfThief<Epoch>, DequeKind::StealHalf);

work_deque!(StealHalfQuiescent: StealHalfOwner<Quiescent>, StealHalfThief<Quiescent>, DequeKind::StealHalfQuiescent);

/// The packed steal range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Range(u64);

impl Range {
    fn new(tag: u64, top: usize, len: usize, by_owner: bool) -> Range {
        debug_assert!(len == 0 || len.is_power_of_two());
        let code = if len == 0 {
            0
        } else {
            u64::from(len.trailing_zeros()) + 1
        };
        debug_assert!(code <= LEN_MASK);
        let owner = if by_owner { OWNER_BIT } else { 0 };
        Range(
            ((tag & TAG_MASK) << TAG_SHIFT) | owner | (code << LEN_SHIFT) | (top as u64 & TOP_MASK),
        )
    }

    /// `top` modulo 2^28.
    fn top(self) -> usize {
        (self.0 & TOP_MASK) as usize
    }

    fn len(self) -> usize {
        match (self.0 >> LEN_SHIFT) & LEN_MASK {
            0 => 0,
            code => 1 << (code - 1),
        }
    }

    fn by_owner(self) -> bool {
        self.0 & OWNER_BIT != 0
    }

    fn tag(self) -> u64 {
        (self.0 >> TAG_SHIFT) & TAG_MASK
    }
}

/// `a - b` for logical indices given modulo 2^28 (either may be a full
/// index), in `(-2^27, 2^27]`. A full deque has `bottom - top` equal to
/// `MAX_CAPACITY = 2^27`, which must read as positive: reading it as
/// `-2^27` made the owner re-arm a full deque with a length of about 2^64.
/// Negative distances are small: a thief's `bottom` below its new `top`.
fn dist(a: usize, b: usize) -> isize {
    let d = (a.wrapping_sub(b) as u64 & TOP_MASK) as isize;
    if d > 1 << (TOP_BITS - 1) {
        d - (1 << TOP_BITS)
    } else {
        d
    }
}

/// The steal-range length a thief leaves behind when it sees `n` items
/// above its new top: the largest power of two at most `n / 2`, and 1 for 1
/// to 3 items. It lies in `(n / 4, n / 2]` for `n >= 2`.
fn target_len(n: usize) -> usize {
    match n {
        0 => 0,
        1..=3 => 1,
        _ => 1 << (n / 2).ilog2(),
    }
}

/// The steal-range length the owner sets for a deque of `n` items: the
/// largest power of two at most `n / 4`, and 1 for 1 to 7 items. It lies in
/// `(n / 8, n / 4]` for `n >= 8`, so the floor `top + 2 * len` stays at or
/// below the middle of the deque: after the owner re-arms, it can pop about
/// half the items, and push until the length doubles, without another CAS.
/// It only changes when `n` reaches a power of two (1, 8, 16, ...).
fn owner_len(n: usize) -> usize {
    match n {
        0 => 0,
        1..=7 => 1,
        _ => 1 << (n / 4).ilog2(),
    }
}

/// The largest power of two at most `n`, or 0.
fn floor_power_of_two(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        1 << n.ilog2()
    }
}

/// A deque whose indices start `before_wrap` pushes before the full index
/// (and so the word's 28-bit top) wraps, and whose tag starts `before_wrap`
/// owner CASes before it wraps (see `WorkDeque::with_capacity_near_wrap`).
fn new<R: Reclaim>(capacity: usize, before_wrap: usize) -> (StealHalfOwner<R>, StealHalfThief<R>) {
    let min_capacity = capacity.clamp(2, MAX_CAPACITY).next_power_of_two();
    let start = 0usize.wrapping_sub(before_wrap);
    let tag = 0u64.wrapping_sub(before_wrap as u64) & TAG_MASK;
    let prev = Range::new(tag, start, 0, true);
    let inner = Arc::new(Inner {
        range: CachePadded::new(AtomicU64::new(prev.0)),
        bottom: CachePadded::new(AtomicUsize::new(start)),
        buffer: CachePadded::new(SharedBuffer::new(min_capacity)),
        #[cfg(loom)]
        last_thief: std::sync::Mutex::new(None),
    });
    let owner = StealHalfOwner {
        inner: Arc::clone(&inner),
        bottom: start,
        prev,
        prev_top: start,
        prev_floor: 0,
        prev_grow: 1,
        stats: OwnerStats::default(),
        _not_sync: PhantomData,
    };
    (owner, StealHalfThief { inner })
}

struct Inner<R: Reclaim> {
    /// The packed steal range (see the module docs).
    range: CachePadded<AtomicU64>,
    /// One past the youngest item (a full, wrapping index); owner writes.
    bottom: CachePadded<AtomicUsize>,
    buffer: CachePadded<SharedBuffer<R>>,
    /// Under loom: the thread of the last successful steal, to count steals
    /// chained across two thief threads (`coverage`).
    #[cfg(loom)]
    last_thief: std::sync::Mutex<Option<loom::thread::ThreadId>>,
}

/// The owner handle of a StealHalf deque.
pub struct StealHalfOwner<R: Reclaim> {
    inner: Arc<Inner<R>>,
    /// The owner's copy of `bottom` (it is the only writer).
    bottom: usize,
    /// The last range word the owner wrote (`prevStealRange`).
    prev: Range,
    /// The full index of `prev`'s top, and `2 * prev.len()` (the distance
    /// from it to the floor), cached for the fast paths.
    prev_top: usize,
    prev_floor: usize,
    /// The length at which `owner_len` exceeds `prev.len()`: a push that
    /// reaches it re-arms.
    prev_grow: usize,
    stats: OwnerStats,
    _not_sync: PhantomData<Cell<()>>,
}

/// A thief handle of a StealHalf deque.
pub struct StealHalfThief<R: Reclaim> {
    inner: Arc<Inner<R>>,
}

arc_handles!(
    StealHalfOwner,
    StealHalfThief<R: Reclaim>,
    inner,
    [capacity, steal_range_len]
);

/// Checks the paper's invariant `len(stealRange) >= len(deque) / 8`.
#[inline]
fn check_invariant(range_len: usize, deque_len: usize) {
    debug_assert!(
        range_len * 8 >= deque_len,
        "StealHalf invariant broken: steal range of {range_len} for {deque_len} items"
    );
}

/// Grows `buffer` to hold `needed` items, copying `[top, bottom)`.
///
/// # Panics
///
/// If `needed > MAX_CAPACITY`, before changing anything.
#[cold]
#[inline(never)]
fn grow<R: Reclaim>(buffer: &SharedBuffer<R>, top: usize, bottom: usize, needed: usize) -> &Buffer {
    assert!(
        needed <= MAX_CAPACITY,
        "StealHalf deque would exceed its maximum capacity of {MAX_CAPACITY} items"
    );
    buffer.replace(needed.next_power_of_two(), top as isize, bottom as isize)
}

impl<R: Reclaim> StealHalfOwner<R> {
    array_methods!();

    /// The number of items thieves may currently claim (the length of the
    /// steal range).
    pub fn steal_range_len(&self) -> usize {
        // Relaxed: a snapshot for inspection.
        Range(self.inner.range.load(Ordering::Relaxed)).len()
    }

    /// Records `new`, whose top is the full index `top`, as our last write.
    #[inline]
    fn set_prev(&mut self, new: Range, top: usize) {
        self.prev = new;
        self.prev_top = top;
        self.prev_floor = 2 * new.len();
        // `owner_len(n)` first exceeds `l >= 1` at `n = 8 * l`.
        self.prev_grow = (8 * new.len()).max(1);
    }

    /// The full index of the top named by `word`, which is at most `bottom`.
    #[inline]
    fn full_top(&self, word: Range) -> usize {
        let d = dist(self.bottom, word.top());
        debug_assert!(d >= 0, "steal range top passed bottom");
        self.bottom.wrapping_sub(d as usize)
    }

    /// Re-arms the steal range for the current length, starting from the
    /// word `seen`; retries while thieves change it.
    #[cold]
    #[inline(never)]
    fn rearm(&mut self, mut seen: Range) {
        if seen != self.prev {
            hit!(ShRearmAfterSteal);
        }
        loop {
            let top = self.full_top(seen);
            let len = self.bottom.wrapping_sub(top);
            let new = Range::new(seen.tag() + 1, top, owner_len(len), true);
            match self.cas_range(seen, new) {
                Ok(()) => {
                    self.set_prev(new, top);
                    check_invariant(new.len(), len);
                    return;
                }
                Err(current) => {
                    hit!(ShRearmRetried);
                    seen = current;
                }
            }
        }
    }

    /// The owner's CAS of the range word from `seen` to `new` (a word of
    /// ours with the next tag), counted in its stats; on failure, returns
    /// the current word.
    #[inline]
    fn cas_range(&mut self, seen: Range, new: Range) -> Result<(), Range> {
        self.stats.cas_attempted += 1;
        // SeqCst on success: totally ordered with the thieves' CASes; its
        // release half publishes the slots of the new range to thieves
        // (pairs with their acquire load of the range). Acquire on failure:
        // pairs with the winning thief's CAS, so that its slot reads happen
        // before we reuse those slots.
        match self
            .inner
            .range
            .compare_exchange(seen.0, new.0, Ordering::SeqCst, Ordering::Acquire)
        {
            Ok(_) => {
                self.stats.cas_succeeded += 1;
                if seen.tag() == TAG_MASK {
                    hit!(ShTagWrapped);
                }
                Ok(())
            }
            Err(current) => Err(Range(current)),
        }
    }

    /// Shrinks the array after a pop that left `len` items from `top`.
    #[inline]
    fn maybe_shrink(&self, top: usize, len: usize) {
        let buffer = &self.inner.buffer;
        let capacity = buffer.owner_load().capacity();
        buffer.shrink_if_sparse(capacity, len, top as isize, self.bottom as isize);
    }

    /// A pop found the deque emptied by thieves, at `top == bottom == end`
    /// with the current word `word`: gives a grown array back at once, down
    /// to the initial capacity, as the owner's own pops would have done on
    /// the way down. Otherwise a deque that thieves drained would keep its
    /// peak array until the owner next pops a real item. Only on the slow
    /// path, and the resize copies nothing.
    ///
    /// Only while the steal range is empty (which it is here: `pop_slow` has
    /// just replaced the last thief's range of one slot with an empty word
    /// of ours; the check keeps the shrink safe without relying on that):
    /// then no thief can claim anything until our
    /// next CAS on the word, which comes after the resize (a push writes to
    /// the new array, then re-arms), so a thief that can claim loads the new
    /// array (its acquire load of the word pairs with that CAS).
    #[inline]
    fn shrink_emptied(&self, word: Range, end: usize) {
        debug_assert_eq!(end, self.bottom, "shrink_emptied on a deque with items");
        if word.len() == 0 {
            self.inner
                .buffer
                .shrink_emptied(self.capacity(), end as isize);
        }
    }

    /// The rest of `pop` after `bottom` was decremented to `b - 1` and the
    /// fence: the deque was emptied by thieves, or popping needs a CAS.
    #[cold]
    #[inline(never)]
    fn pop_slow(&mut self, mut word: Range, b: usize) -> Option<usize> {
        let j = b.wrapping_sub(1);
        loop {
            let top = self.full_top(word);
            let len = b.wrapping_sub(top);
            if len == 0 {
                hit!(ShPopFoundEmptied);
                // Thieves took everything: restore `bottom == top`. Relaxed:
                // pairs with nothing; a thief that reads the older `j` only
                // sees less room.
                self.inner.bottom.store(b, Ordering::Relaxed);
                // The last thief left a range of one slot at `b` (a thief
                // never leaves an empty range, see `claim`). Take the word
                // back with an empty one of ours, so that our next pops see
                // `prev_top == b` and return at once, and the array may
                // shrink. No thief can claim meanwhile: `bottom` stays at
                // most `b` while this word is current (a push would re-arm
                // first), and a claim takes only items below the `bottom`
                // it reads; so the CAS can only fail if the word changed
                // anyway, and then we try again with the new one.
                while word.len() != 0 {
                    let new = Range::new(word.tag() + 1, b, 0, true);
                    match self.cas_range(word, new) {
                        Ok(()) => {
                            self.set_prev(new, b);
                            word = new;
                        }
                        Err(current) => word = current,
                    }
                }
                self.shrink_emptied(word, b);
                return None;
            }
            // Claim `j` by re-arming the range below it; for the last item,
            // by advancing `top` past it.
            let new = if len == 1 {
                Range::new(word.tag() + 1, b, 0, true)
            } else {
                Range::new(word.tag() + 1, top, owner_len(len - 1), true)
            };
            match self.cas_range(word, new) {
                Ok(()) => {
                    self.set_prev(new, if len == 1 { b } else { top });
                    check_invariant(new.len(), len - 1);
                    let item = self.inner.buffer.owner_load().read(j as isize);
                    if len == 1 {
                        // `top` is now `b`: restore `bottom` to match.
                        // Relaxed: the range is empty, no thief uses it.
                        self.inner.bottom.store(b, Ordering::Relaxed);
                    } else {
                        self.bottom = j;
                    }
                    self.stats.pops += 1;
                    self.maybe_shrink(if len == 1 { b } else { top }, len - 1);
                    return Some(item);
                }
                Err(current) => {
                    hit!(ShPopCasRetried);
                    word = current;
                }
            }
        }
    }
}

impl<R: Reclaim> crate::Owner for StealHalfOwner<R> {
    type Thief = StealHalfThief<R>;

    #[inline]
    fn push(&mut self, item: usize) -> Result<(), usize> {
        // Acquire: pairs with the release half of thieves' successful CAS,
        // so that their reads of the slots they took happen before we reuse
        // those slots.
        let word = Range(self.inner.range.load(Ordering::Acquire));
        let b = self.bottom;
        let top = if word == self.prev {
            self.prev_top
        } else {
            self.full_top(word)
        };
        let len = b.wrapping_sub(top);
        let mut buffer = self.inner.buffer.owner_load();
        if len >= buffer.capacity() {
            buffer = grow(&self.inner.buffer, top, b, len + 1);
        }
        buffer.write(b as isize, item);
        if b == usize::MAX {
            hit!(ShIndexWrapped);
        }
        // Release fence and relaxed store: see `publish_bottom`.
        publish_bottom(&self.inner.bottom, b.wrapping_add(1));
        self.bottom = b.wrapping_add(1);
        self.stats.pushes += 1;
        if word != self.prev || len + 1 >= self.prev_grow {
            self.rearm(word);
        } else {
            check_invariant(self.prev.len(), len + 1);
        }
        Ok(())
    }

    #[inline]
    fn pop(&mut self) -> Option<usize> {
        let b = self.bottom;
        // A quick empty check without touching shared memory: `top` only
        // grows, so if our last word's `top` is `b` the deque is empty.
        if self.prev_top == b {
            return None;
        }
        let inner = &*self.inner;
        let j = b.wrapping_sub(1);
        // Relaxed: the SeqCst fence below orders it before our load of the
        // range word (see there).
        inner.bottom.store(j, Ordering::Relaxed);
        // SeqCst: pairs with the SeqCst fence in a steal, between its load of
        // the range and its load of `bottom`: either that thief sees this
        // decremented bottom, or we see its range word below.
        fence(Ordering::SeqCst);
        // Acquire: pairs with thieves' CAS (see `push`).
        let word = Range(inner.range.load(Ordering::Acquire));
        if word == self.prev {
            let len = b.wrapping_sub(self.prev_top);
            if len > self.prev_floor {
                // No steal since our last write, and `j` is at or above the
                // floor `top + 2 * len` that every thief stays under: the
                // item is ours without a CAS.
                hit!(ShPopWithoutCas);
                check_invariant(word.len(), len - 1);
                let item = inner.buffer.owner_load().read(j as isize);
                self.bottom = j;
                self.stats.pops += 1;
                self.maybe_shrink(self.prev_top, len - 1);
                return Some(item);
            }
        }
        self.pop_slow(word, b)
    }

    fn len(&self) -> usize {
        // Relaxed: an estimate; exact for the owner when no thief runs.
        let word = Range(self.inner.range.load(Ordering::Relaxed));
        self.bottom.wrapping_sub(self.full_top(word))
    }

    owner_methods!(thief: StealHalfThief { inner }, quiesce);
}

impl<R: Reclaim> BatchOwner for StealHalfOwner<R> {
    fn bottom(&self) -> usize {
        self.bottom
    }

    /// Makes room for `extra` more items; returns the array to write them to.
    fn reserve(&mut self, extra: usize) -> &Buffer {
        // Acquire: pairs with thieves' CAS; see `push`.
        let word = Range(self.inner.range.load(Ordering::Acquire));
        let top = self.full_top(word);
        let len = self.bottom.wrapping_sub(top);
        let buffer = self.inner.buffer.owner_load();
        if len + extra > buffer.capacity() {
            grow(&self.inner.buffer, top, self.bottom, len + extra)
        } else {
            buffer
        }
    }

    /// Publishes `count` items written above `bottom` by a steal into this
    /// deque, re-arming the steal range first if needed.
    fn commit(&mut self, count: usize) {
        // Acquire: pairs with thieves' CAS; see `push`.
        let word = Range(self.inner.range.load(Ordering::Acquire));
        let top = self.full_top(word);
        let old_len = self.bottom.wrapping_sub(top);
        self.bottom = self.bottom.wrapping_add(count);
        // Re-arm before publishing `bottom`, so that no thief sees the new
        // bottom with a range sized for the old length. The new range may
        // reach above the published bottom: its slots are written, and the
        // CAS publishes them.
        if word != self.prev || owner_len(old_len + count) > word.len() {
            self.rearm(word);
        } else {
            check_invariant(self.prev.len(), old_len + count);
        }
        // Release fence and relaxed store (see `publish_bottom`): the slots
        // the steal wrote.
        publish_bottom(&self.inner.bottom, self.bottom);
    }
}

impl<R: Reclaim> BatchThief for StealHalfThief<R> {
    type Dest = StealHalfOwner<R>;

    /// Claims up to `max` items of the steal range with one CAS. `copy`
    /// receives the array, the top index and the count, and copies the items
    /// out before the CAS (a successful CAS proves the copy current).
    ///
    /// A claim takes only items below the `bottom` it reads after its fence,
    /// and it never leaves an empty range behind: when it sees no item above
    /// its new top it leaves a range of one slot there, which the next claim
    /// takes as soon as the owner pushes an item into it. An empty range
    /// with items below `bottom` would make those items unstealable until
    /// the owner next pushes or pops, which a marker working from a private
    /// stack may not do for a long time.
    #[inline]
    fn claim<X>(
        &self,
        max: usize,
        stats: &mut ThiefStats,
        copy: impl FnOnce(&Buffer, usize, usize) -> X,
    ) -> Steal<(usize, X)> {
        let inner = &*self.inner;
        stats.steal_attempts += 1;
        let guard = R::pin();
        // Acquire: pairs with the release half of the CAS that wrote this
        // word (owner or thief), so the slots of the range are visible.
        let word = Range(inner.range.load(Ordering::Acquire));
        let range_len = word.len();
        if range_len == 0 {
            return Steal::Empty;
        }
        // SeqCst: pairs with the owner's SeqCst fence in `pop` (see there).
        fence(Ordering::SeqCst);
        // Acquire: pairs with the release store of `bottom` in `push` and
        // `commit`: the slots below it are visible.
        let bottom = inner.bottom.load(Ordering::Acquire);
        #[cfg(test)]
        tests::run_claim_hook();
        let top = word.top();
        // Only items below the bottom we read: the range may reach past it
        // (a range of one slot left at the bottom by a thief, or one that
        // `commit` armed before publishing its bottom). Below it, every slot
        // was written before that bottom was released.
        let wanted = range_len.min(max);
        let count = wanted.min(dist(bottom, top).max(0) as usize);
        if count < wanted {
            hit!(ShClaimClamped);
        }
        if count == 0 {
            return Steal::Empty;
        }
        let new_top = top.wrapping_add(count);
        // Room for the new range: below the bottom we read, and, if the owner
        // wrote this word, below its floor `top + 2 * range_len`, which the
        // owner may pop down to without a CAS while the word is unchanged.
        // Thieves keep a range of at most half of the items they saw; under
        // an owner's word, it also ends at or below the owner's floor. With
        // no item seen above `new_top`, the range is the one slot there: it
        // ends at `top + count + 1 <= top + 2 * range_len`, the floor.
        let seen = dist(bottom, new_top).max(0) as usize;
        let thief_len = target_len(seen).max(1);
        let new_len = if word.by_owner() {
            thief_len.min(floor_power_of_two(2 * range_len - count))
        } else {
            thief_len
        };
        let new = Range::new(word.tag(), new_top, new_len, false);
        let buffer = inner.buffer.thief_load(&guard);
        let copied = copy(buffer, top, count);
        stats.cas_attempted += 1;
        // SeqCst: totally ordered with the owner's CASes; its acquire half
        // pairs with the CAS that wrote `word`, its release half publishes
        // `new` to the next thief. Relaxed on failure: we discard the copy.
        match inner
            .range
            .compare_exchange(word.0, new.0, Ordering::SeqCst, Ordering::Relaxed)
        {
            Ok(_) => {
                // `word` was current from our load to the CAS, so `bottom`
                // was read while it was: the paper's invariant holds for it.
                check_invariant(new_len, seen);
                #[cfg(loom)]
                self.count_success(word, count, seen, max > 1, buffer);
                batch::claimed(stats, count, copied)
            }
            Err(_) => {
                hit!(ShStealAborted);
                batch::aborted(stats)
            }
        }
    }
}

impl<R: Reclaim> StealHalfThief<R> {
    /// Under loom: counts the branches a successful claim reached.
    #[cfg(loom)]
    fn count_success(&self, word: Range, count: usize, seen: usize, batch: bool, buffer: &Buffer) {
        let me = loom::thread::current().id();
        let previous = self.inner.last_thief.lock().unwrap().replace(me);
        if !word.by_owner() && count >= 2 && previous.is_some_and(|p| p != me) {
            hit!(ShChainedStealOfSeveral);
        }
        if seen == 0 {
            hit!(ShOptimisticRange);
        }
        if batch && buffer.is_retired() {
            hit!(ShStealHalfFromRetiredArray);
        }
        if (word.top() as u64 + count as u64) > TOP_MASK {
            hit!(ShTopFieldWrapped);
        }
    }
}

impl<R: Reclaim> crate::Thief for StealHalfThief<R> {
    type Owner = StealHalfOwner<R>;

    batch_steals!(
        /// Takes the whole steal range with one CAS, copying it straight into
        /// `dest`: between an eighth and a quarter of the victim's items when the
        /// owner armed the range, up to half of them when a thief did.
        ///
        /// Moves at most what `dest` can still hold (`MAX_CAPACITY` items in
        /// all), and nothing, as `Empty`, into a full `dest`.
        max: MAX_CAPACITY
    );

    fn len(&self) -> usize {
        // Acquire: pairs with the CAS that wrote the word and with the
        // release stores of `bottom` in `push` and `commit`. Only an estimate
        // (clamped at zero): nothing is read through these values.
        let word = Range(self.inner.range.load(Ordering::Acquire));
        let bottom = self.inner.bottom.load(Ordering::Acquire);
        dist(bottom, word.top()).max(0) as usize
    }
}

#[cfg(test)]
mod tests {
    #[cfg(not(loom))]
    use super::*;
    #[cfg(not(loom))]
    use crate::{Owner, Thief, WorkDeque};
    use std::cell::RefCell;

    thread_local! {
        /// Runs inside `claim` between the thief's load of `bottom` and its
        /// CAS, on the stealing thread: a deterministic interleaving.
        static CLAIM_HOOK: RefCell<Option<Box<dyn FnMut()>>> = RefCell::new(None);
    }

    /// Runs the claim hook, if one is set (test builds only).
    pub(super) fn run_claim_hook() {
        if let Some(mut hook) = CLAIM_HOOK.with(|h| h.borrow_mut().take()) {
            hook();
        }
    }

    /// Runs `hook` once, inside the next claim on this thread, between its
    /// load of `bottom` and its CAS.
    #[cfg(not(loom))]
    fn on_next_claim(hook: impl FnMut() + 'static) {
        CLAIM_HOOK.with(|h| *h.borrow_mut() = Some(Box::new(hook)));
    }

    /// Item 2 of the reliability issue: a thief reads `bottom` just before a
    /// push that still sees the owner's word (so the push does not re-arm),
    /// and then takes the last item it saw. It used to leave an empty range
    /// behind although an item remained: `Thief::len` said 1 and every steal
    /// said `Empty` until the owner's next push or pop.
    #[test]
    #[cfg(not(loom))]
    fn a_steal_racing_a_push_leaves_the_pushed_item_stealable() {
        let (owner, thief) = StealHalf::with_capacity(2);
        let owner = std::rc::Rc::new(RefCell::new(owner));
        owner.borrow_mut().push(1).unwrap();
        let pusher = std::rc::Rc::clone(&owner);
        on_next_claim(move || {
            // The push sees its own word: one item, range [0, 1), and the
            // length 2 is below the next re-arm point (8).
            pusher.borrow_mut().push(2).unwrap();
            assert_eq!(pusher.borrow().stats().cas_attempted, 1);
        });
        let mut stats = ThiefStats::default();
        assert_eq!(thief.steal(&mut stats), Steal::Success(1));
        let mut owner = owner.borrow_mut();
        assert_eq!((owner.len(), thief.len()), (1, 1));
        // The owner does nothing more with its deque (a marker working from
        // its private stack): the item must still be stealable.
        assert_eq!(owner.steal_range_len(), 1);
        assert_eq!(thief.steal(&mut stats), Steal::Success(2));
        // That steal saw no item above it and left the one slot at the
        // bottom stealable; with no item there a claim takes nothing (it
        // would read a slot nobody wrote).
        assert_eq!(owner.steal_range_len(), 1);
        assert_eq!(thief.steal(&mut stats), Steal::Empty);
        let (mut dest, _) = StealHalf::with_capacity(2);
        assert_eq!(thief.steal_half(&mut dest, &mut stats), Steal::Empty);
        // The owner's next pop takes the range back (one CAS), so that its
        // later pops return at once.
        assert_eq!(owner.pop(), None);
        assert_eq!(owner.steal_range_len(), 0);
        assert_eq!(owner.stats().cas_attempted, 2);
        assert_eq!(owner.pop(), None);
        assert_eq!(owner.stats().cas_attempted, 2);
        owner.push(3).unwrap();
        assert_eq!(thief.steal(&mut stats), Steal::Success(3));
    }

    #[test]
    #[cfg(not(loom))]
    fn range_word_round_trips() {
        let r = Range::new(TAG_MASK + 5, (1 << 28) + 17, 1 << 20, false);
        assert_eq!(
            (r.tag(), r.top(), r.len(), r.by_owner()),
            (4, 17, 1 << 20, false)
        );
        let r = Range::new(3, 5, 0, true);
        assert_eq!((r.tag(), r.top(), r.len(), r.by_owner()), (3, 5, 0, true));
        assert_eq!(dist(3, (1 << 28) - 2), 5);
        assert_eq!(dist(usize::MAX, 0), -1);
    }

    #[test]
    #[cfg(not(loom))]
    fn target_len_is_between_a_quarter_and_a_half() {
        for n in 1..1000 {
            let l = target_len(n);
            assert!(l.is_power_of_two());
            assert!(4 * l > n && (n < 2 || 2 * l <= n), "{n} -> {l}");
        }
        for n in 1..1000 {
            let l = owner_len(n);
            assert!(
                l.is_power_of_two() && 8 * l > n && (n < 8 || 4 * l <= n),
                "{n} -> {l}"
            );
        }
        assert_eq!((floor_power_of_two(0), floor_power_of_two(7)), (0, 4));
    }

    #[test]
    #[cfg(not(loom))]
    fn steal_one_and_half() {
        let (mut o, t) = StealHalf::with_capacity(2);
        let (mut d, _) = StealHalf::with_capacity(2);
        for i in 0..100 {
            o.push(i).unwrap();
        }
        assert_eq!(o.capacity(), 128);
        let mut s = ThiefStats::default();
        assert_eq!(t.steal(&mut s), Steal::Success(0));
        // The owner armed 16 (<= 100 / 4); the thief keeps 16 under the
        // owner's floor 0 + 2 * 16.
        assert_eq!(o.steal_range_len(), 16);
        // The owner sees the steal and re-arms for 100 items.
        o.push(100).unwrap();
        assert_eq!(o.steal_range_len(), 16);
        assert_eq!(t.steal_half(&mut d, &mut s), Steal::Success(16));
        assert_eq!((o.len(), d.len()), (84, 16));
        assert_eq!(s.cas_succeeded, 2);
        assert_eq!(d.pop(), Some(16));
        for i in (17..101).rev() {
            assert_eq!(o.pop(), Some(i));
        }
        assert_eq!(o.pop(), None);
        assert_eq!(o.capacity(), 2);
        assert_eq!(t.steal(&mut s), Steal::Empty);
    }
}
