//! An idempotent steal-half deque: the owner pushes and pops with plain
//! loads and stores (no fence, no CAS), thieves take half of the items with
//! one CAS, and every item comes out **at least once**: never lost, never
//! invented, but possibly twice, once to the owner and once to a thief, or
//! to two thieves. For marking, where scanning a grey object twice is
//! harmless, that trade removes the owner's fence from every pop.
//!
//! It is the idempotent double-ended deque of Michael, Vechev and Saraswat
//! ("Idempotent Work Stealing", PPoPP 2009), whose thieves take one item,
//! with StealHalf's batch steal carried over: a thief takes the older half
//! of what it sees with the same single CAS.
//!
//! # Layout
//!
//! Two words, on one cache line (the owner writes both on every pop, and
//! thieves read both):
//!
//! - the *anchor* (`AtomicU64`): `head` in the low 32 bits (the oldest
//!   item's index modulo 2^32) and a 32-bit `tag` in the high bits. Thieves
//!   CAS it to advance `head`; the owner *stores* it, with a new tag, at the
//!   end of every pop that takes an item;
//! - `bottom` (`AtomicUsize`): one past the youngest item, written only by
//!   the owner.
//!
//! Items live in `[head, bottom)` of Chase-Lev's circular array. It grows
//! when a push finds it full and never shrinks: like a marker's private
//! stack (a `Vec`), the deque keeps the largest array it needed until it is
//! dropped, so a deque that marks heap after heap grows only in its first
//! mark. (It used to shrink back to the initial capacity whenever a pop
//! found it empty, and then every mark of an 8M-object heap regrew it from
//! 4,096 slots: page faults and copies, 14-28 ms of system time per
//! pause.) A pop checks no size.
//!
//! # The owner's operations
//!
//! - A push writes the slot at `bottom` and publishes `bottom + 1`: one
//!   shared store, no load. Its room check counts from the owner's own copy
//!   of the head, which is never above the true head (only thieves advance
//!   it, and the owner's copy is the last head it loaded or stored); only a
//!   push that finds no room that way loads the anchor, and grows the array
//!   if the true length leaves none either.
//! - A pop stores `bottom - 1`, loads the anchor, reads the slot and stores
//!   the anchor with the head it loaded and a new tag: one load, two stores
//!   to the same line, no fence, no CAS. A pop that finds the deque empty
//!   from the owner's copy of the head touches no shared word.
//!
//! # Why nothing is lost
//!
//! A theft is lost only if a thief's CAS succeeds with a copy of a slot
//! that the owner has since written again: then the head moves past an item
//! that nobody took. The owner writes a slot again only with a push at an
//! index it popped before. That pop stored `bottom` below the index and
//! then the anchor with a new tag. A thief copies a slot only below a
//! `bottom` it read after acquiring the anchor. If it acquired the pop's
//! anchor (or a later one), it also sees the pop's lower `bottom`, so it
//! copies the slot only under a `bottom` that a later push published after
//! writing the new item: it copies the new item. If it loaded an older
//! anchor, its CAS fails on the tag. Pushes need no tag of their own.
//!
//! The pop's store of the anchor writes the head that the pop loaded. A
//! thief's CAS that landed in between is overwritten: the items it took
//! become visible again (the duplicates), and `head` is back at or below
//! `bottom`. A thief's CAS that lands after the store fails, because the
//! tag changed. So whatever a thief took beyond the owner's view (with a
//! `bottom` it read before a pop lowered it) is undone by the store of the
//! pop in progress. The owner's emptiness check compares `bottom` with the
//! head it loaded, which is never above the true head, so a stale load can
//! only make it take an item a thief took too. Nothing makes an item
//! vanish.
//!
//! # Why nothing is invented
//!
//! A thief copies only slots below the `bottom` it read, with an acquire
//! load, after acquiring the anchor; every such slot was written before that
//! `bottom` was released (or before the anchor was released, for slots the
//! owner's store made visible again), in the array the thief loads after
//! both. A copy is used only if the CAS succeeds, which proves that no owner
//! store replaced the anchor in between, so the owner cannot have lowered
//! `head` or reused those slots in an array the thief did not see, whether
//! or not the owner resized in between. A slot may hold a newer item than
//! the one the thief meant to take (the owner popped it and pushed another
//! between the thief's copy and its CAS, in a window that no store closed):
//! then the newer item is returned twice and the older one once, by the
//! owner.
//!
//! # How many times
//!
//! The owner returns each pushed item at most once (it pops index `j` once
//! per push to `j`). A thief takes an item only while it lies in
//! `[head, bottom)`; it is back there after a theft only if an owner store
//! overwrote that theft, and each pop overwrites only the thefts between
//! its own load and store of the anchor (a few instructions; pushes store
//! no anchor and overwrite nothing). So every extraction beyond the first
//! needs its own pop racing a theft of that item, and the crate's stress
//! test counts how rare that is. Neither the owner nor a
//! thief can tell that it took a duplicate (the owner would need an atomic
//! read-modify-write to see the theft it overwrites), so a user that wants
//! the number counts duplicates itself (a marker: objects scanned minus
//! objects marked).
//!
//! ```
//! use stealmark_deques::idempotent::Idempotent;
//! use stealmark_deques::{Owner, Steal, Thief, ThiefStats, WorkDeque};
//!
//! let (mut victim, thief) = Idempotent::with_capacity(4);
//! let (mut mine, _) = Idempotent::with_capacity(4);
//! for i in 0..9 {
//!     victim.push(i).unwrap();
//! }
//! let mut stats = ThiefStats::default();
//! // The older half, rounded up, with one CAS.
//! assert_eq!(thief.steal_half(&mut mine, &mut stats), Steal::Success(5));
//! assert_eq!(stats.cas_attempted, 1);
//! assert_eq!((victim.len(), mine.len()), (4, 5));
//! assert_eq!(victim.pop(), Some(8));
//! assert_eq!(mine.pop(), Some(4));
//! // The owner never CASes.
//! assert_eq!(victim.stats().cas_attempted, 0);
//! ```

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::Arc;

