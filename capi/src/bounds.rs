//! [`Bounds`]: the heap bounds that every reference a runtime hands the
//! engine must lie in, if the runtime gave them.

use stealmark_marker::ObjRef;

use crate::status::{Error, SM_ERR_RANGE};
use crate::types::sm_object_model;

/// The heap bounds every reference must lie in: `[lo, lo + span)`, the
/// whole address space (but its last byte) when the runtime gave none, so
/// that the check is one subtraction and one comparison either way.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    lo: usize,
    span: usize,
}

impl Bounds {
    /// The bounds of `model` (none unless `heap_end > heap_start`).
    pub(crate) fn of(model: &sm_object_model) -> Bounds {
        if model.heap_end > model.heap_start {
            Bounds {
                lo: model.heap_start,
                span: model.heap_end - model.heap_start,
            }
        } else {
            Bounds::of_none()
        }
    }

    /// No bounds.
    pub(crate) fn of_none() -> Bounds {
        Bounds {
            lo: 0,
            span: usize::MAX,
        }
    }

    /// Whether the runtime gave bounds.
    fn given(self) -> bool {
        self.lo != 0 || self.span != usize::MAX
    }

    /// `word` as a reference, or an `SM_ERR_RANGE` error naming `what`
    /// (for references the runtime passes in a call, not a callback).
    pub(crate) fn checked(self, word: usize, what: &str) -> Result<ObjRef, Error> {
        self.get(word).ok_or_else(|| {
            Error::new(
                SM_ERR_RANGE,
                format!("{what} {word:#x} is not a multiple of 8 inside the heap bounds"),
            )
        })
    }

    /// `word` as a reference, if it is one inside the bounds.
    #[inline(always)]
    pub(crate) fn get(self, word: usize) -> Option<ObjRef> {
        ObjRef::from_word(word).filter(|_| word.wrapping_sub(self.lo) < self.span)
    }

    /// Why `word`, which `what` gave, is not a reference inside the bounds.
    #[cold]
    #[inline(never)]
    pub(crate) fn why(self, word: usize, what: String) -> String {
        if ObjRef::from_word(word).is_some() && self.given() {
            let (lo, hi) = (self.lo, self.lo + self.span);
            format!("{what} gave the reference {word:#x}, outside the heap [{lo:#x}, {hi:#x})")
        } else {
            format!("{what} gave the reference {word:#x}, which is null or not a multiple of 8")
        }
    }
}
