//! The engine of the configured deque kind behind its type.

use std::any::Any;

use stealmark_deques::{DequeVisitor, WorkDeque};

use crate::config::MarkerConfig;
use crate::worker::Engine;

/// The engine of the configured deque kind, an `Engine<D>` for the `D` that
/// [`DequeKind::dispatch`](crate::DequeKind::dispatch) picks for
/// [`MarkerConfig::deque`], behind its type. A collection dispatches on the
/// kind again and recovers the `Engine<D>` with one type check
/// ([`Engines::get`]); everything after it is monomorphised for `D`.
pub(crate) struct Engines(Box<dyn Any + Send + Sync>);

impl Engines {
    pub(crate) fn new(config: &MarkerConfig) -> Engines {
        /// Makes the engine of one deque kind.
        struct New<'a>(&'a MarkerConfig);
        impl DequeVisitor for New<'_> {
            type Output = Engines;
            fn visit<D: WorkDeque>(self) -> Engines {
                Engines(Box::new(Engine::<D>::new(self.0)))
            }
        }
        config.deque.dispatch(New(config))
    }

    /// The engine, which must be an `Engine<D>`: `D` is the type that
    /// dispatching on the kind these engines were made for gives.
    pub(crate) fn get<D: WorkDeque>(&mut self) -> &mut Engine<D> {
        self.0
            .downcast_mut()
            .expect("the engine was made for the configured deque kind")
    }
}
