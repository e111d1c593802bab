//! Placeholder: the balancing-models issue (#7) replaces this crate's contents.