use crossbeam_utils::CachePadded;

use crate::batch::{self, batch_steals, BatchOwner, BatchThief};
use crate::buffer::{publish_bottom, Buffer, SharedBuffer};
pub use crate::buffer::{Epoch, Quiescent, Reclaim};
use crate::copies::{Horizon, Ticket};
use crate::handle::{arc_handles, array_methods, owner_methods, work_deque};
use crate::sync::{fence, AtomicU64, AtomicUsize, Ordering};
use crate::{DequeKind, OwnerStats, Steal, ThiefStats};

/// The most items an idempotent deque holds, and the largest array it grows
/// to (2^27 words, 1 GiB). Live indices must stay well within 2^31 of each
/// other for the 32-bit head; the limit is StealHalf's, so that a full deque
/// can be tested. A push into a full deque panics and changes nothing; a
/// `steal_half` into one moves only what fits.
pub const MAX_CAPACITY: usize = 1 << 27;

/// The idempotent steal-half kind (`idempotent`), with epoch-based
/// reclamation: items come out at least once (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct Idempotent;

work_deque!(Idempotent: IdempotentOwner<Epoch>, IdempotentThief<Epoch>, DequeKind::Idempotent);

/// The anchor word: `head` (mod 2^32) in the low half, `tag` in the high.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Anchor(u64);

impl Anchor {
    fn new(head: usize, tag: u32) -> Anchor {
        Anchor((u64::from(tag) << 32) | u64::from(head as u32))
    }

    /// The head, modulo 2^32.
    fn head(self) -> u32 {
        self.0 as u32
    }

