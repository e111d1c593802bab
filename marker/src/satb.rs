//! The queue between the write barrier's per-thread buffers and the
//! marker, during a mark cycle ([`crate::MarkCycle`]).
//!
//! A mutator thread owns one buffer ([`crate::MutatorBuffer`]) and appends
//! its barrier's entries (the old value of every reference slot it
//! overwrites, or what the incremental-update barrier records), without
//! any synchronisation. A full buffer (or a partial one, when the thread
//! flushes: on its way into native code, or when it stops using its
//! buffer) is *handed off*: pushed on the queue's list of full buffers
//! under the queue's lock, in exchange for an empty one. The coordinator
//! of the background marking takes every full buffer at once and marks
//! from their entries, or parks on the queue's condition variable while
//! there are none. At the remark the queue says how many buffers are still
//! held by threads: none, or the remark cannot complete the snapshot.
//!
//! The queue is bounded: at most [`Queue::limit`] buffers wait handed off
//! (a multiple of the threads that mark and of the buffers held), and at
//! most as many empty ones are kept for reuse. A hand-off beyond the limit
//! is refused ([`HandOff::Full`]) and the thread applies back-pressure
//! (`crate::cycle`) before it tries again. The queue carries entries of any
//! `Copy` type (`E`): a cycle's are objects to shade (overwritten
//! references, or values stored) and holders to rescan.
//!
//! Everything here is under one lock, taken once per [`BUFFER_CAPACITY`]
//! barrier entries: the hand-off is the barrier's slow path, not its fast
//! one. Under `--cfg loom` the lock and the condition variables are loom's,
//! and `loom_tests` explores the hand-off, the back-pressure and the
//! remark's accounting.

#[cfg(loom)]
use loom::sync::{
    atomic::{AtomicBool, Ordering},
    Condvar, Mutex, MutexGuard,
};
#[cfg(not(loom))]
use std::sync::{
    atomic::{AtomicBool, Ordering},
    Condvar, Mutex, MutexGuard,
};

use std::time::Duration;

#[cfg(all(test, loom))]
mod loom_tests;
#[cfg(all(test, not(loom)))]
mod tests;

/// Entries per barrier buffer (G1's default SATB buffer size, 1K).
pub const BUFFER_CAPACITY: usize = 1024;

/// A barrier buffer.
pub(crate) type Buffer<E> = Vec<E>;

/// The queue of one mark cycle.
pub(crate) struct Queue<E> {
    state: Mutex<State<E>>,
    /// The coordinator parks here while no buffer is full and the cycle is
    /// not stopping.
    work: Condvar,
    /// Threads waiting for room (back-pressure) or for quiet park here.
    progress: Condvar,
    /// Buffers handed off per marking thread and per held buffer.
    per_thread: usize,
    /// Threads that mark (the marker's workers).
    markers: usize,
    /// `State::failed`, readable without the lock: the barrier's fast path
    /// refuses a poisoned cycle without taking the lock.
    failed: AtomicBool,
    /// The remark has begun (or the cycle was abandoned): no buffer can be
    /// taken or handed off any more. Set under the lock, and read with or
    /// without it: a detached handle's null write asks it on every call.
    ended: AtomicBool,
}

/// The queue's state, under its lock.
struct State<E> {
    /// Buffers handed off and not yet taken.
    full: Vec<Buffer<E>>,
    /// Empty buffers, for the next hand-offs.
    free: Vec<Buffer<E>>,
    /// Buffers held by mutator threads.
    held: usize,
    /// Buffers allocated and not yet freed, and their most at any time.
    live: usize,
    peak: usize,
    /// Objects and bytes the released buffers allocated black.
    allocated: (u64, u64),
    /// Buffers handed off, in all; refusals for want of room.
    handed_off: u64,
    refused: u64,
    /// Times full buffers were taken (wakes threads waiting for room).
    taken: u64,
    /// The background marking runs (from its start to its stop's join).
    running: bool,
    /// The background marking is to stop (the mutators' part is over).
    stop: bool,
    /// The coordinator waits with nothing to do (or has exited).
    quiet: bool,
    /// A part of the cycle panicked: entries are dropped, nobody waits.
    failed: bool,
    /// Loom models (`loom_tests`) only: times the coordinator parked, and hand-offs that
    /// woke it.
    #[cfg(all(test, loom))]
    parked: usize,
    #[cfg(all(test, loom))]
    woke: usize,
}

