//! The crate's integration tests, one binary: a module per topic.

mod berenbrink;
mod mitzenmacher;
mod real;
