//! [`CycleOptions`]: the bounds of a mark cycle's barrier queue, the
//! back-pressure a mutator thread meets beyond them, and where incremental
//! steps run (on every worker, on the calling thread, or the whole cycle
//! on one thread).

use crate::satb::BUFFER_CAPACITY;

/// What a mutator thread does when it hands off a full barrier buffer and
/// the cycle's queue is at its bound ([`CycleOptions::buffers_per_thread`]):
/// the mutator writes faster than the markers mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Backpressure {
    /// The thread helps mark, as Go's mark assists do: if no other thread
    /// marks for the cycle at that moment (no background marking, no step
    /// in progress), it runs an incremental step of
    /// [`CycleOptions::assist_budget`] objects itself, on its own thread,
    /// which takes the waiting buffers; otherwise it waits until the
    /// marking thread has taken buffers. Never waits for a thread that is
    /// not marking. The default.
    #[default]
    Assist,
    /// The thread waits until the background marking, or a step on another
    /// thread, has taken buffers. For runtimes whose marking runs on other
    /// threads than their mutators: a thread that waits for its own next
    /// step waits forever.
    Wait,
}

/// The bounds of a mark cycle's barrier queue, its back-pressure, and
/// where its incremental steps run.
///
/// The queue holds at most `buffers_per_thread × (workers + buffers held)`
/// buffers handed off and not yet marked from, and keeps at most as many
/// empty ones for reuse: its memory is bounded by a multiple of the numbers
/// of workers and of mutator threads, whatever the write rate. Entries
/// whose objects are already marked are filtered out when a buffer is
/// handed off (as G1 does); a buffer filtered down to half its capacity
/// or less is kept by its thread instead of being queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CycleOptions {
    /// Buffers that may wait handed off per worker and per buffer held
    /// (each holds [`MutatorBuffer::CAPACITY`](crate::MutatorBuffer::CAPACITY)
    /// entries, 8 KiB). At least 1.
    pub buffers_per_thread: usize,
    /// What a thread does beyond the bound.
    pub backpressure: Backpressure,
    /// Objects an assisting thread scans per step
    /// ([`Backpressure::Assist`]).
    pub assist_budget: usize,
    /// Whether an incremental step ([`MarkCycle::step`](crate::MarkCycle::step),
    /// an assist) runs on every worker, the calling thread and the GC
    /// workers sharing its budget, instead of on the calling thread alone:
    /// for a runtime that stops its mutator for each step (as Lua's
    /// incremental collector does) and wants the step's pause short and
    /// its marking parallel. Off by default (V8's incremental marking runs
    /// on the mutator's thread).
    pub parallel_steps: bool,
    /// Whether mutator threads may allocate black during the cycle
    /// ([`MutatorBuffer::allocate_black`](crate::MutatorBuffer::allocate_black)).
    /// The snapshot-at-the-beginning barrier needs it; a runtime with the
    /// incremental-update barrier that allocates white (as Lua does) turns
    /// it off. Off, `allocate_black` is refused, so nothing but the
    /// cycle's own marking writes the mark store while the cycle runs: a
    /// step that runs on one thread (without `parallel_steps`, or with one
    /// worker) then marks through
    /// [`MarkStore::try_mark_unshared`](crate::MarkStore::try_mark_unshared),
    /// plain loads and stores, as a collection with one worker does,
    /// rather than an atomic read-modify-write per object. On by default.
    pub black_allocation: bool,
    /// Whether the whole cycle runs on the thread that calls it, alone:
    /// every step (whatever `parallel_steps` says), an assist, the
    /// background marking (on its coordinator thread) and the remark, as
    /// a collection with [`Collection::solo`](crate::Collection::solo)
    /// does. The other workers are never woken. For a heap too small to
    /// pay for waking them: a cycle marks in many short steps, so it
    /// gains from parallel workers only on a larger heap than one
    /// collection does, and the runtime, which knows its heap and its
    /// step sizes, decides at the cycle's start. Off by default.
    pub solo: bool,
}

impl Default for CycleOptions {
    fn default() -> CycleOptions {
        CycleOptions {
            buffers_per_thread: 4,
            backpressure: Backpressure::Assist,
            assist_budget: 4 * BUFFER_CAPACITY,
            parallel_steps: false,
            black_allocation: true,
            solo: false,
        }
    }
}
