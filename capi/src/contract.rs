//! Contract violations found in what the runtime's callbacks return.
//!
//! A callback runs on a GC worker, deep inside the engine's mark loop, which
//! has no error path: a broken contract there makes the worker panic, and
//! the engine re-raises the panic on the thread that called the collection.
//! The panic's payload is a [`Violation`], so that the C boundary can tell
//! it from a bug in the engine ([`SM_ERR_CONTRACT`](crate::status::SM_ERR_CONTRACT),
//! the marker stays usable, against [`SM_ERR_PANIC`](crate::status::SM_ERR_PANIC),
//! the marker is poisoned). The panic never crosses C frames: it is raised
//! after the callback has returned.

use std::sync::Once;

/// What a callback got wrong, as the panic payload that reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation(pub String);

/// Reports a broken contract: panics with a [`Violation`] payload.
#[cold]
#[inline(never)]
pub(crate) fn violated(message: String) -> ! {
    quiet_violations();
    std::panic::panic_any(Violation(message))
}

/// Installs, once, a panic hook that stays silent for [`Violation`]s (they
/// become a status and a message, not noise on the runtime's stderr) and
/// hands every other panic to the hook that was there before.
fn quiet_violations() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<Violation>().is_none() {
                previous(info);
            }
        }));
    });
}
