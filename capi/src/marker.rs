//! The marker handle (`sm_marker`): the engine and what the report
//! functions need, behind a lock; and the refusals of a marker that cannot
//! serve a call.

use std::any::Any;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard, TryLockError};

use stealmark_marker::Marker;

use crate::status::{panic_text, Error, SM_ERR_BUSY, SM_ERR_PANIC, SM_ERR_POISONED};

/// The marker handle (`sm_marker`): the engine and what the report
/// functions need, behind a lock that turns concurrent misuse into
/// `SM_ERR_BUSY`.
#[allow(non_camel_case_types)]
pub struct sm_marker {
    state: RwLock<State>,
}

/// A marker's state.
pub(crate) struct State {
    /// The engine; `None` while a mark cycle holds it.
    pub(crate) marker: Option<Marker>,
    /// An engine panic happened: every call but `sm_marker_free` fails.
    pub(crate) poisoned: bool,
    /// Collections begun; a report names the one it belongs to.
    pub(crate) collection: u64,
    /// Whether the last collection succeeded (its report is readable).
    pub(crate) valid: bool,
    /// The last collection's mark mode (`SM_MARKS_*`).
    pub(crate) mode: u32,
    /// The last collection's dense bound (side bitmap), else 0.
    pub(crate) dense_bound: usize,
    /// Whether the last collection or cycle ran on the calling thread
    /// alone.
    pub(crate) solo: bool,
    /// Collections after one that marked fewer objects run solo.
    pub(crate) solo_below: u64,
    /// Objects the last successful collection marked.
    pub(crate) last_live: Option<u64>,
}

impl State {
    /// Poisons the marker after an engine panic with `payload`; the error
    /// to return ([`SM_ERR_PANIC`]).
    pub(crate) fn poison(&mut self, payload: &(dyn Any + Send)) -> Error {
        self.poisoned = true;
        Error::new(
            SM_ERR_PANIC,
            format!(
                "the engine panicked (the marker is now poisoned): {}",
                panic_text(payload)
            ),
        )
    }

    /// The engine, which [`sm_marker::read`] has checked is not lent to a
    /// cycle.
    pub(crate) fn engine(&self) -> &Marker {
        self.marker
            .as_ref()
            .expect("sm_marker::read refuses a marker that a cycle holds")
    }
}

impl sm_marker {
    /// A marker around `engine`, before its first collection.
    pub(crate) fn new(engine: Marker, solo_below: u64) -> sm_marker {
        sm_marker {
            state: RwLock::new(State {
                marker: Some(engine),
                poisoned: false,
                collection: 0,
                valid: false,
                mode: 0,
                dense_bound: 0,
                solo: false,
                solo_below,
                last_live: None,
            }),
        }
    }

    /// The state, for a collection: `SM_ERR_BUSY` if another call holds it.
    pub(crate) fn write(&self) -> Result<RwLockWriteGuard<'_, State>, Error> {
        match self.state.try_write() {
            Ok(g) => Ok(g),
            Err(TryLockError::WouldBlock) => Err(busy()),
            Err(TryLockError::Poisoned(_)) => Err(poisoned()),
        }
    }

    /// The state, for reading a report.
    pub(crate) fn read(&self) -> Result<RwLockReadGuard<'_, State>, Error> {
        let state = match self.state.try_read() {
            Ok(g) => g,
            Err(TryLockError::WouldBlock) => return Err(busy()),
            Err(TryLockError::Poisoned(_)) => return Err(poisoned()),
        };
        if state.poisoned {
            return Err(poisoned());
        }
        if state.marker.is_none() {
            return Err(lent());
        }
        Ok(state)
    }

    /// The state, waiting for readers of a report to finish (a cycle
    /// giving the engine back).
    pub(crate) fn write_blocking(&self) -> RwLockWriteGuard<'_, State> {
        self.state
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The refusal of a marker that a mark cycle holds.
pub(crate) fn lent() -> Error {
    Error::new(
        SM_ERR_BUSY,
        "a mark cycle holds this marker: finish or free the cycle (sm_cycle_finish, sm_cycle_free) first",
    )
}

/// The refusal of a marker that another call holds.
fn busy() -> Error {
    Error::new(SM_ERR_BUSY, "the marker is in use by another call (a collection running on another thread, or a callback re-entering the engine)")
}

/// The refusal of a poisoned marker.
pub(crate) fn poisoned() -> Error {
    Error::new(
        SM_ERR_POISONED,
        "the marker was poisoned by an earlier engine panic; only sm_marker_free may be called",
    )
}
