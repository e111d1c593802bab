//! [`CycleError`]: why a mark cycle, or one of its calls, refused or
//! failed; and the panic payloads it turns into messages.

use std::fmt;

use crate::driver::Panic;

/// Why a mark cycle, or one call on it, could not do what was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CycleError {
    /// Mutator buffers were still held at the remark: leaked with
    /// `std::mem::forget` (a borrowed [`MutatorBuffer`](crate::MutatorBuffer)),
    /// or not yet detached (an [`OwnedMutator`](crate::OwnedMutator)). The
    /// references they recorded cannot be read, so the marking could miss
    /// objects reachable at the cycle's start.
    LeakedBuffers {
        /// Buffers still counted as held.
        held: usize,
    },
    /// A step, the background marking or the remark of this cycle
    /// panicked (a heap whose `ObjectModel` broke its contract): the cycle
    /// is poisoned, its marks are incomplete, and every later call on it
    /// refuses. The marker itself stays usable for the next collection.
    Panicked {
        /// The panic's message, when it had one.
        message: String,
    },
    /// The cycle has ended (its remark began, or it was abandoned): a
    /// barrier handle used after that, or a second remark.
    Ended,
    /// The background marking already runs: overlapping or nested
    /// background phases of one cycle are refused.
    BackgroundRunning,
    /// The coordinator thread of the background marking could not be
    /// spawned.
    Spawn {
        /// The operating system's error.
        message: String,
    },
    /// An object allocated black in a cycle started with
    /// [`CycleOptions::black_allocation`](crate::CycleOptions::black_allocation)
    /// off: the object is not marked.
    BlackAllocationOff,
}

impl fmt::Display for CycleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CycleError::LeakedBuffers { held } => write!(
                f,
                "the remark found {held} mutator buffer(s) of this mark cycle still held \
                 (leaked, or not detached): the overwritten references they recorded are lost"
            ),
            CycleError::Panicked { message } => write!(
                f,
                "a part of this mark cycle panicked ({message}): the cycle is poisoned and \
                 cannot report a result"
            ),
            CycleError::Ended => write!(f, "this mark cycle has ended (remarked or abandoned)"),
            CycleError::BackgroundRunning => write!(
                f,
                "the background marking of this mark cycle already runs \
                 (overlapping or nested background phases are refused)"
            ),
            CycleError::Spawn { message } => write!(
                f,
                "could not spawn the background marking's coordinator thread: {message}"
            ),
            CycleError::BlackAllocationOff => write!(
                f,
                "an object allocated black in a mark cycle started with black allocation off \
                 (CycleOptions::black_allocation): it is not marked"
            ),
        }
    }
}

impl std::error::Error for CycleError {}

/// The message of a panic's payload (a `&str` or a `String`), or a
/// placeholder.
pub(crate) fn panic_message(payload: &Panic) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}
