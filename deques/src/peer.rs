//! Placeholder: the deques issue (#2) replaces this module.
