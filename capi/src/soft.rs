//! The runtime's soft-reference policy (`sm_soft_policy`), checked, in
//! the engine's form.

use stealmark_marker::model::{SoftRefPolicy, SoftRefs};
use stealmark_marker::ObjRef;

use crate::status::{Error, SM_ERR_CONFIG};
use crate::types::{sm_soft_policy, SM_SOFT_ASK, SM_SOFT_CLEAR_ALL, SM_SOFT_KEEP_ALL};

/// The soft-reference policy's `keep` callback.
pub(crate) struct AskSoft<'a>(
    &'a sm_soft_policy,
    unsafe extern "C" fn(*mut std::ffi::c_void, usize) -> bool,
);

// SAFETY: the header requires `keep` to be callable from any GC worker
// thread, several at once, with its context.
unsafe impl Sync for AskSoft<'_> {}

impl SoftRefPolicy for AskSoft<'_> {
    fn keep(&self, referent: ObjRef) -> bool {
        // SAFETY: a present callback, called as the header documents.
        unsafe { (self.1)(self.0.ctx, referent.word()) }
    }
}

/// A runtime's soft-reference policy, checked.
pub(crate) enum Soft<'a> {
    /// `SM_SOFT_CLEAR_ALL`.
    ClearAll,
    /// `SM_SOFT_KEEP_ALL`.
    KeepAll,
    /// `SM_SOFT_ASK`: the runtime's `keep` callback.
    Ask(AskSoft<'a>),
}

impl<'a> Soft<'a> {
    /// Checks `policy`: a known mode, a `keep` callback for `SM_SOFT_ASK`.
    pub(crate) fn new(policy: &'a sm_soft_policy) -> Result<Soft<'a>, Error> {
        match policy.mode {
            SM_SOFT_CLEAR_ALL => Ok(Soft::ClearAll),
            SM_SOFT_KEEP_ALL => Ok(Soft::KeepAll),
            SM_SOFT_ASK => Ok(Soft::Ask(AskSoft(
                policy,
                policy.keep.ok_or_else(|| Error::null("soft.keep"))?,
            ))),
            m => Err(Error::new(
                SM_ERR_CONFIG,
                format!("soft.mode {m} is not one of SM_SOFT_*"),
            )),
        }
    }

    /// The engine's form.
    pub(crate) fn refs(&self) -> SoftRefs<'_> {
        match self {
            Soft::ClearAll => SoftRefs::ClearAll,
            Soft::KeepAll => SoftRefs::KeepAll,
            Soft::Ask(ask) => SoftRefs::Ask(ask),
        }
    }
}
