//! Status codes, the thread's last error message, and the guard that keeps
//! every panic on the Rust side of the C boundary.

use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The result of every call (`sm_status` in the header).
#[allow(non_camel_case_types)]
pub type sm_status = i32;

/// Success.
pub const SM_OK: sm_status = 0;
/// A required pointer argument was null.
pub const SM_ERR_NULL: sm_status = 1;
/// The configuration is invalid.
pub const SM_ERR_CONFIG: sm_status = 2;
/// The mark-bit description is invalid.
pub const SM_ERR_MARKS: sm_status = 3;
/// A callback broke its contract during a collection.
pub const SM_ERR_CONTRACT: sm_status = 4;
/// The engine panicked; the marker is poisoned.
pub const SM_ERR_PANIC: sm_status = 5;
/// The marker was poisoned by an earlier panic.
pub const SM_ERR_POISONED: sm_status = 6;
/// The marker is in use by another call.
pub const SM_ERR_BUSY: sm_status = 7;
/// A report used after the next collection on its marker began.
pub const SM_ERR_STALE: sm_status = 8;
/// An argument out of range.
pub const SM_ERR_RANGE: sm_status = 9;
/// The engine could not allocate or start a thread.
pub const SM_ERR_RESOURCE: sm_status = 10;

/// The name of each status code, indexed by the code.
const NAMES: [&CStr; 11] = [
    c"SM_OK",
    c"SM_ERR_NULL",
    c"SM_ERR_CONFIG",
    c"SM_ERR_MARKS",
    c"SM_ERR_CONTRACT",
    c"SM_ERR_PANIC",
    c"SM_ERR_POISONED",
    c"SM_ERR_BUSY",
    c"SM_ERR_STALE",
    c"SM_ERR_RANGE",
    c"SM_ERR_RESOURCE",
];

/// A failed call: its status and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The status code (never [`SM_OK`]).
    pub status: sm_status,
    /// What was wrong, naming the argument or callback.
    pub message: String,
}

impl Error {
    /// An error with `status` and `message`.
    pub fn new(status: sm_status, message: impl Into<String>) -> Error {
        Error {
            status,
            message: message.into(),
        }
    }

    /// [`SM_ERR_NULL`] for the argument `what`.
    pub fn null(what: &str) -> Error {
        Error::new(SM_ERR_NULL, format!("{what} is NULL"))
    }
}

thread_local! {
    /// The message of this thread's last failed call.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Records `error` as this thread's last error and returns its status.
pub(crate) fn fail(error: Error) -> sm_status {
    // An interior NUL cannot come from the messages built here; replace it
    // rather than lose the message.
    let text = CString::new(error.message.replace('\0', "?")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
    error.status
}

/// Runs an exported function's body: its error becomes a status and the
/// thread's last error; a panic is caught (it never unwinds into C) and
/// becomes [`SM_ERR_PANIC`].
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Error>) -> sm_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => SM_OK,
        Ok(Err(e)) => fail(e),
        Err(payload) => fail(Error::new(
            SM_ERR_PANIC,
            format!("the engine panicked: {}", panic_text(&*payload)),
        )),
    }
}

/// The text of a panic payload, if it has one.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_owned()
    }
}

/// The message of the last call on this thread that did not return
/// [`SM_OK`], or `""`. Valid until the next failing call on this thread.
#[no_mangle]
pub extern "C" fn sm_last_error() -> *const c_char {
    // The pointer stays valid until `fail` replaces the string, which only
    // a later call on this thread does. A thread-local that is being
    // destroyed cannot be reached from C code on the same thread.
    LAST_ERROR
        .try_with(|e| e.borrow().as_ptr())
        .unwrap_or(c"".as_ptr())
}

/// A static name of a status code, or `"unknown"`.
#[no_mangle]
pub extern "C" fn sm_status_name(status: sm_status) -> *const c_char {
    usize::try_from(status)
        .ok()
        .and_then(|i| NAMES.get(i))
        .map_or(c"unknown".as_ptr(), |n| n.as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last() -> String {
        // SAFETY: `sm_last_error` returns a NUL-terminated string that lives
        // until the next failing call on this thread.
        unsafe { CStr::from_ptr(sm_last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let s = guard(|| panic!("boom in a test"));
        assert_eq!(s, SM_ERR_PANIC);
        assert!(last().contains("boom in a test"), "{}", last());
        assert_eq!(guard(|| Err(Error::null("marker"))), SM_ERR_NULL);
        assert_eq!(last(), "marker is NULL");
        assert_eq!(guard(|| Ok(())), SM_OK);
        assert_eq!(last(), "marker is NULL", "success keeps the last error");
    }

    #[test]
    fn every_status_has_its_name() {
        let name = |s| {
            // SAFETY: static NUL-terminated strings.
            let c = unsafe { CStr::from_ptr(sm_status_name(s)) };
            c.to_str().unwrap()
        };
        assert_eq!(name(SM_OK), "SM_OK");
        assert_eq!(name(SM_ERR_RESOURCE), "SM_ERR_RESOURCE");
        assert_eq!(name(SM_ERR_CONTRACT), "SM_ERR_CONTRACT");
        assert_eq!(name(-1), "unknown");
        assert_eq!(name(11), "unknown");
    }
}