    fn tag(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

/// `bottom - head`, for a full index `bottom` and a head modulo 2^32, as a
/// signed distance: negative when thieves moved the head past `bottom`.
fn dist(bottom: usize, head: u32) -> isize {
    (bottom as u32).wrapping_sub(head) as i32 as isize
}

/// Whether full index `a` lies after `b` (on the circle of 2^64 indices,
/// live ones well within 2^63 of each other).
fn after(a: usize, b: usize) -> bool {
    (a.wrapping_sub(b) as isize) > 0
}

/// A deque whose indices (and so the 32-bit head) start `before_wrap`
/// pushes before they wrap, and whose tag starts `before_wrap` owner
/// operations before it wraps (see `WorkDeque::with_capacity_near_wrap`).
fn new<R: Reclaim>(
    capacity: usize,
    before_wrap: usize,
) -> (IdempotentOwner<R>, IdempotentThief<R>) {
    let min_capacity = capacity.clamp(2, MAX_CAPACITY).next_power_of_two();
    let start = 0usize.wrapping_sub(before_wrap);
    let tag = 0u32.wrapping_sub(before_wrap as u32);
    let inner = Arc::new(Inner {
        ends: CachePadded::new(Ends {
            anchor: AtomicU64::new(Anchor::new(start, tag).0),
            bottom: AtomicUsize::new(start),
            announced: AtomicUsize::new(start),
            announcements: AtomicUsize::new(0),
        }),
        buffer: CachePadded::new(SharedBuffer::new(min_capacity)),
    });
    let owner = IdempotentOwner {
        inner: Arc::clone(&inner),
        bottom: start,
        head: start,
        tag,
        stolen_end: start,
        announcements: 0,
        #[cfg(loom)]
        loaded: Anchor::new(start, tag),
        stats: OwnerStats::default(),
        _not_sync: PhantomData,
    };
    (owner, IdempotentThief { inner })
}

/// The two words the owner writes on every operation, on one cache line.
struct Ends {
    /// `{tag, head}`: thieves CAS it, the owner stores it.
    anchor: AtomicU64,
    /// One past the youngest item (a full, wrapping index); owner writes.
    bottom: AtomicUsize,
    /// The highest end (a full, wrapping index) of the ranges that thieves
    /// announced before their CAS: a theft's end is announced, and a fence
    /// executed, before it can take an item (see [`Owner::horizon`](crate::Owner::horizon)).
    /// Only ever moves up; thieves write it, the owner reads it.
    announced: AtomicUsize,
    /// How many thefts announced their ends (wrapping): the owner's
    /// `horizon` looks at `announced` only when this changed.
    announcements: AtomicUsize,
}

struct Inner<R: Reclaim> {
    ends: CachePadded<Ends>,
    buffer: CachePadded<SharedBuffer<R>>,
}

/// The owner handle of an idempotent deque.
pub struct IdempotentOwner<R: Reclaim> {
    inner: Arc<Inner<R>>,
    /// The owner's copy of `bottom` (it is the only writer).
    bottom: usize,
    /// The full index of the head the owner last loaded or stored: never
    /// above the true head, which only thieves advance.
    head: usize,
    /// The tag of the owner's last store (thieves never change it).
    tag: u32,
    /// Items below this full index may have a copy elsewhere: they came in
    /// through a theft (a `steal_half` into this deque, or `push_copy`), or
    /// lay in the deque when a `horizon` saw a new theft announced (whose
    /// CAS may still land, and be overwritten by a later pop). Their
    /// tickets are marked stolen. A pop at `j` lowers it to `j` (every slot
    /// from `j` up is then free, and later pushes go there).
    stolen_end: usize,
    /// The count of `announcements` at the last `horizon`.
    announcements: usize,
    /// Under loom: the anchor the current operation loaded, to count the
    /// stores that overwrite a theft (`coverage`).
    #[cfg(loom)]
    loaded: Anchor,
    stats: OwnerStats,
    _not_sync: PhantomData<Cell<()>>,
}

/// A thief handle of an idempotent deque.
pub struct IdempotentThief<R: Reclaim> {
    inner: Arc<Inner<R>>,
}

arc_handles!(IdempotentOwner, IdempotentThief<R: Reclaim>, inner, [capacity]);

impl<R: Reclaim> IdempotentOwner<R> {
    /// A test hook: a deque with reclamation `R` (the `idempotent` kind is
    /// [`Epoch`]; the loom models use [`Quiescent`], whose steals pin
    /// nothing, to keep their state space small), made as by
    /// [`WorkDeque::with_capacity_near_wrap`](crate::WorkDeque::with_capacity_near_wrap).
    #[doc(hidden)]
    pub fn new_pair(capacity: usize, before_wrap: usize) -> (Self, IdempotentThief<R>) {
        new(capacity, before_wrap)
    }

    array_methods!();

    /// Loads the anchor and returns its head as a full index, at most
    /// `bottom`, the owner's bottom when the operation started, and
    /// remembers it as the owner's head.
    ///
    /// A thief's head never passes that bottom: it takes at most the items
    /// below a `bottom` it read after the anchor it CASes, and with no owner
    /// store since that anchor, at most this operation has changed `bottom`
    /// (a pop lowers it by one, but its head is checked against the bottom
    /// before the pop). Debug builds (and the loom models) assert it; a
    /// release build clamps, so that a broken assumption shows as an empty
    /// deque rather than a huge one.
    #[inline]
    fn load_head(&mut self, bottom: usize) -> usize {
        // Acquire: pairs with the release CAS of a thief, so that its reads
        // of the slots it took happen before we reuse those slots.
        let anchor = Anchor(self.inner.ends.anchor.load(Ordering::Acquire));
        debug_assert_eq!(anchor.tag(), self.tag, "only the owner changes the tag");
        #[cfg(loom)]
        {
            self.loaded = anchor;
        }
        let d = dist(bottom, anchor.head());
        debug_assert!(d >= 0, "a thief moved the head past the owner's bottom");
        self.head = bottom.wrapping_sub(d.max(0) as usize);
        self.head
    }

    /// Ends a pop: stores the anchor with `head` (loaded by this pop) and a
    /// new tag. A thief CAS since our load is overwritten (its items are
    /// visible again); one after this store fails.
    #[inline]
    fn store_anchor(&mut self, head: usize) {
        if self.tag == u32::MAX {
            hit!(IdTagWrapped);
        }
        self.tag = self.tag.wrapping_add(1);
        let anchor = Anchor::new(head, self.tag).0;
        // Release: pairs with the acquire load of the anchor in a steal: a
        // thief that reads this anchor also sees our earlier stores of
        // `bottom` (this pop's decrement) and of the slots below it (and
        // its CAS continues this store's release sequence for the next
        // thief).
        #[cfg(not(loom))]
        self.inner.ends.anchor.store(anchor, Ordering::Release);
        // Under loom, the same store as a swap whose result is ignored.
        // loom 0.7 lets a plain store squeeze between the read and the write
        // of a concurrent RMW on the same atomic (tokio-rs/loom#254, fix in
        // the unmerged PR #391): after our store it lets our own next load
        // return a thief CAS that C++ orders before the store (an RMW reads
        // the value just before it in modification order, [atomics.order]
        // p10), a false alarm. Every other writer of the anchor is an RMW,
        // so the store and the swap allow the same executions; the swap
        // only extends a thief CAS's release sequence, which nothing here
        // relies on. See `docs/design.md`.
        #[cfg(loom)]
        if self.inner.ends.anchor.swap(anchor, Ordering::Release) != self.loaded.0 {
            // A thief's CAS came between our load and this store.
            hit!(IdOwnerOverwroteSteal);
        }
    }

    /// The rare part of `horizon`: thefts were announced since the last
    /// call (`count` of them in all, read after the fence). Their highest
    /// end is read (after the same fence), and `stolen_end` rises to it.
    #[cold]
    #[inline(never)]
    fn new_announcements(&mut self, count: usize) -> Horizon {
        self.announcements = count;
        // Relaxed: ordered by the fence of `horizon` and the acquire load of
        // the count (see there).
        let end = self.inner.ends.announced.load(Ordering::Relaxed);
        if after(end, self.stolen_end) {
            self.stolen_end = end;
        }
        Horizon::at(end)
    }

    /// Publishes `count` items written above `bottom` (by a push, or by a
    /// steal into this deque). The only shared write of a push: the anchor
    /// is not touched (see the module docs, "Why nothing is lost").
    #[inline]
    fn publish(&mut self, count: usize) {
        let b = self.bottom.wrapping_add(count);
        // Release fence and relaxed store: see `publish_bottom`.
        publish_bottom(&self.inner.ends.bottom, b);
        self.bottom = b;
    }
}

impl<R: Reclaim> crate::Owner for IdempotentOwner<R> {
    type Thief = IdempotentThief<R>;

    #[inline]
    fn push(&mut self, item: usize) -> Result<(), usize> {
        let b = self.bottom;
        self.reserve(1).write(b as isize, item);
        self.publish(1);
        self.stats.pushes += 1;
        Ok(())
    }

    #[inline]
    fn pop(&mut self) -> Option<usize> {
        self.pop_ticketed().map(|(item, _)| item)
    }

    /// The pop; the ticket holds the index `j` popped, marked stolen if `j`
    /// lies below `stolen_end`. Forced inline: the marker's loop calls it
    /// once per grey object (out of line it was 2% of a 2-worker profile).
    #[inline(always)]
    fn pop_ticketed(&mut self) -> Option<(usize, Ticket)> {
        let b = self.bottom;
        // The head we last saw is never above the true head: if it is at
        // `b`, the deque is empty, without touching shared memory.
        if self.head == b {
            return None;
        }
        let j = b.wrapping_sub(1);
        // Relaxed: thieves that read it take fewer items; the release store
        // of the anchor below publishes it to those that acquire the anchor.
        self.inner.ends.bottom.store(j, Ordering::Relaxed);
        // No fence: a head loaded before a concurrent theft only makes us
        // take an item that the thief takes too.
        let head = self.load_head(b);
        if head == b {
            // Thieves took everything, with CASes we saw: the anchor holds
            // head `b` and a thief that loads it sees a bottom at most `b`.
            // Restore `bottom` (Relaxed: no item lies below it any more) and
            // leave the anchor alone.
            self.inner.ends.bottom.store(b, Ordering::Relaxed);
            return None;
        }
        let item = self.inner.buffer.owner_load().read(j as isize);
        self.bottom = j;
        // The new tag makes every theft that copied slot `j` (it read a
        // `bottom` above `j`) fail, before a push can write that slot.
        self.store_anchor(head);
        self.stats.pops += 1;
        let stolen = after(self.stolen_end, j);
        if stolen {
            self.stolen_end = j;
        }
        Some((item, Ticket::popped(j, stolen)))
    }

    /// One SeqCst fence, then the thefts announced since the last call:
    /// every theft that took an item that a pop before this call also took
    /// announced its range before that, and the announcement is seen here.
    /// With none new, the horizon is none: tickets share only if marked
    /// stolen. With some, it is their highest end, and `stolen_end` rises
    /// to it: a theft announced before this call may still land its CAS,
    /// until the owner's next anchor store, which then overwrites it; the
    /// items it copied are those in the deque now, below its end.
    ///
    /// Why: a pop returns an item a thief also took only if its anchor
    /// store `S` (or an earlier pop's) overwrote the thief's successful
    /// CAS `C`, so `C` precedes `S` in the anchor's modification order, and
    /// `S` is sequenced before our fence `F`. The thief's fence `Y` is
    /// sequenced before `C`. By [atomics.order] p4.4 (C++20: `Y` happens
    /// before `C`, `C` is coherence-ordered before `S`, `S` happens before
    /// `F`), `Y` precedes `F` in the single total order. The thief's
    /// announcement `N` (its `fetch_update` of `announced`) is sequenced
    /// before `Y`; if our relaxed load `L` after `F` read a value older
    /// than `N`'s in `announced`'s modification order, `L` would be
    /// coherence-ordered before `N`, and p4.4 again (`F` happens before
    /// `L`, `N` happens before `Y`) would put `F` before `Y`: a cycle. So
    /// `L` reads `N`'s value or a later one, which (the word only moves up)
    /// is at least the thief's end. The same holds when the thief's
    /// `fetch_update` wrote nothing because the word was already higher:
    /// its load is then coherence-ordered after that higher write. And the
    /// same for `announcements`, which the thief incremented before its
    /// fence: the count we load includes that theft, so a theft we had not
    /// seen at the last call changes it.
    ///
    /// Pairs with: the thief's `fence(SeqCst)` in `claim`. No other
    /// ordering: the two words carry no data.
    #[inline]
    fn horizon(&mut self) -> Horizon {
        fence(Ordering::SeqCst);
        // Acquire: pairs with the release increment of a thief, so that the
        // end it announced before is seen with its count (which the fence
        // alone guarantees only for the thefts that raced our pops: a count
        // may also be seen early). The fence: see the doc comment.
        let count = self.inner.ends.announcements.load(Ordering::Acquire);
        if count == self.announcements {
            return Horizon::NONE;
        }
        self.new_announcements(count)
    }

    /// A push whose item may have another copy (a single steal's): its
    /// ticket is marked stolen when popped.
    #[inline]
    fn push_copy(&mut self, item: usize) -> Result<(), usize> {
        self.push(item)?;
        self.stolen_end = self.bottom;
        Ok(())
    }

    fn len(&self) -> usize {
        // Relaxed: an estimate; exact for the owner when no thief runs.
        let anchor = Anchor(self.inner.ends.anchor.load(Ordering::Relaxed));
        dist(self.bottom, anchor.head()).max(0) as usize
    }

    owner_methods!(thief: IdempotentThief { inner }, quiesce);
}

impl<R: Reclaim> BatchOwner for IdempotentOwner<R> {
    fn bottom(&self) -> usize {
        self.bottom
    }

    /// Makes room for `extra` more items above `bottom` and returns the array
    /// to write them to. Panics (changing nothing) beyond `MAX_CAPACITY`.
    ///
    /// The length counted from the owner's head (never above the true
    /// head) is never below the true length: while it fits, no shared load
    /// is needed. Otherwise the anchor is loaded for the true length.
    #[inline]
    fn reserve(&mut self, extra: usize) -> &Buffer {
        let b = self.bottom;
        let capacity = self.inner.buffer.owner_load().capacity();
        if b.wrapping_sub(self.head) + extra <= capacity {
            return self.inner.buffer.owner_load();
        }
        self.grow(extra)
    }

    /// Publishes a batch steal's items: they are copies, and may have
    /// another (an owner store may overwrite the theft), so everything
    /// below the new bottom is marked stolen.
    fn commit(&mut self, count: usize) {
        self.publish(count);
        self.stolen_end = self.bottom;
    }
}

impl<R: Reclaim> IdempotentOwner<R> {
    /// The slow path of `reserve`: loads the head, and grows the array if
    /// the true length leaves no room for `extra` more items.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, extra: usize) -> &Buffer {
        let b = self.bottom;
        let head = self.load_head(b);
        let len = b.wrapping_sub(head);
        let buffer = self.inner.buffer.owner_load();
        if len + extra <= buffer.capacity() {
            return buffer;
        }
        assert!(
            len + extra <= MAX_CAPACITY,
            "idempotent deque would exceed its maximum capacity of {MAX_CAPACITY} items"
        );
        // Thieves read at most `[head, b)` (the head only advances until a
        // pop's store, and no pop runs during this push), which the new array
        // holds.
        self.inner
            .buffer
            .replace((len + extra).next_power_of_two(), head as isize, b as isize)
    }
}

impl<R: Reclaim> BatchThief for IdempotentThief<R> {
    type Dest = IdempotentOwner<R>;

