//! Placeholder: the marker issue (#4) replaces this crate's contents.
