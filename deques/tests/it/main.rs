//! The crate's integration tests, one binary: a module per topic.

mod copies;
mod growable;
mod limits;
mod model;
mod stress;