    /// Takes up to `max` items from the head with one CAS: half of what it
    /// sees, rounded up, at most `max`. `copy` receives the array, the head
    /// (modulo 2^32) and the count, and copies the items out before the CAS
    /// (a successful CAS proves that no owner store came in between).
    #[inline]
    fn claim<X>(
        &self,
        max: usize,
        stats: &mut ThiefStats,
        copy: impl FnOnce(&Buffer, usize, usize) -> X,
    ) -> Steal<(usize, X)> {
        let ends = &*self.inner.ends;
        stats.steal_attempts += 1;
        let guard = R::pin();
        // Acquire: pairs with the owner's release store of the anchor (or a
        // thief CAS in its release sequence): the `bottom` we read next is
        // at least the one the owner stored before this anchor.
        let anchor = Anchor(ends.anchor.load(Ordering::Acquire));
        // Acquire: pairs with the owner's release store of `bottom`: the
        // slots below it, and the array holding them, are visible.
        let bottom = ends.bottom.load(Ordering::Acquire);
        let n = dist(bottom, anchor.head());
        if n <= 0 {
            return Steal::Empty;
        }
        let count = (n as usize).div_ceil(2).min(max);
        let head = anchor.head() as usize;
        let buffer = self.inner.buffer.thief_load(&guard);
        let copied = copy(buffer, head, count);
        // Announce the end of the range before the CAS that may take it, as
        // a full index (the owner compares it with the indices it pops):
        // the wrapping maximum of what the word holds and ours.
        let end = bottom.wrapping_sub(n as usize).wrapping_add(count);
        // Relaxed: the fence below orders it before the CAS for the owner's
        // `horizon`. A failed update leaves a higher end, which our load
        // read (and the fence orders that read the same way).
        let _ = ends
            .announced
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |seen| {
                after(end, seen).then_some(end)
            });
        // Release: pairs with the owner's acquire load of the count in
        // `horizon`: an owner that sees this count (by the fence, or just
        // early) also sees our end, written before. Without it, an early
        // count could come with an old end, and the owner, taking the count
        // as seen, would never look at our end again.
        ends.announcements.fetch_add(1, Ordering::Release);
        // SeqCst: pairs with the owner's fence in `horizon` (see there): if
        // an owner store overwrites our CAS, that fence sees our end.
        fence(Ordering::SeqCst);
        let new = Anchor::new(head.wrapping_add(count), anchor.tag());
        stats.cas_attempted += 1;
        // Release on success: pairs with the owner's acquire load of the
        // anchor, so that our slot reads happen before it reuses the slots;
        // the success itself (a read-modify-write reads the latest anchor)
        // proves no owner store came since our load. Relaxed on failure: we
        // discard the copy.
        match ends
            .anchor
            .compare_exchange(anchor.0, new.0, Ordering::Release, Ordering::Relaxed)
        {
            Ok(_) => {
                #[cfg(loom)]
                {
                    if buffer.is_retired() {
                        hit!(IdStealFromRetiredArray);
                    }
                    if count >= 2 {
                        hit!(IdStealOfSeveral);
                    }
                    if new.head() < anchor.head() {
                        hit!(IdHeadFieldWrapped);
                    }
                }
                batch::claimed(stats, count, copied)
            }
            Err(_current) => {
                hit!(IdStealAborted);
                #[cfg(loom)]
                if Anchor(_current).head() == anchor.head() {
                    hit!(IdStaleCopyRejected);
                }
                batch::aborted(stats)
            }
        }
    }
}

