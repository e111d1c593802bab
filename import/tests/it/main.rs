//! The crate's integration tests, one binary: a module per topic.

mod hotspot_resurrected;
mod import_common;
mod import_hprof;
mod import_v8;
mod input_stream;
mod v8_semantics;
