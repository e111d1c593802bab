//! The queue between the write barrier's per-thread buffers and the
//! marker, during a mark cycle ([`crate::MarkCycle`]).
//!
//! A mutator thread owns one buffer ([`crate::MutatorBuffer`]) and appends
//! the old value of every reference slot it overwrites, without any
//! synchronisation. A full buffer (or a partial one, when the thread
//! flushes: on its way into native code, or when it stops using its
//! buffer) is *handed off*: pushed on the queue's list of full buffers
//! under the queue's lock, in exchange for an empty one. The coordinator
//! of the background marking takes every full buffer at once and marks
//! from their entries, or parks on the queue's condition variable while
//! there are none. At the remark the queue says how many buffers are still
//! held by threads: none, or the remark cannot complete the snapshot.
//!
//! Everything here is under one lock, taken once per [`BUFFER_CAPACITY`]
//! barrier entries: the hand-off is the barrier's slow path, not its fast
//! one. Under `--cfg loom` the lock and the condition variable are loom's,
//! and `loom_tests` explores the hand-off and the remark's accounting.

#[cfg(loom)]
use loom::sync::{Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
use std::sync::{Condvar, Mutex, MutexGuard};

use stealmark_model::ObjRef;

#[cfg(all(test, loom))]
mod loom_tests;
#[cfg(all(test, not(loom)))]
mod tests;

/// Entries per barrier buffer (G1's default SATB buffer size, 1K).
pub const BUFFER_CAPACITY: usize = 1024;

/// The queue of one mark cycle.
pub(crate) struct Queue {
    state: Mutex<State>,
    /// The coordinator parks here while no buffer is full and the cycle is
    /// not stopping.
    work: Condvar,
}

/// The queue's state, under its lock.
#[derive(Default)]
struct State {
    /// Buffers handed off and not yet taken.
    full: Vec<Vec<ObjRef>>,
    /// Empty buffers, for the next hand-offs.
    free: Vec<Vec<ObjRef>>,
    /// Buffers held by mutator threads.
    held: usize,
    /// Objects the released buffers allocated black.
    allocated: u64,
    /// Buffers handed off, in all.
    handed_off: u64,
    /// The background marking is to stop (the mutators' part is over).
    stop: bool,
    /// The coordinator waits with nothing to do (or has exited).
    quiet: bool,
    /// Loom models (`loom_tests`) only: times the coordinator parked, and hand-offs that
    /// woke it.
    #[cfg(all(test, loom))]
    parked: usize,
    #[cfg(all(test, loom))]
    woke: usize,
}

/// What the coordinator gets from [`Queue::next_work`].
pub(crate) enum Work {
    /// Full buffers to mark from (to give back through [`Queue::recycle`]).
    Buffers(Vec<Vec<ObjRef>>),
    /// No buffer is full and the background marking is to stop.
    Stop,
}

impl Queue {
    pub(crate) fn new() -> Queue {
        Queue {
            state: Mutex::new(State::default()),
            work: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic under this lock leaves the state consistent (every update
        // is a single push, pop or counter change): poisoning is ignored.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A mutator thread takes a buffer (empty, with room for
    /// [`BUFFER_CAPACITY`] entries).
    pub(crate) fn acquire(&self) -> Vec<ObjRef> {
        let mut st = self.lock();
        st.held += 1;
        st.free
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(BUFFER_CAPACITY))
    }

    /// Hands off `buffer` (full, or partial on a flush), replacing it with
    /// an empty one, and wakes the coordinator if it is parked.
    pub(crate) fn hand_off(&self, buffer: &mut Vec<ObjRef>) {
        let mut st = self.lock();
        let empty = st
            .free
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(BUFFER_CAPACITY));
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
    }

    /// A mutator thread gives its buffer back: its entries are handed off
    /// (if any), and `allocated` objects it allocated black are counted.
    pub(crate) fn release(&self, mut buffer: Vec<ObjRef>, allocated: u64) {
        if !buffer.is_empty() {
            self.hand_off(&mut buffer);
        }
        let mut st = self.lock();
        st.held -= 1;
        st.allocated += allocated;
        buffer.clear();
        st.free.push(buffer);
    }

    /// The coordinator's wait: every full buffer, as soon as there is one;
    /// [`Work::Stop`] once none is full and the cycle is stopping.
    pub(crate) fn next_work(&self) -> Work {
        let mut st = self.lock();
        loop {
            if !st.full.is_empty() {
                st.quiet = false;
                return Work::Buffers(std::mem::take(&mut st.full));
            }
            if st.stop {
                st.quiet = true;
                return Work::Stop;
            }
            st.quiet = true;
            #[cfg(all(test, loom))]
            {
                st.parked += 1;
            }
            st = self.work.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Full buffers, without waiting (an incremental step's).
    pub(crate) fn take_full(&self) -> Vec<Vec<ObjRef>> {
        std::mem::take(&mut self.lock().full)
    }

    /// Gives emptied buffers back for reuse.
    pub(crate) fn recycle(&self, buffers: impl Iterator<Item = Vec<ObjRef>>) {
        let mut st = self.lock();
        for mut b in buffers {
            b.clear();
            st.free.push(b);
        }
    }

    /// Ends the background marking: the coordinator returns once no buffer
    /// is full. Also called when it has exited (a worker panicked), so that
    /// [`Queue::is_quiet`] holds from then on.
    pub(crate) fn stop(&self) {
        let mut st = self.lock();
        st.stop = true;
        self.work.notify_all();
    }

    /// Prepares for another background phase of the same cycle.
    pub(crate) fn restart(&self) {
        let mut st = self.lock();
        st.stop = false;
        st.quiet = false;
    }

    /// Whether the background marking has nothing to do: the coordinator
    /// waits for a buffer (or has stopped) and none is full. Buffers that
    /// mutator threads still hold may have entries.
    pub(crate) fn is_quiet(&self) -> bool {
        let st = self.lock();
        st.quiet && st.full.is_empty()
    }

    /// At the remark: every buffer handed off and not yet taken, or the
    /// number of buffers still held by mutator threads (which the remark
    /// cannot read).
    pub(crate) fn take_remaining(&self) -> Result<Vec<Vec<ObjRef>>, usize> {
        let mut st = self.lock();
        if st.held > 0 {
            return Err(st.held);
        }
        Ok(std::mem::take(&mut st.full))
    }

    /// Objects allocated black and buffers handed off, over the cycle.
    pub(crate) fn totals(&self) -> (u64, u64) {
        let st = self.lock();
        (st.allocated, st.handed_off)
    }

    /// Loom models only: (coordinator parks, hand-offs that woke it).
    #[cfg(all(test, loom))]
    fn branch_counts(&self) -> (usize, usize) {
        let st = self.lock();
        (st.parked, st.woke)
    }
}