impl<R: Reclaim> crate::Thief for IdempotentThief<R> {
    type Owner = IdempotentOwner<R>;

    batch_steals!(
        /// Takes the older half of the items (rounded up) with one CAS, copying
        /// them straight into `dest`; at most what `dest` can still hold, and
        /// nothing, as `Empty`, into a full `dest`.
        max: MAX_CAPACITY
    );

    fn len(&self) -> usize {
        // Acquire: as in `claim`. Only an estimate (clamped at zero):
        // nothing is read through these values.
        let anchor = Anchor(self.inner.ends.anchor.load(Ordering::Acquire));
        let bottom = self.inner.ends.bottom.load(Ordering::Acquire);
        dist(bottom, anchor.head()).max(0) as usize
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::{Owner, Thief, WorkDeque};

    #[test]
    fn anchor_round_trips_and_distances_wrap() {
        let a = Anchor::new((1 << 32) + 17, u32::MAX);
        assert_eq!((a.head(), a.tag()), (17, u32::MAX));
        assert_eq!(dist(3, u32::MAX - 1), 5);
        assert_eq!(dist(usize::MAX, 0), -1);
        assert_eq!(dist(1 << 40, 0), 0);
    }

    #[test]
    fn steals_and_pops_without_owner_cas() {
        let (mut o, t) = Idempotent::with_capacity(2);
        let (mut d, _) = Idempotent::with_capacity(2);
        for i in 0..100 {
            o.push(i).unwrap();
        }
        assert_eq!(o.capacity(), 128);
        let mut s = ThiefStats::default();
        assert_eq!(t.steal(&mut s), Steal::Success(0));
        assert_eq!(t.steal_half(&mut d, &mut s), Steal::Success(50));
        assert_eq!((o.len(), d.len(), t.len()), (49, 50, 49));
        assert_eq!(d.pop(), Some(50));
        for i in (51..100).rev() {
            assert_eq!(o.pop(), Some(i));
        }
        // Emptied, the deque keeps its array.
        assert_eq!(o.pop(), None);
        assert_eq!(o.capacity(), 128);
        assert_eq!(t.steal(&mut s), Steal::Empty);
        assert_eq!(o.stats().cas_attempted, 0);
        assert_eq!(s.cas_attempted, 2);
        // Thieves emptying the deque: the owner's next pop finds it empty
        // and keeps the array; pushing as many items again grows nothing.
        for i in 0..128 {
            o.push(i).unwrap();
        }
        for _ in 0..8 {
            assert!(t.steal_half(&mut d, &mut s).success().is_some());
        }
        assert_eq!(t.steal(&mut s), Steal::Empty);
        assert_eq!(o.pop(), None);
        assert_eq!(o.capacity(), 128);
        // (Under Miri the epoch kind keeps retired arrays: count new ones.)
        let retired = o.retired();
        for i in 0..128 {
            o.push(i).unwrap();
        }
        assert_eq!((o.capacity(), o.retired()), (128, retired));
    }

    /// A pop whose anchor load missed a theft returns the stolen item too,
    /// and its store makes the stolen items visible again: duplicates,
    /// never a loss. Played out by hand: the "theft" is a CAS on the anchor
    /// between the owner's load and store.
    #[test]
    fn an_owner_store_over_a_theft_duplicates_and_loses_nothing() {
        let (mut o, t) = Idempotent::with_capacity(4);
        for i in 0..4 {
            o.push(i).unwrap();
        }
        // What a pop does, with a thief's CAS in the middle.
        let b = o.bottom;
        o.inner.ends.bottom.store(b - 1, Ordering::Relaxed);
        let head = o.load_head(b);
        let mut s = ThiefStats::default();
        let (mut d, _) = Idempotent::with_capacity(4);
        // The thief read `bottom` = 3 and takes [0, 2).
        assert_eq!(t.steal_half(&mut d, &mut s), Steal::Success(2));
        let item = o.inner.buffer.owner_load().read((b - 1) as isize);
        o.bottom = b - 1;
        o.store_anchor(head);
        assert_eq!(item, 3);
        // Items 0 and 1 are in both deques now; nothing is missing.
        let mut got = vec![item];
        got.extend(std::iter::from_fn(|| o.pop()));
        got.extend(std::iter::from_fn(|| d.pop()));
        got.sort_unstable();
        assert_eq!(got, [0, 0, 1, 1, 2, 3]);
    }
}