/// What [`Queue::hand_off`] did with a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HandOff {
    /// Queued; the caller holds an empty buffer.
    Queued,
    /// Not queued: the limit is reached. The caller applies back-pressure,
    /// then tries again; `taken` is the count to give [`Queue::wait_room`].
    Full { taken: u64 },
    /// Dropped: the cycle failed (its result is never reported) or ended.
    Dropped,
}

/// Why the queue refuses a buffer or a background start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Closed {
    /// A part of the cycle panicked.
    Failed,
    /// The remark has begun, or the cycle was abandoned.
    Ended,
    /// The background marking already runs.
    Running,
}

/// What the coordinator gets from [`Queue::next_work`].
pub(crate) enum Work<E> {
    /// Full buffers to mark from (to give back through [`Queue::recycle`]).
    Buffers(Vec<Buffer<E>>),
    /// No buffer is full and the background marking is to stop.
    Stop,
}

/// The queue's figures over the cycle ([`Queue::totals`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Totals {
    pub(crate) allocated: (u64, u64),
    pub(crate) handed_off: u64,
    pub(crate) refused: u64,
    pub(crate) peak_buffers: usize,
}

impl<E: Copy> Queue<E> {
    /// A queue that lets `per_thread` buffers wait per marking thread
    /// (`markers` of them) and per buffer held, with the empty buffers
    /// `free` (an earlier cycle's) to use first.
    pub(crate) fn new(markers: usize, per_thread: usize, free: Vec<Buffer<E>>) -> Queue<E> {
        let live = free.len();
        Queue {
            state: Mutex::new(State {
                full: Vec::new(),
                free,
                held: 0,
                live,
                peak: live,
                allocated: (0, 0),
                handed_off: 0,
                refused: 0,
                taken: 0,
                running: false,
                stop: false,
                quiet: false,
                failed: false,
                #[cfg(all(test, loom))]
                parked: 0,
                #[cfg(all(test, loom))]
                woke: 0,
            }),
            work: Condvar::new(),
            progress: Condvar::new(),
            per_thread: per_thread.max(1),
            markers: markers.max(1),
            failed: AtomicBool::new(false),
            ended: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<E>> {
        // A panic under this lock leaves the state consistent (every update
        // is a single push, pop or counter change): poisoning is ignored.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The most buffers that may wait handed off while `held` are held.
    fn limit(&self, held: usize) -> usize {
        self.per_thread * (self.markers + held)
    }

    /// An empty buffer: a free one, or a new one (counted).
    fn empty(&self, st: &mut State<E>) -> Buffer<E> {
        st.free.pop().unwrap_or_else(|| {
            st.live += 1;
            st.peak = st.peak.max(st.live);
            Vec::with_capacity(BUFFER_CAPACITY)
        })
    }

    /// Keeps `buffer` for reuse, or frees it if enough are kept.
    fn keep(&self, st: &mut State<E>, mut buffer: Buffer<E>) {
        if buffer.capacity() == 0 {
            return;
        }
        if st.free.len() < self.limit(st.held) {
            buffer.clear();
            st.free.push(buffer);
        } else {
            st.live = st.live.saturating_sub(1);
        }
    }

    /// A mutator thread takes a buffer (empty, with room for
    /// [`BUFFER_CAPACITY`] entries); refused once the cycle has ended.
    pub(crate) fn acquire(&self) -> Result<Buffer<E>, Closed> {
        let mut st = self.lock();
        if self.ended() {
            return Err(Closed::Ended);
        }
        st.held += 1;
        Ok(self.empty(&mut st))
    }

    /// Hands off `buffer` (full, or partial on a flush), replacing it with
    /// an empty one, and wakes the coordinator if it is parked; or refuses
    /// it while the limit is reached ([`HandOff::Full`]).
    pub(crate) fn hand_off(&self, buffer: &mut Buffer<E>) -> HandOff {
        let mut st = self.lock();
        if st.failed || self.ended() {
            buffer.clear();
            return HandOff::Dropped;
        }
        if st.full.len() >= self.limit(st.held) {
            st.refused += 1;
            return HandOff::Full { taken: st.taken };
        }
        let empty = self.empty(&mut st);
        st.full.push(std::mem::replace(buffer, empty));
        st.handed_off += 1;
        if st.quiet && !st.stop {
            st.quiet = false;
            #[cfg(all(test, loom))]
            {
                st.woke += 1;
            }
            // Under the lock, which the coordinator holds from its check of
            // `full` to its wait: the wake-up cannot fall in between.
            self.work.notify_one();
        }
        HandOff::Queued
    }

    /// Back-pressure: waits until full buffers were taken since `taken`
    /// (from [`HandOff::Full`]), the cycle failed or ended, or `patience`
    /// passed. Whether to try again at once (something changed).
    pub(crate) fn wait_room(&self, taken: u64, patience: Option<Duration>) -> bool {
        let mut st = self.lock();
        let changed = |st: &State<E>| st.taken != taken || st.failed || self.ended();
        while !changed(&st) {
            st = match patience {
                None => self.progress.wait(st).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let (st, timeout) = self
                        .progress
                        .wait_timeout(st, d)
                        .unwrap_or_else(|e| e.into_inner());
                    if timeout.timed_out() {
                        return changed(&st);
                    }
                    st
                }
            };
        }
        true
    }

    /// A mutator thread gives its buffer back (emptied by a hand-off
    /// first), and counts the objects and bytes it allocated black.
    pub(crate) fn release(&self, buffer: Buffer<E>, allocated: (u64, u64)) {
        let mut st = self.lock();
        st.held -= 1;
        st.allocated.0 += allocated.0;
        st.allocated.1 += allocated.1;
        self.keep(&mut st, buffer);
    }

    /// Marks the progress of a marking thread (wakes threads waiting for
    /// room, which may then help).
    pub(crate) fn progressed(&self) {
        let mut st = self.lock();
        st.taken += 1;
        self.progress.notify_all();
    }

    /// The coordinator's wait: every full buffer, as soon as there is one;
    /// [`Work::Stop`] once none is full and the cycle is stopping (or
    /// failed, or ended: a background started beside a remark stops).
    pub(crate) fn next_work(&self) -> Work<E> {
        let mut st = self.lock();
        loop {
            if !st.full.is_empty() {
                st.quiet = false;
                st.taken += 1;
                self.progress.notify_all();
                return Work::Buffers(std::mem::take(&mut st.full));
            }
            if st.stop || st.failed || self.ended() {
                st.quiet = true;
                self.progress.notify_all();
                return Work::Stop;
            }
            st.quiet = true;
            self.progress.notify_all();
            #[cfg(all(test, loom))]
            {
                st.parked += 1;
            }
            st = self.work.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Full buffers, without waiting (an incremental step's).
    pub(crate) fn take_full(&self) -> Vec<Buffer<E>> {
        let mut st = self.lock();
        st.taken += 1;
        self.progress.notify_all();
        std::mem::take(&mut st.full)
    }

    /// Gives emptied buffers back for reuse (or frees them, beyond the
    /// number kept).
    pub(crate) fn recycle(&self, buffers: impl Iterator<Item = Buffer<E>>) {
        let mut st = self.lock();
        for b in buffers {
            self.keep(&mut st, b);
        }
    }

    /// Starts a background phase; refused while one runs, once the cycle
    /// failed or ended.
    pub(crate) fn start(&self) -> Result<(), Closed> {
        let mut st = self.lock();
        if st.failed {
            return Err(Closed::Failed);
        }
        if self.ended() {
            return Err(Closed::Ended);
        }
        if st.running {
            return Err(Closed::Running);
        }
        st.running = true;
        st.stop = false;
        st.quiet = false;
        Ok(())
    }

    /// Ends the background marking: the coordinator returns once no buffer
    /// is full.
    pub(crate) fn stop(&self) {
        let mut st = self.lock();
        st.stop = true;
        self.work.notify_all();
    }

    /// The coordinator has exited (stopped, or a worker panicked): the
    /// background is quiet from now on.
    pub(crate) fn exited(&self) {
        let mut st = self.lock();
        st.quiet = true;
        self.progress.notify_all();
    }

    /// The background phase is over (its coordinator joined): another may
    /// start.
    pub(crate) fn joined(&self) {
        self.lock().running = false;
    }

    /// A part of the cycle panicked: entries handed off from now on are
    /// dropped, waiting threads return, the background counts as quiet.
    pub(crate) fn fail(&self) {
        let mut st = self.lock();
        st.failed = true;
        // Release: pairs with the Acquire load of `failed`.
        self.failed.store(true, Ordering::Release);
        self.work.notify_all();
        self.progress.notify_all();
    }

    /// Whether the cycle has ended (without taking the lock).
    #[inline]
    pub(crate) fn ended(&self) -> bool {
        // Acquire: pairs with the Release stores in `close` and `abandon`.
        self.ended.load(Ordering::Acquire)
    }

    /// Whether a part of the cycle panicked (without taking the lock).
    #[inline]
    pub(crate) fn failed(&self) -> bool {
        // Acquire: pairs with the Release store of `fail`.
        self.failed.load(Ordering::Acquire)
    }

    /// Whether the background marking has nothing to do: the coordinator
    /// waits for a buffer (or has stopped) and none is full; or the cycle
    /// failed. Buffers that mutator threads still hold may have entries.
    pub(crate) fn is_quiet(&self) -> bool {
        let st = self.lock();
        (st.quiet && st.full.is_empty()) || st.failed
    }

    /// Blocks until [`Queue::is_quiet`] holds, the background is not
    /// running, or `patience` passed; whether it is quiet.
    pub(crate) fn wait_quiet(&self, patience: Option<Duration>) -> bool {
        let mut st = self.lock();
        let quiet = |st: &State<E>| (st.quiet && st.full.is_empty()) || st.failed;
        while !quiet(&st) && st.running && !st.stop {
            st = match patience {
                None => self.progress.wait(st).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let (st, timeout) = self
                        .progress
                        .wait_timeout(st, d)
                        .unwrap_or_else(|e| e.into_inner());
                    if timeout.timed_out() {
                        return quiet(&st);
                    }
                    st
                }
            };
        }
        quiet(&st)
    }

    /// The remark's start: every buffer handed off and not yet taken, and
    /// the cycle ends (no buffer can be taken any more); or the number of
    /// buffers still held by mutator threads (which the remark cannot
    /// read), and nothing changes.
    pub(crate) fn close(&self) -> Result<Vec<Buffer<E>>, usize> {
        let mut st = self.lock();
        if st.held > 0 {
            return Err(st.held);
        }
        // Release: pairs with the Acquire load in `ended` (readers that
        // hold the lock are ordered by it too).
        self.ended.store(true, Ordering::Release);
        self.progress.notify_all();
        Ok(std::mem::take(&mut st.full))
    }

    /// Ends the cycle without a remark: buffers still held are dropped as
    /// their threads give them back.
    pub(crate) fn abandon(&self) {
        let mut st = self.lock();
        // Release: pairs with the Acquire load in `ended` (readers that
        // hold the lock are ordered by it too).
        self.ended.store(true, Ordering::Release);
        let full = std::mem::take(&mut st.full);
        for b in full {
            self.keep(&mut st, b);
        }
        self.work.notify_all();
        self.progress.notify_all();
    }

    /// Takes the buffers kept for reuse, for the next cycle: as many as
    /// this cycle kept at its end (at most its bound on waiting buffers,
    /// with the buffers held then).
    pub(crate) fn take_free(&self) -> Vec<Buffer<E>> {
        let mut st = self.lock();
        st.live = st.live.saturating_sub(st.free.len());
        std::mem::take(&mut st.free)
    }

    /// The queue's figures over the cycle.
    pub(crate) fn totals(&self) -> Totals {
        let st = self.lock();
        Totals {
            allocated: st.allocated,
            handed_off: st.handed_off,
            refused: st.refused,
            peak_buffers: st.peak,
        }
    }

    /// Loom models only: (coordinator parks, hand-offs that woke it).
    #[cfg(all(test, loom))]
    fn branch_counts(&self) -> (usize, usize) {
        let st = self.lock();
        (st.parked, st.woke)
    }
}
